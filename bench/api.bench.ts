// Authenticated reads and the token endpoint against a bare Fastify "hello" baseline, on SQLite.
// Targets: GET /v1/shipments/{id} with an API key ≥ 0.5 of the baseline's requests/s, with a bearer
// JWT ≥ 0.4, p99 ≤ 10 ms at 10 connections; the token endpoint ≥ 1,000 tokens/s.
import { accessToken, api, atLeast, atLeastShare, atMostMs, CONNECTIONS, load, loadTable, meanOf, startApp, startBaseline, targetTable, tokenForm, BENCH_SHIPMENT, baselineMean, baselineSentence } from './lib.ts';

const shipment = BENCH_SHIPMENT;
/** Shipments created per second during the informational read under writes. */
const WRITES_PER_SECOND = 200;

export async function run(): Promise<string> {
  const baseline = await startBaseline();
  const app = await startApp();
  try {
    // A few hundred shipments so the one read is not alone in its table.
    let id = '';
    for (let i = 0; i < 200; i++) id = (await api<{ id: string }>(app, 'POST', '/v1/shipments', shipment)).id;
    const jwt = await accessToken(app, 'read:shipments');
    const url = `${app.url}/v1/shipments/${id}`;

    // The app's first seconds under load pay for JIT compilation and heap growth, which the 1 s warm-up
    // of each scenario does not cover: unmeasured load on both credentials first, so that the
    // scenario measured first (API key) is not charged for it.
    await load('app warm-up (not reported)', { url, headers: { 'x-api-key': app.apiKey! }, expectStatus: 200, seconds: 2, warmupSeconds: 0 });
    await load('app warm-up (not reported)', { url, headers: { authorization: `Bearer ${jwt}` }, expectStatus: 200, seconds: 2, warmupSeconds: 0 });

    // The baseline is measured before and after the app, and the ratios use the mean of the two, so a
    // neighbour's load that comes or goes during the run skews both sides alike.
    const before = await load('baseline: bare Fastify GET / (before)', { url: baseline.url, server: baseline });
    // Each read is measured twice, interleaved (key, JWT, key, JWT), and its target uses the mean of
    // the two: the first scenario after the idle baseline run was sometimes charged for the app
    // warming up again, and a disturbance from elsewhere lands on one run, not on the credential.
    const read = (credential: 'X-API-Key' | 'Bearer JWT', round: number) =>
      load(`GET /v1/shipments/{id}, ${credential} (run ${round})`, {
        url,
        headers: credential === 'X-API-Key' ? { 'x-api-key': app.apiKey! } : { authorization: `Bearer ${jwt}` },
        expectStatus: 200,
        server: app,
      });
    const apiKeyRuns = [await read('X-API-Key', 1)];
    const bearerRuns = [await read('Bearer JWT', 1)];
    apiKeyRuns.push(await read('X-API-Key', 2));
    bearerRuns.push(await read('Bearer JWT', 2));
    const apiKey = meanOf('GET /v1/shipments/{id}, X-API-Key (mean of 2 runs)', apiKeyRuns);
    const bearer = meanOf('GET /v1/shipments/{id}, Bearer JWT (mean of 2 runs)', bearerRuns);
    // Not a target: the same read while shipments are created at a steady rate (each creation commits,
    // so the reads share SQLite's write traffic).
    const [underWrites] = await Promise.all([
      load(`GET /v1/shipments/{id}, X-API-Key, while ${WRITES_PER_SECOND} shipments/s are created (not a target; server CPU includes the writes)`, {
        url,
        headers: { 'x-api-key': app.apiKey! },
        expectStatus: 200,
        server: app,
      }),
      load('(writer, not reported)', {
        url: `${app.url}/v1/shipments`,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': app.apiKey! },
        nextBody: () => JSON.stringify(shipment),
        expectStatus: 201,
        connections: 1,
        rate: WRITES_PER_SECOND,
      }),
    ]);
    const token = await load('POST /oauth/token, client_credentials', {
      url: `${app.url}/oauth/token`,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: tokenForm(app, 'read:shipments'),
      expectStatus: 200,
      server: app,
    });
    const after = await load('baseline: bare Fastify GET / (after)', { url: baseline.url, server: baseline });

    const base = baselineMean(before, after);
    const checks = [
      atLeastShare('API key: req/s', apiKey.rps, base.rps, 0.5),
      atMostMs(`API key: p99 at ${CONNECTIONS} connections`, apiKey.p99, 10, base.p99),
      atLeastShare('JWT: req/s', bearer.rps, base.rps, 0.4),
      atMostMs(`JWT: p99 at ${CONNECTIONS} connections`, bearer.p99, 10, base.p99),
      atLeast('token endpoint: tokens/s', token.rps, 1000, base.rps, 'tokens/s'),
    ];
    return [
      '## API: authentication and the token endpoint',
      '',
      `The real app on a fresh SQLite file (WAL), logging every request at \`info\` to /dev/null, in its own process; autocannon at ${CONNECTIONS} connections in another. ` +
        'The shipment read is one of 200 in the table; the JWT carries `read:shipments`; the token endpoint issues one ES256 JWT per request. ' +
        'Each read is measured twice, interleaved (key, JWT, key, JWT); its target uses the mean of its two runs. ' +
        'Every read goes to the database (the key check is remembered for a second, docs/decisions.md); ' +
        `the row "while ${WRITES_PER_SECOND} shipments/s are created" shows the same read while commits go on beside it.`,
      '',
      loadTable([before, ...apiKeyRuns.flatMap((r, i) => [r, bearerRuns[i]!]), apiKey, bearer, underWrites, token, after], base),
      '',
      baselineSentence(base, "The last column divides the baseline's server CPU per request by the scenario's: on a shared machine it moves less than requests/s do."),
      '',
      targetTable(checks),
      '',
    ].join('\n');
  } finally {
    await Promise.all([baseline.stop(), app.stop()]);
  }
}

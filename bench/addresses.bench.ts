// Addresses: what the checks cost a shipment, and validating 250 addresses in one request against one.
// In-process (app.inject) on a SQLite file, so the numbers are the service's own work: the median of
// POST /v1/shipments beside the median of the two address checks it runs, and the median of
// POST /v1/addresses/validate with 1 and with 250 addresses (the data is loaded once per process).
// With `--against <rev>`, also POST /v1/shipments over HTTP beside the service of that revision, each
// started as an operator would (bench/revision.ts), in alternating rounds: what the checks add to a
// shipment is the ratio between the revision that brought them and the one before, e.g.
// `BENCH_ADDRESSES_THIS=50501f0 npm run bench -- addresses --against 50501f0^` ("this" side from a
// revision instead of the working tree).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../src/app.ts';
import { addressProblems } from '../src/addresses/service.ts';
import { createAccount, createApiKey } from '../src/auth/credentials.ts';
import { ALL_SCOPES } from '../src/auth/scopes.ts';
import { closeContext, openContext } from '../src/bootstrap.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { fmtMs, percentile, progress, table, time, type Timing } from './lib.ts';
import { prepareRevision, processCpuMs, ROOT, startService, thisTitle, type Service } from './revision.ts';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const FROM = { name: 'Lager Süd GmbH', street1: '4100 Distribution Dr', city: 'Memphis', state: 'TN', postalCode: '38118', country: 'US' };
const TO = { name: 'Ada Lovelace', street1: '350 Fifth Avenue', street2: 'Suite 2100', city: 'New York', state: 'NY', postalCode: '10118', country: 'US' };
export const SHIPMENT = { carrier: 'UPS', service: 'ground', from: FROM, to: TO, parcel: { weight: { value: 1.2, unit: 'kg' } } };
const MIX = [TO, FROM, { name: 'A', street1: '10 Downing St', city: 'London', postalCode: 'sw1a2aa', country: 'GB' }, { name: 'A', street1: 'Königstraße 1', city: 'Stuttgart', postalCode: '70173', country: 'DE' }, { name: 'A', street1: '24 Sussex Dr', city: 'Ottawa', state: 'ON', postalCode: 'K1M 1M4', country: 'CA' }];

const AGAINST = process.env.BENCH_AGAINST || undefined;
const THIS_REV = process.env.BENCH_ADDRESSES_THIS || undefined;
/** Side by side: rounds per service, and sequential requests per round (after as many to warm up). */
const SIDE_ROUNDS = 10;
const SIDE_REQUESTS = 100;

interface Side {
  title: string;
  root: string;
  service?: Service;
  /** One POST /v1/shipments on this side's connection, once its service runs. */
  post?: () => Promise<void>;
  latencies: number[];
  cpuMs: number;
}

/** POST /v1/shipments on this service and on the --against revision's, alternating rounds on one keep-alive connection each. */
async function shipmentsSideBySide(): Promise<string[]> {
  const prepared = [prepareRevision(AGAINST!, 'against'), ...(THIS_REV ? [prepareRevision(THIS_REV, 'this')] : [])];
  const against: Side = { title: prepared[0]!.revision.title, root: prepared[0]!.revision.root, latencies: [], cpuMs: 0 };
  const ours: Side = THIS_REV ? { title: prepared[1]!.revision.title, root: prepared[1]!.revision.root, latencies: [], cpuMs: 0 } : { title: thisTitle(), root: ROOT, latencies: [], cpuMs: 0 };
  const dir = mkdtempSync(join(tmpdir(), 'bench-addresses-side-'));
  const pools: Pool[] = [];
  try {
    const body = JSON.stringify(SHIPMENT);
    for (const [i, side] of [ours, against].entries()) {
      progress(`starting ${side.title}`);
      const sideDir = join(dir, String(i));
      mkdirSync(sideDir);
      side.service = await startService(side.root, `sqlite:${join(sideDir, 'a.db')}`, sideDir, {});
      const pool = new Pool(side.service.origin, { connections: 1 });
      pools.push(pool);
      const headers = { 'x-api-key': side.service.key, 'content-type': 'application/json' };
      side.post = async () => {
        const res = await pool.request({ method: 'POST', path: '/v1/shipments', headers, body });
        const text = await res.body.text();
        if (res.statusCode !== 201) throw new Error(`${side.title}: POST /v1/shipments answered ${res.statusCode}: ${text.slice(0, 200)}`);
      };
      for (let n = 0; n < SIDE_REQUESTS; n++) await side.post();
    }
    progress(`POST /v1/shipments side by side: ${SIDE_ROUNDS} rounds of ${SIDE_REQUESTS} on each`);
    for (let round = 0; round < SIDE_ROUNDS; round++) {
      for (const side of round % 2 ? [against, ours] : [ours, against]) {
        const post = side.post!;
        const cpu0 = processCpuMs(side.service!.child.pid);
        for (let n = 0; n < SIDE_REQUESTS; n++) {
          const t0 = performance.now();
          await post();
          side.latencies.push(performance.now() - t0);
        }
        side.cpuMs += processCpuMs(side.service!.child.pid) - cpu0;
      }
    }
  } finally {
    await Promise.all(pools.map((p) => p.close()));
    await Promise.all([ours, against].map((side) => side.service?.stop()));
    rmSync(dir, { recursive: true, force: true });
    for (const p of prepared) p.remove();
  }
  const median = (xs: number[]) => percentile(xs.toSorted((a, b) => a - b), 50);
  const p99 = (xs: number[]) => percentile(xs.toSorted((a, b) => a - b), 99);
  const cpuPer = (side: Side) => (side.cpuMs * 1000) / side.latencies.length;
  const ratio = median(ours.latencies) / median(against.latencies);
  return [
    `POST /v1/shipments (US → US) over loopback HTTP, each service started as an operator would on a fresh SQLite file (bench/revision.ts), one keep-alive connection each, sequential requests; ${SIDE_ROUNDS} rounds of ${SIDE_REQUESTS} alternating between the two after ${SIDE_REQUESTS} to warm up. Server CPU is the process's user + system time (all threads, from /proc, 10 ms ticks) over the rounds.`,
    '',
    table(
      ['service', 'requests', 'median', 'p99', 'server CPU / request'],
      [ours, against].map((side) => [side.title, side.latencies.length, fmtMs(median(side.latencies)), fmtMs(p99(side.latencies)), `${cpuPer(side).toFixed(0)} µs`]),
    ),
    '',
    table(
      ['target', 'measured', 'target', 'met'],
      [[`POST /v1/shipments, ${ours.title} ÷ ${against.title} (medians; server CPU ${(cpuPer(ours) / cpuPer(against)).toFixed(2)} ×)`, `${ratio.toFixed(3)} ×`, '≤ 1.05 ×', ratio <= 1.05 ? 'yes' : '**no**']],
    ),
    '',
  ];
}

/** Rounds taken together: their runs summed, the median of the rounds' medians, the worst p99. */
function pooled(rounds: Timing[]): Timing {
  const medians = rounds.map((r) => r.median).sort((a, b) => a - b);
  return {
    runs: rounds.reduce((n, r) => n + r.runs, 0),
    median: medians[Math.floor(medians.length / 2)]!,
    p99: Math.max(...rounds.map((r) => r.p99)),
    mean: rounds.reduce((n, r) => n + r.mean * r.runs, 0) / rounds.reduce((n, r) => n + r.runs, 0),
    min: Math.min(...rounds.map((r) => r.min)),
  };
}

export async function run(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-addresses-'));
  const config = loadConfig({ APP_ENV: 'development', DATABASE_URL: `sqlite:${join(dir, 'a.db')}`, LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: '0' }, 'bench');
  const ctx = await openContext(config, createLogger('silent'));
  const app = await buildApp(ctx);
  try {
    const account = await createAccount(ctx.db, 'bench');
    const { key } = await createApiKey(ctx.db, account.id, ALL_SCOPES, false);
    const headers = { 'x-api-key': key };
    const inject = async (url: string, payload: unknown, status: number) => {
      const res = await app.inject({ method: 'POST', url, headers, payload: payload as object });
      if (res.statusCode !== status) throw new Error(`${url} answered ${res.statusCode}: ${res.body.slice(0, 200)}`);
    };
    progress('POST /v1/shipments and the checks it runs');
    const shipment = await time(() => inject('/v1/shipments', SHIPMENT, 201), 400, 50);
    const checks = await time(() => addressProblems(FROM, 'from').length + addressProblems(TO, 'to').length, 4000, 200);
    progress('POST /v1/addresses/validate with 1 and with 250 addresses');
    // Interleaved in rounds, so that both requests see the same machine: a ratio of two runs taken
    // minutes apart on a shared machine measures the machine as much as the service.
    const many = Array.from({ length: 250 }, (_, i) => MIX[i % MIX.length]);
    const oneRuns: Timing[] = [];
    const allRuns: Timing[] = [];
    for (let round = 0; round < 8; round++) {
      oneRuns.push(await time(() => inject('/v1/addresses/validate', { addresses: [TO] }, 200), 60, round ? 5 : 50));
      allRuns.push(await time(() => inject('/v1/addresses/validate', { addresses: many }, 200), 10, round ? 1 : 10));
    }
    const one = pooled(oneRuns);
    const all = pooled(allRuns);
    // The same over loopback HTTP (one keep-alive connection), as a client sees a request.
    progress('the same over HTTP');
    await app.listen({ host: '127.0.0.1', port: 0 });
    const pool = new Pool(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, { connections: 1 });
    const post = async (body: string) => {
      const res = await pool.request({ method: 'POST', path: '/v1/addresses/validate', headers: { ...headers, 'content-type': 'application/json' }, body });
      await res.body.text();
      if (res.statusCode !== 200) throw new Error(`validate over HTTP answered ${res.statusCode}`);
    };
    const oneBody = JSON.stringify({ addresses: [TO] });
    const allBody = JSON.stringify({ addresses: many });
    const oneHttpRuns: Timing[] = [];
    const allHttpRuns: Timing[] = [];
    for (let round = 0; round < 8; round++) {
      oneHttpRuns.push(await time(() => post(oneBody), 60, round ? 5 : 50));
      allHttpRuns.push(await time(() => post(allBody), 10, round ? 1 : 10));
    }
    await pool.close();
    const oneHttp = pooled(oneHttpRuns);
    const allHttp = pooled(allHttpRuns);
    const share = checks.median / shipment.median;
    const ratio = all.median / one.median;
    return [
      '## Addresses',
      '',
      'In-process (`app.inject`) on a SQLite file: medians of sequential requests; the two validate requests alternate in 8 rounds (the median of the rounds\' medians).',
      '',
      table(
        ['scenario', 'runs', 'median', 'p99'],
        [
          ['POST /v1/shipments (US → US)', shipment.runs, fmtMs(shipment.median), fmtMs(shipment.p99)],
          ['the two address checks it runs (addressProblems × 2)', checks.runs, fmtMs(checks.median), fmtMs(checks.p99)],
          ['POST /v1/addresses/validate, 1 address', one.runs, fmtMs(one.median), fmtMs(one.p99)],
          ['POST /v1/addresses/validate, 250 addresses (US, GB, DE, CA)', all.runs, fmtMs(all.median), fmtMs(all.p99)],
          ['… over HTTP, 1 address', oneHttp.runs, fmtMs(oneHttp.median), fmtMs(oneHttp.p99)],
          ['… over HTTP, 250 addresses', allHttp.runs, fmtMs(allHttp.median), fmtMs(allHttp.p99)],
        ],
      ),
      '',
      table(
        ['target', 'measured', 'target', 'met'],
        [
          ['the checks\' share of POST /v1/shipments (measured in the same run, not against a revision)', `${(share * 100).toFixed(2)} %`, '≤ 5 %', share <= 0.05 ? 'yes' : '**no**'],
          ['250 addresses in one request vs one (in-process)', `${ratio.toFixed(1)} ×`, '≤ 20 ×', ratio <= 20 ? 'yes' : '**no**'],
          ['… over HTTP', `${(allHttp.median / oneHttp.median).toFixed(1)} ×`, '≤ 20 ×', allHttp.median / oneHttp.median <= 20 ? 'yes' : '**no**'],
        ],
      ),
      '',
      ...(AGAINST ? await shipmentsSideBySide() : ['Run with `--against <rev>` to measure POST /v1/shipments beside another revision.', '']),
    ].join('\n');
  } finally {
    await app.close();
    await closeContext(ctx);
    rmSync(dir, { recursive: true, force: true });
  }
}

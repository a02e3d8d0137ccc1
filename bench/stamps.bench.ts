// Stamp creation and verification against a bare Fastify "hello" baseline, on SQLite.
// Targets: POST /v1/stamps p99 ≤ 20 ms at 10 connections; POST /v1/stamps/verify ≥ 2,000/s.
import { openStorage } from '../src/db/index.ts';
import { isoNow, uuidv7 } from '../src/db/ids.ts';
import { api, atLeast, atMostMs, CONNECTIONS, load, loadTable, progress, SECONDS, startApp, startBaseline, targetTable, WARMUP_SECONDS, type BenchServer, type LoadResult, baselineMean, baselineSentence } from './lib.ts';

/** More shipments than the creation runs can use: each stamp needs a shipment without one. */
const SHIPMENTS = 40_000;

async function seedShipments(app: BenchServer): Promise<string[]> {
  const storage = await openStorage(app.databaseUrl!);
  const ids: string[] = [];
  try {
    const now = isoNow();
    const address = (postalCode: string) => JSON.stringify({ name: 'Bench', street1: '1 Main St', city: 'Berlin', postalCode, country: 'DE' });
    await storage.db.transaction().execute(async (tx) => {
      for (let i = 0; i < SHIPMENTS; i += 500) {
        const rows = Array.from({ length: Math.min(500, SHIPMENTS - i) }, () => {
          const id = uuidv7();
          ids.push(id);
          return {
            id, account_id: app.accountId!, carrier: 'UPS', service: 'ground', from_address: address('10115'), to_address: address('80331'),
            parcel: JSON.stringify({ weight: { value: 1, unit: 'kg' } }), reference: null, status: 'created', label_id: null, tracking_number: null, created_at: now, updated_at: now, recipient_search: '',
          };
        });
        await tx.insertInto('shipments').values(rows).execute();
      }
    });
  } finally {
    await storage.close();
  }
  return ids;
}

/** POST /v1/stamps with a new shipment id in every request body. */
function createLoad(name: string, app: BenchServer, next: () => string, seconds: number): Promise<LoadResult> {
  return load(name, {
    url: `${app.url}/v1/stamps`,
    method: 'POST',
    headers: { 'x-api-key': app.apiKey!, 'content-type': 'application/json' },
    nextBody: () => JSON.stringify({ shipmentId: next(), format: 'PDF' }),
    seconds,
    warmupSeconds: 0,
    expectStatus: 201,
    server: app,
  });
}

export async function run(): Promise<string> {
  const baseline = await startBaseline();
  const app = await startApp();
  try {
    progress(`seeding ${SHIPMENTS.toLocaleString('en-US')} shipments`);
    const shipments = await seedShipments(app);
    let cursor = 0;
    const next = () => {
      if (cursor >= shipments.length) throw new Error('out of shipments; raise SHIPMENTS');
      return shipments[cursor++]!;
    };
    const sample = await api<{ indicium: string }>(app, 'POST', '/v1/stamps', { shipmentId: next() });
    const verdict = await api<{ genuine: boolean }>(app, 'POST', '/v1/stamps/verify', { indicium: sample.indicium }, 200);
    if (!verdict.genuine) throw new Error('the sample stamp does not verify');

    const before = await load('baseline: bare Fastify GET / (before)', { url: baseline.url, server: baseline });
    progress(`POST /v1/stamps: ${WARMUP_SECONDS}s warm-up, ${SECONDS}s measured, ${CONNECTIONS} connections`);
    if (WARMUP_SECONDS > 0) await createLoad('POST /v1/stamps (warm-up)', app, next, WARMUP_SECONDS);
    const create = await createLoad('POST /v1/stamps, X-API-Key, new shipment each', app, next, SECONDS);
    const verifyRun = await load('POST /v1/stamps/verify, X-API-Key, genuine indicium', {
      url: `${app.url}/v1/stamps/verify`,
      method: 'POST',
      headers: { 'x-api-key': app.apiKey!, 'content-type': 'application/json' },
      body: JSON.stringify({ indicium: sample.indicium }),
      expectStatus: 200,
      server: app,
    });
    const after = await load('baseline: bare Fastify GET / (after)', { url: baseline.url, server: baseline });

    const base = baselineMean(before, after);
    const checks = [
      atMostMs(`POST /v1/stamps: p99 at ${CONNECTIONS} connections`, create.p99, 20, base.p99),
      atLeast('POST /v1/stamps/verify: verifications/s', verifyRun.rps, 2000, base.rps, 'verifications/s'),
    ];
    return [
      '## Stamps: creation and verification',
      '',
      `The real app on a fresh SQLite file (WAL), logging every request at \`info\` to /dev/null, in its own process; autocannon at ${CONNECTIONS} connections in another. ` +
        `Each creation stamps a different shipment (${SHIPMENTS.toLocaleString('en-US')} seeded): a serial from the account's counter, one ES256 signature and one insert in a transaction; ` +
        'the document itself is rendered on download, not on creation. Each verification checks one ES256 signature and reads the stamp\'s status.',
      '',
      loadTable([before, create, verifyRun, after], base),
      '',
      baselineSentence(base, `Stamps created in the run: ${cursor.toLocaleString('en-US')}.`),
      '',
      targetTable(checks),
      '',
    ].join('\n');
  } finally {
    await Promise.all([baseline.stop(), app.stop()]);
  }
}

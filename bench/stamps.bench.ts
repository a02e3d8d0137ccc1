// Issue 5: stamp creation and verification against a bare Fastify "hello" baseline, on SQLite.
// Targets: POST /v1/stamps p99 ≤ 20 ms at 10 connections; POST /v1/stamps/verify ≥ 2,000/s.
import autocannon from 'autocannon';
import { openStorage } from '../src/db/index.ts';
import { isoNow, uuidv7 } from '../src/db/ids.ts';
import { api, atLeast, atMostMs, CONNECTIONS, fmtMs, fmtRate, load, loadTable, progress, SECONDS, startApp, startBaseline, targetTable, WARMUP_SECONDS, type BenchServer, type LoadResult } from './lib.ts';

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
            parcel: JSON.stringify({ weight: { value: 1, unit: 'kg' } }), reference: null, status: 'created', label_id: null, tracking_number: null, created_at: now, updated_at: now,
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

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** autocannon with a new shipment id in every request body (lib's `load` sends one fixed body). */
async function createLoad(name: string, app: BenchServer, next: () => string, seconds: number): Promise<LoadResult> {
  let latencies = new Float64Array(1 << 16);
  let n = 0;
  const statuses = new Map<number, number>();
  const cpuBefore = await app.cpuMicros();
  const started = process.hrtime.bigint();
  const instance = autocannon({
    url: app.url,
    connections: CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/v1/stamps',
        headers: { 'x-api-key': app.apiKey!, 'content-type': 'application/json' },
        setupRequest: (req: Record<string, unknown>) => ({ ...req, body: JSON.stringify({ shipmentId: next(), format: 'PDF' }) }),
      } as never,
    ],
  });
  instance.on('response', (_c: unknown, status: number, _b: number, ms: number) => {
    if (n === latencies.length) {
      const grown = new Float64Array(n * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[n++] = ms;
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  });
  const result = await instance;
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const cpuPerRequest = ((await app.cpuMicros()) - cpuBefore) / n;
  const wrong = [...statuses].filter(([s]) => s !== 201);
  if (wrong.length || result.errors || result.timeouts) throw new Error(`${name}: unexpected statuses ${JSON.stringify(Object.fromEntries(wrong))}, ${result.errors} errors`);
  const sorted = latencies.subarray(0, n).sort();
  const r = { name, connections: CONNECTIONS, requests: n, seconds: wall, rps: n / wall, p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: sorted[n - 1]!, cpuPerRequest };
  progress(`${name}: ${fmtRate(r.rps)} req/s, p50 ${fmtMs(r.p50)}, p99 ${fmtMs(r.p99)}, server CPU ${cpuPerRequest.toFixed(0)} µs/request`);
  return r;
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

    const base: LoadResult = {
      ...before,
      name: 'baseline (mean of before and after)',
      rps: (before.rps + after.rps) / 2,
      p99: (before.p99 + after.p99) / 2,
      cpuPerRequest: ((before.cpuPerRequest ?? 0) + (after.cpuPerRequest ?? 0)) / 2,
    };
    const checks = [
      atMostMs(`POST /v1/stamps: p99 at ${CONNECTIONS} connections`, create.p99, 20, base.p99),
      atLeast('POST /v1/stamps/verify: verifications/s', verifyRun.rps, 2000, base.rps, 'verifications/s'),
    ];
    return [
      '## Stamps: creation and verification (issue 5)',
      '',
      `The real app on a fresh SQLite file (WAL), logging every request at \`info\` to /dev/null, in its own process; autocannon at ${CONNECTIONS} connections in another. ` +
        `Each creation stamps a different shipment (${SHIPMENTS.toLocaleString('en-US')} seeded): a serial from the account's counter, one ES256 signature and one insert in a transaction; ` +
        'the document itself is rendered on download, not on creation. Each verification checks one ES256 signature and reads the stamp\'s status.',
      '',
      loadTable([before, create, verifyRun, after], base),
      '',
      `Baseline for the ratios: ${Math.round(base.rps).toLocaleString('en-US')} req/s, p99 ${base.p99.toFixed(2)} ms (mean of before and after). ` +
        `Stamps created in the run: ${cursor.toLocaleString('en-US')}.`,
      '',
      targetTable(checks),
      '',
    ].join('\n');
  } finally {
    await Promise.all([baseline.stop(), app.stop()]);
  }
}

// Issue 3: `POST /v1/labels` at 10 connections against a bare Fastify "hello" baseline, on SQLite.
// Target: p99 ≤ 20 ms. Each label needs its own shipment (one active label per shipment), so the
// shipments are created first and every request takes the next one. The download of the PDF is
// measured too (it renders on every request), without a target.
import autocannon from 'autocannon';
import { api, atMostMs, CONNECTIONS, fmtMs, fmtRate, load, loadTable, progress, startApp, startBaseline, targetTable, type BenchServer, type LoadResult } from './lib.ts';

const shipment = {
  carrier: 'UPS',
  service: 'ground',
  from: { name: 'Jürgen Müller', company: 'Müller GmbH', street1: 'Hauptstraße 5', city: 'Berlin', postalCode: '10115', country: 'DE' },
  to: { name: 'Ελένη Παπαδοπούλου', street1: '350 Fifth Avenue', street2: 'Suite 2100', city: 'New York', state: 'NY', postalCode: '10118', country: 'US' },
  parcel: { weight: { value: 1.2, unit: 'kg' }, length: 30, width: 20, height: 10, dimensionUnit: 'cm' },
  reference: 'bench',
};

/** Labels per measured run (BENCH_LABELS, default 3000) after a warm-up of a tenth as many. */
const LABELS = Number(process.env.BENCH_LABELS ?? 3000);
const WARMUP_LABELS = Math.max(100, Math.round(LABELS / 10));

async function createShipments(app: BenchServer, n: number): Promise<string[]> {
  const ids: string[] = [];
  const worker = async () => {
    while (ids.length < n) {
      ids.push('');
      const at = ids.length - 1;
      ids[at] = (await api<{ id: string }>(app, 'POST', '/v1/shipments', shipment)).id;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return ids;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Exactly one POST /v1/labels per shipment id, 10 connections; throws on any status but 201. */
async function labelLoad(name: string, app: BenchServer, shipmentIds: string[]): Promise<LoadResult> {
  progress(`${name}: ${shipmentIds.length} labels, ${CONNECTIONS} connections`);
  const latencies = new Float64Array(shipmentIds.length);
  let sent = 0;
  let n = 0;
  const statuses = new Map<number, number>();
  const cpuBefore = await app.cpuMicros();
  const started = process.hrtime.bigint();
  const instance = autocannon({
    url: app.url,
    connections: CONNECTIONS,
    amount: shipmentIds.length,
    requests: [
      {
        method: 'POST',
        path: '/v1/labels',
        headers: { 'x-api-key': app.apiKey!, 'content-type': 'application/json' },
        setupRequest: (req: Record<string, unknown>) => ({ ...req, body: JSON.stringify({ shipmentId: shipmentIds[sent++ % shipmentIds.length] }) }),
      } as never,
    ],
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (n < latencies.length) latencies[n++] = ms;
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  });
  const result = await instance;
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const cpuAfter = await app.cpuMicros();
  const wrong = [...statuses].filter(([s]) => s !== 201);
  if (wrong.length || result.errors || result.timeouts) {
    throw new Error(`${name}: ${result.errors + result.timeouts} socket errors, unexpected statuses ${JSON.stringify(Object.fromEntries(wrong))}`);
  }
  const sorted = latencies.subarray(0, n).sort();
  const r: LoadResult = { name, connections: CONNECTIONS, requests: n, seconds: wall, rps: n / wall, p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: sorted[n - 1]!, cpuPerRequest: (cpuAfter - cpuBefore) / n };
  progress(`${name}: ${fmtRate(r.rps)} req/s, p50 ${fmtMs(r.p50)}, p99 ${fmtMs(r.p99)}, server CPU ${r.cpuPerRequest!.toFixed(0)} µs/request`);
  return r;
}

export async function run(): Promise<string> {
  const baseline = await startBaseline();
  const app = await startApp();
  try {
    progress(`creating ${LABELS + WARMUP_LABELS} shipments`);
    const ids = await createShipments(app, LABELS + WARMUP_LABELS);
    const before = await load('baseline: bare Fastify GET / (before)', { url: baseline.url, server: baseline });
    await labelLoad('warm-up', app, ids.slice(0, WARMUP_LABELS));
    const labels = await labelLoad('POST /v1/labels (fresh shipment each)', app, ids.slice(WARMUP_LABELS));
    const label = await api<{ id: string; url: string }>(app, 'GET', `/v1/labels/${(await api<{ label: { id: string } }>(app, 'GET', `/v1/shipments/${ids[ids.length - 1]}`)).label.id}?format=PDF`);
    const pdf = await load('GET label url, PDF 4x6 (renders each time)', { url: label.url.replace(/^https?:\/\/[^/]+/, app.url), expectStatus: 200, server: app });
    const after = await load('baseline: bare Fastify GET / (after)', { url: baseline.url, server: baseline });

    const mean = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? undefined : (a + b) / 2);
    const base: LoadResult = {
      ...before,
      name: 'baseline (mean of before and after)',
      rps: (before.rps + after.rps) / 2,
      p99: (before.p99 + after.p99) / 2,
      cpuPerRequest: mean(before.cpuPerRequest, after.cpuPerRequest),
    };
    const checks = [atMostMs(`POST /v1/labels: p99 at ${CONNECTIONS} connections`, labels.p99, 20, base.p99)];
    return [
      '## Labels: creating labels (issue 3)',
      '',
      `The real app on a fresh SQLite file (WAL), logging every request at \`info\` to /dev/null, in its own process; autocannon at ${CONNECTIONS} connections in another. ` +
        `${fmtRate(LABELS)} labels are created, each for its own pre-created UPS shipment (after a warm-up of ${fmtRate(WARMUP_LABELS)}): ` +
        'one transaction per label takes the next tracking serial, inserts the label with its stored label data and records it on the shipment. ' +
        'Creating a label does not render it; rendering happens on download, measured on the last row with the PDF link.',
      '',
      loadTable([before, labels, pdf, after], base),
      '',
      `Baseline for the ratios: ${fmtRate(base.rps)} req/s, p99 ${base.p99.toFixed(2)} ms, ${base.cpuPerRequest?.toFixed(0)} µs of server CPU per request (mean of before and after). ` +
        'The server CPU per request is the figure least disturbed by other work on a shared machine.',
      '',
      targetTable(checks),
      '',
    ].join('\n');
  } finally {
    await Promise.all([baseline.stop(), app.stop()]);
  }
}

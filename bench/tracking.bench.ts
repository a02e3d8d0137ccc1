// Tracking. (1) `GET …/trackingnumber?format=detailed` on a label with 100 events against the
// bare-Fastify baseline (target ≥ 0.4 × its req/s); (2) the same lookup's p99 with 10 thousand and
// with 1 million events in the table (target: within 1.2×); (3) ingestion through
// `POST /v1/tracking/events` in batches of 100 (target ≥ 5,000 events/s). On SQLite; the tables are
// filled by bench/seed-tracking.ts.
import autocannon from 'autocannon';
import { DatabaseSync } from 'node:sqlite';
import {
  api, atLeast, atLeastShare, CONNECTIONS, fmtMs, fmtRate, load, loadTable, progress, SECONDS, startApp, startBaseline, table, targetTable, WARMUP_SECONDS,
  type BenchServer, type LoadResult, type TargetCheck,
  BENCH_SHIPMENT,
  baselineMean,
  baselineSentence,
} from './lib.ts';
import { seedTracking } from './seed-tracking.ts';

const shipment = BENCH_SHIPMENT;

/** Alternating rounds of the p99 comparison between table sizes (BENCH_TRACKING_ROUNDS, default 3). */
const ROUNDS = Number(process.env.BENCH_TRACKING_ROUNDS ?? 3);
const SMALL = 10_000;
const LARGE = Number(process.env.BENCH_TRACKING_EVENTS ?? 1_000_000);
const BATCH = 100;
const LABELS_PER_BATCH = 10;

async function newLabel(app: BenchServer): Promise<{ id: string; trackingNumber: string }> {
  const s = await api<{ id: string }>(app, 'POST', '/v1/shipments', shipment);
  return api(app, 'POST', '/v1/labels', { shipmentId: s.id });
}

function countEvents(databaseUrl: string): number {
  const db = new DatabaseSync(databaseUrl.replace(/^sqlite:/, ''), { readOnly: true });
  try {
    return Number((db.prepare('select count(*) as n from tracking_events').get() as { n: number }).n);
  } finally {
    db.close();
  }
}

/** Fills the table up to `total` events (whole labels of 100, from a separate account). */
function fillTo(app: BenchServer, total: number): void {
  const have = countEvents(app.databaseUrl!);
  if (have >= total) return;
  progress(`seeding ${fmtRate(total - have)} events (table: ${fmtRate(have)} → ${fmtRate(total)})`);
  const r = seedTracking(app.databaseUrl!.replace(/^sqlite:/, ''), total - have);
  progress(`seeded in ${(r.ms / 1000).toFixed(1)} s`);
}

/**
 * `POST /v1/tracking/events` with 100 new events per request for 10 labels (10 each: nine in_transit,
 * then out_for_delivery, so every label changes status twice per batch and writes two shipment events).
 */
async function ingestLoad(name: string, app: BenchServer, labels: string[], seconds: number): Promise<LoadResult & { events: number }> {
  progress(`${name}: ${seconds}s, ${CONNECTIONS} connections, ${BATCH} events per request`);
  let k = 0;
  const t0 = Date.UTC(2026, 0, 1);
  const body = () => {
    const n = k++;
    const events = [];
    for (let l = 0; l < LABELS_PER_BATCH; l++) {
      const trackingNumber = labels[(n * LABELS_PER_BATCH + l) % labels.length]!;
      for (let e = 0; e < BATCH / LABELS_PER_BATCH; e++) {
        events.push({
          trackingNumber,
          status: e === BATCH / LABELS_PER_BATCH - 1 ? 'out_for_delivery' : 'in_transit',
          timestamp: new Date(t0 + (n * BATCH + l * 10 + e) * 1000).toISOString(),
          location: `Hub ${e}`,
        });
      }
    }
    return JSON.stringify({ events });
  };
  const latencies: number[] = [];
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
        path: '/v1/tracking/events',
        headers: { 'x-api-key': app.apiKey!, 'content-type': 'application/json' },
        setupRequest: (req: Record<string, unknown>) => ({ ...req, body: body() }),
      } as never,
    ],
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    latencies.push(ms);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  });
  const result = await instance;
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  const cpuPerRequest = ((await app.cpuMicros()) - cpuBefore) / latencies.length;
  const wrong = [...statuses].filter(([s]) => s !== 202);
  if (wrong.length || result.errors || result.timeouts) {
    throw new Error(`${name}: ${result.errors + result.timeouts} socket errors, unexpected statuses ${JSON.stringify(Object.fromEntries(wrong))}`);
  }
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)]!;
  const n = latencies.length;
  const r = { name, connections: CONNECTIONS, requests: n, seconds: wall, rps: n / wall, p50: pct(50), p90: pct(90), p99: pct(99), max: latencies[n - 1]!, cpuPerRequest, events: (n * BATCH) / wall };
  progress(`${name}: ${fmtRate(r.rps)} req/s = ${fmtRate(r.events)} events/s, p50 ${fmtMs(r.p50)}, p99 ${fmtMs(r.p99)}, server CPU ${cpuPerRequest.toFixed(0)} µs/request`);
  return r;
}

/** A label with 100 events from two carriers, sent as one batch; returns its detailed-lookup URL. */
async function labelWithHistory(app: BenchServer): Promise<string> {
  const label = await newLabel(app);
  const events = Array.from({ length: 100 }, (_, i) => ({
    trackingNumber: label.trackingNumber,
    status: i === 0 ? 'pre_transit' : i === 99 ? 'delivered' : 'in_transit',
    timestamp: new Date(Date.UTC(2026, 0, 1) + i * 3600_000).toISOString(),
    location: `Hub ${i}`,
    carrier: i < 80 ? 'UPS' : 'USPS',
  }));
  const accepted = await api<{ accepted: number }>(app, 'POST', '/v1/tracking/events', { events }, 202);
  if (accepted.accepted !== 100) throw new Error(`expected 100 events accepted, got ${accepted.accepted}`);
  const check = await api<{ events: unknown[] }>(app, 'GET', `/v1/labels/${label.id}/trackingnumber?format=detailed`);
  if (check.events.length !== 10) throw new Error('the detailed lookup should answer the 10 newest events');
  return `${app.url}/v1/labels/${label.id}/trackingnumber?format=detailed`;
}

export async function run(): Promise<string> {
  const baseline = await startBaseline();
  // Two instances, one per table size, measured in alternation so drift on a shared machine hits both.
  const app = await startApp({ env: { SANDBOX_TRACKING: '0' } });
  const big = await startApp({ env: { SANDBOX_TRACKING: '0' } });
  try {
    const lookupUrl = await labelWithHistory(app);
    const bigUrl = await labelWithHistory(big);
    fillTo(app, SMALL);
    fillTo(big, LARGE);
    const lookupOptions = { url: lookupUrl, headers: { 'x-api-key': app.apiKey! }, expectStatus: 200, server: app };
    // A query never asked before every time (an events_since bound before every event, so the same
    // events come back): no answer could be reused, and the label and its events are read each time.
    let queries = 0;
    const newQuery = (url: string) => {
      const { pathname, search } = new URL(url);
      return () => `${pathname}${search}&events_since=${new Date(Date.UTC(2000, 0, 1) + ++queries).toISOString()}`;
    };

    const before = await load('baseline: bare Fastify GET / (before)', { url: baseline.url, server: baseline });
    const detailed = await load(`GET …/trackingnumber?format=detailed (100 events on the label, ${fmtRate(SMALL)} in the table)`, lookupOptions);
    const full = await load('GET …/trackingnumber?format=carrier-specific&limit=100', { ...lookupOptions, url: `${lookupUrl.replace('detailed', 'carrier-specific')}&limit=100` });
    const unseen = await load('GET …/trackingnumber?format=detailed, a query never asked before each time (nothing reused)', { ...lookupOptions, nextPath: newQuery(lookupUrl) });
    const after = await load('baseline: bare Fastify GET / (after)', { url: baseline.url, server: baseline });
    // The small table's process has just served the loads above; the large one's only a few requests.
    // The same load, unmeasured, warms it as much (compiled code, heap, page cache), so the rounds below
    // compare table sizes, not a warm process with a cold one.
    await load(`warm-up, not measured: detailed lookup, ${fmtRate(LARGE)} events in the table`, { url: bigUrl, headers: { 'x-api-key': big.apiKey! }, expectStatus: 200, server: big });

    // Latency of the lookup itself: one connection, one request at a time, so no queueing.
    const smallRuns: LoadResult[] = [];
    const largeRuns: LoadResult[] = [];
    const bigCount = countEvents(big.databaseUrl!);
    for (let round = 1; round <= ROUNDS; round++) {
      smallRuns.push(await load(`detailed lookup, 1 connection, ${fmtRate(SMALL)} events in the table (round ${round})`, { ...lookupOptions, connections: 1 }));
      largeRuns.push(await load(`detailed lookup, 1 connection, ${fmtRate(bigCount)} events in the table (round ${round})`, { url: bigUrl, headers: { 'x-api-key': big.apiKey! }, expectStatus: 200, server: big, connections: 1 }));
    }
    const mean = (runs: LoadResult[], f: (r: LoadResult) => number) => runs.reduce((a, r) => a + f(r), 0) / runs.length;
    const smallP99 = mean(smallRuns, (r) => r.p99);
    const largeP99 = mean(largeRuns, (r) => r.p99);

    const ingestLabels = await Promise.all(Array.from({ length: 50 }, () => newLabel(app)));
    const numbers = ingestLabels.map((l) => l.trackingNumber);
    await ingestLoad('warm-up', app, numbers, WARMUP_SECONDS);
    const ingest = await ingestLoad(`POST /v1/tracking/events, ${BATCH} events per request`, app, numbers, SECONDS);

    const base = baselineMean(before, after);
    const growth = largeP99 / smallP99;
    const checks: TargetCheck[] = [
      atLeastShare('detailed lookup, label with 100 events: req/s', detailed.rps, base.rps, 0.4),
      {
        what: 'detailed lookup: baseline server CPU per request ÷ its own (the same share, measured in CPU time)',
        measured: `${detailed.cpuPerRequest!.toFixed(0)} µs vs ${base.cpuPerRequest!.toFixed(0)} µs`,
        target: '≥ 0.4',
        ratio: base.cpuPerRequest! / detailed.cpuPerRequest!,
        met: base.cpuPerRequest! / detailed.cpuPerRequest! >= 0.4,
      },
      atLeast(`ingestion in batches of ${BATCH}: events/s`, ingest.events, 5000, base.rps, 'events/s'),
      {
        what: `lookup p99 (mean of ${ROUNDS} rounds), ${fmtRate(bigCount)} vs ${fmtRate(SMALL)} events in the table`,
        measured: `${fmtMs(largeP99)} vs ${fmtMs(smallP99)}`,
        target: "≤ 1.2 × the small table's p99",
        ratio: growth,
        met: growth <= 1.2,
      },
    ];
    return [
      '## Tracking: lookup and ingestion',
      '',
      `The real app on fresh SQLite files (WAL), logging every request at \`info\` to /dev/null, in its own process; autocannon at ${CONNECTIONS} connections in another. ` +
        'The label looked up has 100 events (80 UPS, 20 USPS); `format=detailed` answers the 10 newest, read through the (label_id, timestamp, id) index. ' +
        `For the table sizes two instances run side by side, one with ${fmtRate(SMALL)} events and one with ${fmtRate(bigCount)}; the other events belong to other labels of another account, ` +
        'seeded by bench/seed-tracking.ts (100 per label). Their p99 is measured with one connection (the lookup itself, no queueing), ' +
        `alternating between the two instances for ${ROUNDS} rounds. ` +
        'Every lookup reads the label, its tracking state and its events from the database (three statements); the row "a query never asked before each time" sends an `events_since` bound ' +
        'before every event that is new on every request, the same work with a different query each time. ' +
        `Ingestion sends ${BATCH} new events per request for ${LABELS_PER_BATCH} labels (nine in_transit, then out_for_delivery each), so each request also changes ${LABELS_PER_BATCH * 2} shipment statuses and records as many shipment events, in one transaction.`,
      '',
      loadTable([before, detailed, full, unseen, after, ...smallRuns, ...largeRuns, ingest], base),
      '',
      table(['ingestion', 'requests/s', 'events/s', 'p50', 'p99'], [[ingest.name, fmtRate(ingest.rps), fmtRate(ingest.events), fmtMs(ingest.p50), fmtMs(ingest.p99)]]),
      '',
      baselineSentence(base, "On a shared machine the CPU-per-request ratio moves less than requests/s do. The p99 target's ratio is large table ÷ small table."),
      '',
      targetTable(checks),
      '',
    ].join('\n');
  } finally {
    await Promise.all([baseline.stop(), app.stop(), big.stop()]);
  }
}

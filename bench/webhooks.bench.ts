// Webhook delivery. A receiver in its own process answers 204 and notes when each request
// arrived. Baseline: raw undici POSTs of the same body to it, 32 in flight (the worker's concurrency).
// Then the full path in the real service (API and worker in one process, as `npm start` runs it, on a
// fresh SQLite file): shipments created through the API → domain event → fan-out → signed POST →
// attempt recorded. Targets: ≥ 0.3 × the baseline's deliveries/s with 100 subscribers; at a steady
// 200 events/s (one subscriber), event-to-delivery p50 ≤ 50 ms and p99 ≤ 250 ms.
import { ChildReceiver } from './child-receiver.ts';
import { createServer } from 'node:http';
import { DatabaseSync } from 'node:sqlite';
import { Agent, request } from 'undici';
import { api, atLeastShare, atMostMs, fmtMs, fmtRate, progress, SECONDS, startApp, table, targetTable, type BenchServer, BENCH_SHIPMENT } from './lib.ts';

const SUBSCRIBERS = 100;
const THROUGHPUT_EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 60);
const STEADY_RATE = 200;
const CONCURRENCY = 32;

const shipment = BENCH_SHIPMENT;

// ---------------------------------------------------------------------------------------------
// The receiver process

interface ReceiverStats {
  count: number;
  /** Arrival minus the event's `timestamp` (when it was written), ms, for requests with a webhook-id. */
  latencies: number[];
}

function runReceiver(): void {
  let count = 0;
  let latencies: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      count++;
      if (req.headers['webhook-id']) {
        const now = performance.timeOrigin + performance.now();
        latencies.push(now - Date.parse(JSON.parse(Buffer.concat(chunks).toString()).timestamp));
      }
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 10_000;
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
  process.on('message', (m: string) => {
    if (m === 'stats') process.send!({ stats: { count, latencies } satisfies ReceiverStats });
    if (m === 'count') process.send!({ count });
    if (m === 'reset') {
      count = 0;
      latencies = [];
      process.send!({ reset: true });
    }
    if (m === 'stop') server.close(() => process.exit(0));
  });
  process.on('disconnect', () => process.exit(0));
}

class ReceiverProcess extends ChildReceiver {
  constructor() {
    super(new URL(import.meta.url).pathname, '--webhook-receiver');
  }
  stats(): Promise<ReceiverStats> {
    return this.ask('stats');
  }
  count(): Promise<number> {
    return this.ask('count');
  }
}

// ---------------------------------------------------------------------------------------------
// Measurements

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

/** `total` POSTs of `body`, `CONCURRENCY` in flight, over one keep-alive agent. */
async function rawPosts(url: string, body: string, total: number): Promise<{ perSecond: number; p50: number; p99: number; cpuMicros: number }> {
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < total) {
        const i = next++;
        const t0 = performance.now();
        const res = await request(`${url}/s${i % SUBSCRIBERS}`, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json', 'webhook-id': `msg_${i}`, 'webhook-timestamp': '0', 'webhook-signature': 'v1,x' }, body });
        await res.body.dump();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await agent.close();
  latencies.sort((a, b) => a - b);
  return { perSecond: total / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), cpuMicros: (used.user + used.system) / total };
}

function succeededDeliveries(db: DatabaseSync): number {
  return Number((db.prepare("select count(*) as n from webhook_deliveries where status = 'succeeded'").get() as { n: number }).n);
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string, everyMs = 10): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Creates `count` shipments through the API, `parallel` at a time. */
async function createShipments(app: BenchServer, count: number, parallel = 8): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next++ < count) await api(app, 'POST', '/v1/shipments', shipment);
  }));
}

export async function run(): Promise<string> {
  const receiver = new ReceiverProcess();
  await receiver.ready();
  const target = `http://127.0.0.1:${receiver.port}`;
  const app = await startApp({ worker: true, env: { SANDBOX_TRACKING: '0', WORKER_IDLE_MS: '500' } });
  const db = new DatabaseSync(app.databaseUrl!.slice('sqlite:'.length), { readOnly: true });
  try {
    // One representative body: what the service sends for a shipment.created event.
    const sample = await api<Record<string, unknown>>(app, 'POST', '/v1/shipments', shipment);
    const body = JSON.stringify({ id: '01890a5d-ac96-774b-bcce-b302099a8057', type: 'shipment.created', timestamp: new Date().toISOString(), data: sample });
    const total = THROUGHPUT_EVENTS * SUBSCRIBERS;

    progress(`baseline: ${fmtRate(total)} raw undici POSTs, ${CONCURRENCY} in flight`);
    await rawPosts(target, body, 2000);
    const baseline = await rawPosts(target, body, total);
    progress(`baseline: ${fmtRate(baseline.perSecond)} POSTs/s, p50 ${fmtMs(baseline.p50)}, p99 ${fmtMs(baseline.p99)}, ${baseline.cpuMicros.toFixed(0)} µs CPU/POST`);

    const hooks: string[] = [];
    for (let i = 0; i < SUBSCRIBERS; i++) hooks.push((await api<{ id: string }>(app, 'POST', '/v1/webhooks', { url: `${target}/s${i}`, events: ['shipment.created'], secret: `whsec_${Buffer.from(`bench secret number ${i} for hooks`).toString('base64')}` })).id);

    // Progress is watched at the receiver; the service's database is read only to confirm that every
    // delivery was recorded (a reader in another process would slow its writer down).
    const recorded = (n: number) => until(() => succeededDeliveries(db) >= n, 120_000, `${n} recorded deliveries`, 25);
    const received = async (n: number) => (await receiver.count()) >= n;
    progress(`full path: warm-up, then ${THROUGHPUT_EVENTS} events × ${SUBSCRIBERS} subscribers`);
    await receiver.reset();
    await createShipments(app, 10);
    await until(() => received(10 * SUBSCRIBERS), 120_000, 'the warm-up deliveries');
    await recorded(10 * SUBSCRIBERS);
    const before = 10 * SUBSCRIBERS;
    await receiver.reset();
    const cpuBefore = await app.cpuMicros();
    const started = performance.now();
    await createShipments(app, THROUGHPUT_EVENTS);
    await until(() => received(total), 300_000, 'the measured deliveries');
    await recorded(before + total);
    const fullSeconds = (performance.now() - started) / 1000;
    const fullCpu = ((await app.cpuMicros()) - cpuBefore) / total;
    const full = total / fullSeconds;
    progress(`full path: ${fmtRate(full)} deliveries/s (${fmtRate(total)} in ${fullSeconds.toFixed(2)} s), ${fullCpu.toFixed(0)} µs service CPU/delivery`);

    // Steady rate: one subscriber, events written at STEADY_RATE per second for SECONDS.
    for (const id of hooks.slice(1)) await api(app, 'PATCH', `/v1/webhooks/${id}`, { active: false }, 200);
    await receiver.reset();
    await createShipments(app, 20);
    await until(() => received(20), 60_000, 'the second warm-up');
    await recorded(before + total + 20);
    await receiver.reset();
    const events = STEADY_RATE * SECONDS;
    progress(`steady: ${events} events at ${STEADY_RATE}/s, one subscriber`);
    const t0 = performance.now();
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < events; i++) {
      const due = t0 + (i * 1000) / STEADY_RATE;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      writes.push(api(app, 'POST', '/v1/shipments', shipment));
    }
    await Promise.all(writes);
    const achievedRate = events / ((performance.now() - t0) / 1000);
    await until(() => received(events), 60_000, 'the steady-rate deliveries');
    await recorded(before + total + 20 + events);
    const stats = await receiver.stats();
    const latencies = stats.latencies.sort((a, b) => a - b);
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    progress(`steady: ${fmtRate(achievedRate)} events/s written, event-to-delivery p50 ${fmtMs(p50)}, p99 ${fmtMs(p99)}`);

    const checks = [
      atLeastShare(`deliveries/s with ${SUBSCRIBERS} subscribers`, full, baseline.perSecond, 0.3, 'deliveries/s'),
      atMostMs(`event-to-delivery p50 at ${STEADY_RATE} events/s`, p50, 50, baseline.p50),
      atMostMs(`event-to-delivery p99 at ${STEADY_RATE} events/s`, p99, 250, baseline.p99),
    ];
    return [
      '## Webhooks: delivery throughput and latency',
      '',
      `A receiver in its own process answers 204. Baseline: ${fmtRate(total)} raw undici POSTs of a ${body.length}-byte event body, ${CONCURRENCY} in flight over keep-alive. ` +
        `Full path: the real service (API and worker in one process, SQLite file, signing with \`whsec_\` secrets) with ${SUBSCRIBERS} subscribers; ` +
        `${THROUGHPUT_EVENTS} shipments are created through the API and the clock stops when the last of the ${fmtRate(total)} deliveries is recorded as succeeded. ` +
        `Latency: one subscriber, shipments created at ${STEADY_RATE}/s for ${SECONDS} s; each delivery's latency is its arrival at the receiver minus the event's \`timestamp\` (when it was written in the shipment's transaction).`,
      '',
      table(
        ['scenario', 'count', 'rate', 'p50', 'p99', 'sender CPU per delivery', 'baseline CPU ÷ this CPU'],
        [
          ['baseline: raw undici POST', fmtRate(total), `${fmtRate(baseline.perSecond)} POSTs/s`, fmtMs(baseline.p50), fmtMs(baseline.p99), `${baseline.cpuMicros.toFixed(0)} µs`, '1.00'],
          [`full path, ${SUBSCRIBERS} subscribers`, fmtRate(total), `${fmtRate(full)} deliveries/s`, '–', '–', `${fullCpu.toFixed(0)} µs`, (baseline.cpuMicros / fullCpu).toFixed(2)],
          [`full path, steady ${STEADY_RATE} events/s, 1 subscriber`, fmtRate(latencies.length), `${fmtRate(achievedRate)} events/s written`, fmtMs(p50), fmtMs(p99), '–', '–'],
        ],
      ),
      '',
      targetTable(checks, 'baseline (raw POST; latency ratios to its p50/p99)'),
      '',
      `"Sender CPU" is the CPU time of the process that sends: the bench process for the baseline, the whole service (API, fan-out, claims, signing, sending, recording) for the full path. ` +
        'Its ratio is what the deliveries/s ratio would be if each sender had a core to itself, which is steadier than wall-clock rates on a shared machine.',
      '',
    ].join('\n');
  } finally {
    db.close();
    await app.stop();
    await receiver.stop();
  }
}

if (process.argv.includes('--webhook-receiver')) runReceiver();
else if (import.meta.main) console.log(await run());

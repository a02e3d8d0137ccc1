// Prometheus metrics (contract §17), with prom-client: one registry per thread. The process's metrics
// listener (METRICS_PORT, METRICS_HOST; src/main.ts) serves this thread's registry merged with the
// background jobs' thread's. Label values are methods, route templates, status codes, carriers,
// formats and outcomes: never an id, a tracking number, an address, an e-mail or a credential.
import { createServer, type Server } from 'node:http';
import { AggregatorRegistry, Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type MetricObjectWithValues, type MetricValue } from 'prom-client';

export const registry = new Registry();

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from a request arriving to its answer being sent, by method, route template and status code.',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const labelsCreated = new Counter({
  name: 'shipping_labels_created_total',
  help: 'Labels created (through the API or a batch), by carrier and the format asked for.',
  labelNames: ['carrier', 'format'] as const,
  registers: [registry],
});

export const renderDuration = new Histogram({
  name: 'shipping_render_duration_seconds',
  help: 'Time a render thread took to lay out and draw one document, by format (documents served from a cache are not drawn).',
  labelNames: ['format'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10, 30],
  registers: [registry],
});

export const webhookDeliveries = new Counter({
  name: 'shipping_webhook_deliveries_total',
  help: 'Webhook delivery attempts by outcome: succeeded, retrying (failed, another attempt is scheduled) or failed (given up).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});
// Every outcome has its series from the start, at 0, so that `rate()` and alerts on it see the first
// failure as an increase rather than a series appearing.
for (const outcome of ['succeeded', 'retrying', 'failed']) webhookDeliveries.inc({ outcome }, 0);

export const rateLimited = new Counter({
  name: 'shipping_rate_limited_total',
  help: 'Requests refused with 429 by the rate limits, by route template.',
  labelNames: ['route'] as const,
  registers: [registry],
});

export const jobFailures = new Counter({
  name: 'shipping_worker_job_failures_total',
  help: 'Runs of a background job that failed (the database down, silent or refusing), by task (the job; Prometheus keeps `job` for itself); each is logged and retried after a pause.',
  labelNames: ['task'] as const,
  registers: [registry],
});

export const jobLastRun = new Gauge({
  name: 'shipping_worker_job_last_run_timestamp_seconds',
  help: 'When a run of a background job last ended, succeeded or failed, in seconds since the Unix epoch, by task: a job whose value stops moving is stalled, and no series at all means no process runs the jobs.',
  labelNames: ['task'] as const,
  registers: [registry],
  // Merged across threads by the latest: only the thread that runs the jobs sets it.
  aggregator: 'max',
});

let backlog: (() => Promise<number>) | undefined;

export const webhookBacklog = new Gauge({
  name: 'shipping_webhook_backlog',
  help: 'Webhook deliveries waiting for an attempt (pending), read from the database when scraped.',
  registers: [registry],
  // Merged across threads by the largest value: only the thread with the listener reads it.
  aggregator: 'max',
  async collect() {
    if (!backlog) return;
    // A database that is down or frozen must not take the scrape with it: the backlog is then unknown.
    try {
      this.set(await withinScrape(backlog()));
    } catch {
      this.set(Number.NaN);
    }
  },
});

/** How long a scrape waits for the database or another thread before answering without them. */
const SCRAPE_WAIT_MS = 2000;

function withinScrape<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${SCRAPE_WAIT_MS} ms`)), SCRAPE_WAIT_MS);
    timer.unref();
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** How the listener's thread reads the backlog (one indexed count). */
export function setWebhookBacklogReader(read: () => Promise<number>): void {
  backlog = read;
}

/** This thread's metrics, for the thread that serves them. */
export function metricsSnapshot(): Promise<MetricObjectWithValues<MetricValue<string>>[]> {
  return registry.getMetricsAsJSON();
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (the Prometheus text format) on its own listener, with the runtime's process
 * and event-loop metrics, and what `others` (other threads of the process) report merged in.
 */
export async function startMetricsServer(host: string, port: number, others: () => Promise<MetricObjectWithValues<MetricValue<string>>[][]> = async () => []): Promise<MetricsServer> {
  if (!registry.getSingleMetric('process_cpu_seconds_total')) collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    void (async () => {
      let body: string;
      try {
        // Another thread that does not answer in time is left out of this scrape rather than holding it.
        const threads = await withinScrape(others()).catch(() => []);
        const merged = threads.length ? AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), ...threads]) : registry;
        body = await merged.metrics();
      } catch (err) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics could not be collected: ${(err as Error).message}\n`);
        return;
      }
      res.writeHead(200, { 'content-type': registry.contentType }).end(body);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

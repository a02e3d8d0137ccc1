// §17 metrics: after a known set of requests the families count them (requests by route template and
// status, labels by carrier and format, a render per format, webhook deliveries, a 429); no label
// value is an id, a tracking number or an address; `promtool check metrics` finds nothing about our
// families. On both databases.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { setWebhookBacklogReader, startMetricsServer, type MetricsServer } from '../../src/metrics.ts';
import { deliveryBacklog } from '../../src/webhooks/service.ts';
import { webhookJobs } from '../../src/webhooks/jobs.ts';
import { startWorker } from '../../src/worker.ts';
import { createShipment, forEachDatabase, startTestApp, type TestApp } from '../helpers.ts';

const OURS = /^(http_request_duration_seconds|shipping_[a-z_]+)/;

async function scrape(server: MetricsServer): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${server.port}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return res.text();
}

/** The value of one sample, `name{a="b",…}`, with labels given in any order (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const m = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const have = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[2]);
  }
  return 0;
}

function promtool(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', ['check', 'metrics']);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', () => reject(new Error('promtool is not installed: install the Debian package prometheus (or run .ci/run)')));
    child.on('close', () => resolve(out));
    child.stdin.end(text);
  });
}

forEachDatabase((database) => {
  describe('GET /metrics', () => {
    let t: TestApp;
    let limited: TestApp;
    let server: MetricsServer;
    before(async () => {
      t = await startTestApp(database);
      limited = await startTestApp(database, { RATE_LIMIT_PER_SECOND: '0.01', RATE_LIMIT_BURST: '1' });
      server = await startMetricsServer('127.0.0.1', 0);
      setWebhookBacklogReader(() => deliveryBacklog(t.ctx));
    });
    after(async () => {
      await server.close();
      await limited.close();
      await t.close();
    });

    it('counts requests by route template and status, labels by carrier and format, renders per format, deliveries, and 429s', async () => {
      const before = await scrape(server);
      // Every delivery outcome has its series before any delivery ended so (alerts on rate() see the first).
      for (const outcome of ['succeeded', 'retrying', 'failed']) assert.match(before, new RegExp(`^shipping_webhook_deliveries_total\\{outcome="${outcome}"\\} \\d+$`, 'm'), outcome);
      const route = { method: 'GET', route: '/v1/shipments/:id' };
      const shipment = await createShipment(t);
      for (let i = 0; i < 3; i++) await t.request({ method: 'GET', url: `/v1/shipments/${shipment.id}` });
      await t.request({ method: 'GET', url: '/v1/shipments/0195f3a0-7c4e-7d2a-9b1e-3f5a6c7d8e9f' });
      const label = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: shipment.id, format: 'ZPL' } })).json();
      for (const format of ['PDF', 'PNG', 'ZPL']) {
        const { url } = (await t.request({ method: 'GET', url: `/v1/labels/${label.id}?format=${format}` })).json();
        assert.equal((await t.app.inject({ method: 'GET', url: url.replace('http://localhost:8080', '') })).statusCode, 200);
      }
      // A webhook delivered once.
      const receiver = createServer((_q, s) => s.end('ok'));
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
      const port = (receiver.address() as { port: number }).port;
      const hook = (await t.request({ method: 'POST', url: '/v1/webhooks', payload: { url: `http://127.0.0.1:${port}/hook`, events: ['shipment.created'] } })).json();
      await createShipment(t);
      const worker = startWorker(t.ctx, webhookJobs());
      const deliveries = async (status: string) => (await t.request({ method: 'GET', url: `/v1/webhooks/${hook.id}/deliveries?status=${status}` })).json().length as number;
      try {
        // Until both events are delivered and nothing waits (a loaded machine may take a while).
        for (let i = 0; i < 400 && ((await deliveries('succeeded')) < 2 || (await deliveries('pending')) > 0); i++) await new Promise((r) => setTimeout(r, 50));
      } finally {
        await worker.stop();
        receiver.close();
      }
      // Two requests on a bucket of one: the second is 429.
      await limited.request({ method: 'GET', url: '/v1/shipments' });
      assert.equal((await limited.request({ method: 'GET', url: '/v1/shipments' })).statusCode, 429);

      const now = await scrape(server);
      const delta = (name: string, labels: Record<string, string> = {}) => sample(now, name, labels) - sample(before, name, labels);
      assert.equal(delta('http_request_duration_seconds_count', { ...route, status_code: '200' }), 3);
      assert.equal(delta('http_request_duration_seconds_count', { ...route, status_code: '404' }), 1);
      assert.equal(delta('http_request_duration_seconds_count', { method: 'POST', route: '/v1/labels', status_code: '201' }), 1);
      assert.equal(delta('shipping_labels_created_total', { carrier: 'UPS', format: 'ZPL' }), 1);
      for (const format of ['PDF', 'PNG', 'ZPL']) assert.equal(delta('shipping_render_duration_seconds_count', { format }), 1, `one ${format} render`);
      assert.ok(sample(now, 'shipping_render_duration_seconds_sum', { format: 'PNG' }) > 0);
      const delivered = (await t.request({ method: 'GET', url: `/v1/webhooks/${hook.id}/deliveries?status=succeeded` })).json().length;
      assert.ok(delivered >= 1);
      assert.equal(delta('shipping_webhook_deliveries_total', { outcome: 'succeeded' }), delivered, 'one per delivery the webhook shows');
      assert.equal(delta('shipping_rate_limited_total', { route: '/v1/shipments' }), 1);
      assert.equal(sample(now, 'shipping_webhook_backlog'), 0, 'nothing waits');
      assert.ok(sample(now, 'nodejs_eventloop_lag_seconds') >= 0 && now.includes('process_cpu_seconds_total'), 'the runtime metrics');

      // No label value is an id, a tracking number, an address or an e-mail.
      for (const line of now.split('\n').filter((l) => OURS.test(l))) {
        for (const [, value] of line.matchAll(/\w+="([^"]*)"/g)) {
          assert.doesNotMatch(value!, /[0-9a-f]{8}-[0-9a-f]{4}-|1Z[0-9A-Z]{10,}|\d{10,}|@|Avenue|Street/i, `label value ${value} in ${line}`);
        }
      }
      const report = await promtool(now);
      const aboutOurs = report.split('\n').filter((l) => OURS.test(l.trim()));
      assert.deepEqual(aboutOurs, [], report);
    });

    it('a database that fails or does not answer leaves the backlog unknown (NaN); the scrape is still answered, the process lives', async () => {
      try {
        setWebhookBacklogReader(() => Promise.reject(new Error('connect ECONNREFUSED')));
        const failed = await fetch(`http://127.0.0.1:${server.port}/metrics`);
        assert.equal(failed.status, 200);
        assert.match(await failed.text(), /^shipping_webhook_backlog NaN$/im);
        setWebhookBacklogReader(() => new Promise<number>(() => {}));
        const started = Date.now();
        const silent = await fetch(`http://127.0.0.1:${server.port}/metrics`);
        assert.equal(silent.status, 200);
        assert.match(await silent.text(), /^shipping_webhook_backlog NaN$/im);
        assert.ok(Date.now() - started < 5000, 'answered without waiting for the database');
        // A jobs thread that does not answer is left out, not waited for.
        const stuck = await startMetricsServer('127.0.0.1', 0, () => new Promise(() => {}));
        try {
          const res = await fetch(`http://127.0.0.1:${stuck.port}/metrics`);
          assert.equal(res.status, 200);
          assert.match(await res.text(), /process_cpu_seconds_total/);
        } finally {
          await stuck.close();
        }
      } finally {
        setWebhookBacklogReader(() => deliveryBacklog(t.ctx));
      }
    });

    it('answers only GET /metrics', async () => {
      assert.equal((await fetch(`http://127.0.0.1:${server.port}/`)).status, 404);
      assert.equal((await fetch(`http://127.0.0.1:${server.port}/metrics`, { method: 'POST' })).status, 404);
      assert.equal((await t.app.inject({ method: 'GET', url: '/metrics' })).statusCode, 404, 'the API port does not serve it');
    });
  });
});

describe('ROLE=all: the process serves its API thread and its jobs thread together', () => {
  it('labels a batch made on the jobs thread are counted on the process listener', async () => {
    const { freePort, spawnChild } = await import('./support.ts');
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { randomToken } = await import('../../src/auth/secrets.ts');
    const { sampleShipment } = await import('../helpers.ts');
    const dir = mkdtempSync(join(tmpdir(), 'metrics-'));
    const [port, metricsPort] = [await freePort(), await freePort()];
    const key = `sk_test_${randomToken(32)}`;
    const child = spawnChild(process.execPath, ['src/main.ts'], { ROLE: 'all', DATABASE_URL: `sqlite:${join(dir, 's.db')}`, PORT: String(port), HOST: '127.0.0.1', METRICS_PORT: String(metricsPort), APP_ENV: 'development', PUBLIC_BASE_URL: '', BOOTSTRAP_API_KEY: key, SANDBOX_TRACKING: '0', WORKER_IDLE_MS: '20', RATE_LIMIT_PER_SECOND: '0' });
    try {
      await child.waitFor(/is serving/);
      const api = (method: string, path: string, body?: unknown) => fetch(`http://127.0.0.1:${port}${path}`, { method, headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const batch = await (await api('POST', '/v1/batches', { items: [{ shipment: sampleShipment }, { shipment: sampleShipment }], format: 'PNG' })).json();
      for (let i = 0; i < 200; i++) {
        if ((await (await api('GET', `/v1/batches/${batch.id}`)).json()).status === 'completed') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      assert.equal(sample(text, 'shipping_labels_created_total', { carrier: 'UPS', format: 'PNG' }), 2, 'counted on the jobs thread, served by the process');
      assert.ok(sample(text, 'http_request_duration_seconds_count', { method: 'POST', route: '/v1/batches', status_code: '202' }) === 1);
      assert.match(text, /shipping_webhook_backlog 0/);
      // Set on the jobs thread after each run, and served once (merged by the latest, not summed).
      for (const task of ['batches', 'webhook-delivery', 'purge-idempotency-keys']) {
        const at = sample(text, 'shipping_worker_job_last_run_timestamp_seconds', { task });
        assert.ok(at !== undefined && Math.abs(at - Date.now() / 1000) < 30, `${task} ran lately: ${at}`);
      }
      assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404, 'not on the API port');
      // A process that runs no jobs reports no run of one, so the ShippingWorkerDown alert can see that none runs them.
      const [apiPort, apiMetricsPort] = [await freePort(), await freePort()];
      const apiOnly = spawnChild(process.execPath, ['src/main.ts'], { ROLE: 'api', DATABASE_URL: `sqlite:${join(dir, 's.db')}`, PORT: String(apiPort), HOST: '127.0.0.1', METRICS_PORT: String(apiMetricsPort), APP_ENV: 'development', PUBLIC_BASE_URL: '', RATE_LIMIT_PER_SECOND: '0' });
      try {
        await apiOnly.waitFor(/is serving/);
        const apiText = await (await fetch(`http://127.0.0.1:${apiMetricsPort}/metrics`)).text();
        assert.match(apiText, /# TYPE shipping_worker_job_last_run_timestamp_seconds gauge/);
        assert.doesNotMatch(apiText, /^shipping_worker_job_last_run_timestamp_seconds\{/m);
      } finally {
        apiOnly.process.kill('SIGTERM');
        await apiOnly.exited;
      }
    } finally {
      child.process.kill('SIGTERM');
      await child.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

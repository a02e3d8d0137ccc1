// §17 tracing: with OTEL_EXPORTER_OTLP_ENDPOINT set, each request is a span with child spans for its
// database work and its rendering, exported by OTLP/HTTP to a small receiver in the test: JSON
// (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) in this process, protobuf (the default) from a service
// process started as an operator would. Without the variable nothing is traced (the other tests).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { flushTracing } from '../../src/tracing.ts';
import { randomToken } from '../../src/auth/secrets.ts';
import { createShipment, DATABASES, startTestApp, type TestApp } from '../helpers.ts';
import { freePort, spawnChild } from './support.ts';

interface Received {
  contentType: string;
  body: Buffer;
}

async function receiver(): Promise<{ server: Server; port: number; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') received.push({ contentType: String(req.headers['content-type']), body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as { port: number }).port, received };
}

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
}

function spansOf(received: Received[]): JsonSpan[] {
  return received.flatMap((r) => (JSON.parse(r.body.toString('utf8')) as { resourceSpans: { scopeSpans: { spans: JsonSpan[] }[] }[] }).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans)));
}

describe('OTLP/HTTP JSON from this process', () => {
  let t: TestApp;
  let sink: Awaited<ReturnType<typeof receiver>>;
  before(async () => {
    sink = await receiver();
    // The exporter reads the standard variables itself.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${sink.port}`;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
    t = await startTestApp(DATABASES[0], { OTEL_EXPORTER_OTLP_ENDPOINT: process.env.OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'shipping-test' });
  });
  after(async () => {
    await t.close();
    sink.server.close();
  });

  it('a request span with its database spans as children, and a render span under a download', async () => {
    const shipment = await createShipment(t);
    assert.equal((await t.request({ method: 'GET', url: `/v1/shipments/${shipment.id}` })).statusCode, 200);
    const label = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: shipment.id, format: 'PNG' } })).json();
    const download = await t.app.inject({ method: 'GET', url: label.url.replace('http://localhost:8080', '') });
    assert.equal(download.statusCode, 200);
    await flushTracing();
    assert.ok(sink.received.length > 0, 'the receiver got traces');
    assert.match(sink.received[0]!.contentType, /application\/json/);
    assert.match(sink.received[0]!.body.toString('utf8'), /"service\.name".*"shipping-test"/);
    const spans = spansOf(sink.received);
    const read = spans.find((s) => s.name === 'GET /v1/shipments/:id');
    assert.ok(read, `a span for the read: ${spans.map((s) => s.name).join(', ')}`);
    const children = spans.filter((s) => s.parentSpanId === read.spanId);
    assert.ok(children.some((s) => s.name === 'db select'), `its query is a child span: ${children.map((s) => s.name).join(', ')}`);
    assert.ok(children.every((s) => s.traceId === read.traceId));
    const get = spans.find((s) => s.name === 'GET /v1/downloads/labels/:id');
    assert.ok(get);
    assert.ok(spans.some((s) => s.name === 'render PNG' && s.parentSpanId === get.spanId), 'the render is a child of the download');
  });
});

describe('OTLP/HTTP protobuf (the default) from a service process', () => {
  it('exports the spans of a request', async () => {
    const sink = await receiver();
    const dir = mkdtempSync(join(tmpdir(), 'tracing-'));
    const port = await freePort();
    const key = `sk_test_${randomToken(32)}`;
    const child = spawnChild(process.execPath, ['src/main.ts'], {
      DATABASE_URL: `sqlite:${join(dir, 's.db')}`, PORT: String(port), HOST: '127.0.0.1', METRICS_PORT: '0', APP_ENV: 'development', PUBLIC_BASE_URL: '', BOOTSTRAP_API_KEY: key, SANDBOX_TRACKING: '0',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sink.port}`, OTEL_EXPORTER_OTLP_PROTOCOL: '', OTEL_SERVICE_NAME: 'shipping-proto',
    });
    try {
      await child.waitFor(/is serving/);
      assert.equal((await fetch(`http://127.0.0.1:${port}/v1/shipments`, { headers: { 'x-api-key': key } })).status, 200);
      for (let i = 0; i < 100 && !sink.received.some((r) => r.body.includes('GET /v1/shipments')); i++) await new Promise((r) => setTimeout(r, 100));
      const got = sink.received.find((r) => r.body.includes('GET /v1/shipments'));
      assert.ok(got, 'the request span arrived');
      assert.match(got.contentType, /application\/x-protobuf/);
      assert.ok(got.body.includes('shipping-proto') && got.body.includes('db select'), 'the service name and a database span');
    } finally {
      child.process.kill('SIGTERM');
      await child.exited;
      sink.server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

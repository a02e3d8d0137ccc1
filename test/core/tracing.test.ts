// §17 tracing: with OTEL_EXPORTER_OTLP_ENDPOINT set, each request is a span with child spans for its
// database work and its rendering, exported by OTLP/HTTP to a small receiver in the test: JSON
// (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) in this process, protobuf (the default) from a service
// process started as an operator would. Without the variable nothing is traced (the other tests).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { context, trace } from '@opentelemetry/api';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { flushTracing, tracer } from '../../src/tracing.ts';
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

interface JsonAttribute {
  key: string;
  value: { stringValue?: string; intValue?: number | string };
}

interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: JsonAttribute[];
  status: { code?: number };
  events?: { name: string; attributes: JsonAttribute[] }[];
}

interface JsonExport {
  resourceSpans: { resource: { attributes: JsonAttribute[] }; scopeSpans: { spans: JsonSpan[] }[] }[];
}

const SERVER = 2;
const CLIENT = 3;
const STATUS_ERROR = 2;

function exportsOf(received: Received[]): JsonExport[] {
  return received.map((r) => JSON.parse(r.body.toString('utf8')) as JsonExport);
}

function spansOf(received: Received[]): JsonSpan[] {
  return exportsOf(received).flatMap((e) => e.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans)));
}

function attributesOf(list: JsonAttribute[]): Record<string, string | number | undefined> {
  return Object.fromEntries(list.map((a) => [a.key, a.value.stringValue ?? (a.value.intValue === undefined ? undefined : Number(a.value.intValue))]));
}

/** The server span of the request to `path` (its `url.path`). */
function serverSpans(received: Received[], path: string): JsonSpan[] {
  return spansOf(received).filter((s) => s.kind === SERVER && attributesOf(s.attributes)['url.path'] === path);
}

describe('OTLP/HTTP JSON from this process', () => {
  let t: TestApp;
  let sink: Awaited<ReturnType<typeof receiver>>;
  before(async () => {
    sink = await receiver();
    // The exporter reads the standard variables itself.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${sink.port}`;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = 'http/json';
    // Read by the SDK itself, like the exporter's variables; values are percent-encoded.
    process.env.OTEL_RESOURCE_ATTRIBUTES = 'deployment.environment.name=prod,service.instance.id=api-1,shipping.note=a%2Cb%3Dc';
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
    assert.ok(children.some((s) => s.name === 'SELECT shipments'), `its query is a child span: ${children.map((s) => s.name).join(', ')}`);
    assert.ok(children.every((s) => s.traceId === read.traceId));
    const get = spans.find((s) => s.name === 'GET /v1/downloads/labels/:id');
    assert.ok(get);
    assert.ok(spans.some((s) => s.name === 'render PNG' && s.parentSpanId === get.spanId), 'the render is a child of the download');
  });

  it('the resource holds OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES (percent-decoded) and the SDK attributes', async () => {
    assert.equal((await t.request({ method: 'GET', url: '/v1/shipments' })).statusCode, 200);
    await flushTracing();
    const resource = attributesOf(exportsOf(sink.received).at(-1)!.resourceSpans[0]!.resource.attributes);
    assert.equal(resource['service.name'], 'shipping-test');
    assert.equal(resource['deployment.environment.name'], 'prod');
    assert.equal(resource['service.instance.id'], 'api-1');
    assert.equal(resource['shipping.note'], 'a,b=c');
    assert.equal(resource['telemetry.sdk.name'], 'opentelemetry');
    assert.equal(resource['telemetry.sdk.language'], 'nodejs');
    assert.ok(resource['telemetry.sdk.version']);
  });

  describe('an incoming traceparent (W3C Trace Context)', () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';

    it('continues the caller\'s trace: same trace id, the header\'s span as parent', async () => {
      const res = await t.request({ method: 'GET', url: '/v1/shipments', headers: { traceparent: `00-${traceId}-${parentId}-01` } });
      assert.equal(res.statusCode, 200);
      await flushTracing();
      const span = spansOf(sink.received).find((s) => s.kind === SERVER && s.traceId === traceId);
      assert.ok(span, 'a server span in the caller\'s trace');
      assert.equal(span.parentSpanId, parentId);
      assert.ok(spansOf(sink.received).some((s) => s.kind === CLIENT && s.parentSpanId === span.spanId), 'its queries in the same trace');
    });

    it('honours the sampled flag: a caller that does not sample gets no spans', async () => {
      const unsampled = 'aaf92f3577b34da6a3ce929d0e0e4736';
      assert.equal((await t.request({ method: 'GET', url: '/v1/shipments', headers: { traceparent: `00-${unsampled}-${parentId}-00` } })).statusCode, 200);
      await flushTracing();
      assert.deepEqual(spansOf(sink.received).filter((s) => s.traceId === unsampled), []);
    });

    it('ignores a malformed header: the request starts a trace of its own', async () => {
      const malformed = ['00-00000000000000000000000000000000-00f067aa0ba902b7-01', `00-${traceId}-0000000000000000-01`, `00-${traceId.toUpperCase()}-${parentId}-01`, `ff-${traceId}-${parentId}-01`, 'garbage'];
      for (const [i, traceparent] of malformed.entries()) {
        assert.equal((await t.request({ method: 'GET', url: `/malformed-${i}`, headers: { traceparent } })).statusCode, 404);
      }
      await flushTracing();
      for (const i of malformed.keys()) {
        const [span] = serverSpans(sink.received, `/malformed-${i}`);
        assert.ok(span, `a span for ${malformed[i]}`);
        assert.equal(span.parentSpanId || undefined, undefined, `no parent for ${malformed[i]}`);
        assert.notEqual(span.traceId, traceId);
      }
    });
  });

  describe('semantic conventions', () => {
    it('a server span has url.path, url.scheme, http.route and is named by method and route', async () => {
      const shipment = await createShipment(t);
      assert.equal((await t.request({ method: 'GET', url: `/v1/shipments/${shipment.id}?expand=none` })).statusCode, 200);
      await flushTracing();
      const [span] = serverSpans(sink.received, `/v1/shipments/${shipment.id}`);
      assert.ok(span);
      assert.equal(span.name, 'GET /v1/shipments/:id');
      assert.deepEqual(attributesOf(span.attributes), { 'http.request.method': 'GET', 'http.route': '/v1/shipments/:id', 'url.path': `/v1/shipments/${shipment.id}`, 'url.scheme': 'http', 'http.response.status_code': 200 });
    });

    it('an unmatched path has no http.route and is named by its method alone', async () => {
      assert.equal((await t.request({ method: 'GET', url: '/no/such/path' })).statusCode, 404);
      await flushTracing();
      const [span] = serverSpans(sink.received, '/no/such/path');
      assert.ok(span);
      assert.equal(span.name, 'GET');
      assert.equal(attributesOf(span.attributes)['http.route'], undefined);
    });

    it('a database span is named by its operation and table and carries db.system.name', async () => {
      await flushTracing();
      const queries = spansOf(sink.received).filter((s) => s.kind === CLIENT);
      assert.ok(queries.length > 0);
      for (const span of queries) assert.equal(attributesOf(span.attributes)['db.system.name'], 'sqlite', span.name);
      const read = queries.find((s) => s.name === 'SELECT shipments');
      assert.ok(read, queries.map((s) => s.name).join(', '));
      assert.deepEqual([attributesOf(read.attributes)['db.operation.name'], attributesOf(read.attributes)['db.collection.name']], ['SELECT', 'shipments']);
      assert.ok(!queries.some((s) => s.name.startsWith('db ')), queries.map((s) => s.name).join(', '));
    });
  });

  it('a query that fails is still a span: ended, with an error status and the exception', async () => {
    const parent = tracer()!.startSpan('test');
    await assert.rejects(context.with(trace.setSpan(context.active(), parent), () => sql`select * from no_such_table`.execute(t.ctx.db)));
    parent.end();
    await flushTracing();
    const failed = spansOf(sink.received).find((s) => s.kind === CLIENT && s.parentSpanId === parent.spanContext().spanId);
    assert.ok(failed, 'the failed query was exported');
    assert.equal(failed.name, 'SELECT');
    assert.equal(failed.status.code, STATUS_ERROR);
    assert.ok(attributesOf(failed.attributes)['error.type']);
    assert.match(String(attributesOf(failed.events?.find((e) => e.name === 'exception')?.attributes ?? [])['exception.message']), /no_such_table/);
  });

  it('a query outside any request (the worker polling, setup) is not a trace of its own', async () => {
    await t.ctx.db.selectFrom('shipments').select('id').limit(1).execute();
    await flushTracing();
    const roots = spansOf(sink.received).filter((s) => s.kind === CLIENT && !s.parentSpanId);
    assert.deepEqual(roots.map((s) => s.name), []);
  });
});

/**
 * Runs the service as `npm start` does, with tracing to a receiver of this process and `env` besides,
 * sends it one authenticated request, stops it (a stopping process sends what it holds) and returns
 * what the receiver got.
 */
async function tracedService(env: Record<string, string>): Promise<Received[]> {
  const sink = await receiver();
  const dir = mkdtempSync(join(tmpdir(), 'tracing-'));
  const port = await freePort();
  const key = `sk_test_${randomToken(32)}`;
  const child = spawnChild(process.execPath, ['src/main.ts'], {
    DATABASE_URL: `sqlite:${join(dir, 's.db')}`, PORT: String(port), HOST: '127.0.0.1', METRICS_PORT: '0', APP_ENV: 'development', PUBLIC_BASE_URL: '', BOOTSTRAP_API_KEY: key, SANDBOX_TRACKING: '0',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sink.port}`, ...env,
  });
  try {
    await child.waitFor(/is serving/);
    assert.equal((await fetch(`http://127.0.0.1:${port}/v1/shipments`, { headers: { 'x-api-key': key } })).status, 200);
  } finally {
    child.process.kill('SIGTERM');
    await child.exited;
    sink.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return sink.received;
}

describe('OTLP/HTTP protobuf (the default) from a service process', () => {
  it('exports the spans of a request', async () => {
    const received = await tracedService({ OTEL_EXPORTER_OTLP_PROTOCOL: '', OTEL_SERVICE_NAME: 'shipping-proto' });
    const got = received.find((r) => r.body.includes('GET /v1/shipments'));
    assert.ok(got, 'the request span arrived');
    assert.match(got.contentType, /application\/x-protobuf/);
    assert.ok(got.body.includes('shipping-proto') && got.body.includes('db.system.name'), 'the service name and a database span');
  });
});

describe('OTEL_SDK_DISABLED=true', () => {
  it('turns tracing off even with an endpoint set', async () => {
    const received = await tracedService({ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SDK_DISABLED: 'true' });
    assert.equal(received.length, 0, 'nothing was exported');
  });
});

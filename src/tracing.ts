// OpenTelemetry tracing (contract §17), off unless OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. On: a span per request (src/app.ts), a child span per
// database query (a Kysely plugin) and per document drawn, exported by OTLP/HTTP, protobuf by default
// or JSON with OTEL_EXPORTER_OTLP_PROTOCOL=http/json; the exporters read the other standard OTEL_*
// variables themselves. Off: the SDK is never loaded and no hook, plugin or span is installed.
import { context, trace, SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

export interface TracingSettings {
  endpoint: string | undefined;
  protocol: string | undefined;
  serviceName: string;
}

let active: Tracer | undefined;
let provider: { forceFlush(): Promise<void>; shutdown(): Promise<void> } | undefined;

/** The tracer when tracing is on, otherwise undefined (callers then do nothing at all). */
export function tracer(): Tracer | undefined {
  return active;
}

/** Starts the SDK and the exporter the settings ask for; a no-op when no endpoint is set. */
export async function startTracing(settings: TracingSettings): Promise<void> {
  if (!settings.endpoint || active) return;
  const [{ BasicTracerProvider, BatchSpanProcessor }, { AsyncLocalStorageContextManager }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/resources'),
  ]);
  const json = settings.protocol === 'http/json';
  const { OTLPTraceExporter } = json ? await import('@opentelemetry/exporter-trace-otlp-http') : await import('@opentelemetry/exporter-trace-otlp-proto');
  const p = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter(), { scheduledDelayMillis: 1000 })],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(p);
  provider = p;
  active = trace.getTracer('shipping-platform');
}

/** Sends what is buffered (tests, and a process that stops). */
export async function flushTracing(): Promise<void> {
  await provider?.forceFlush();
}

export async function stopTracing(): Promise<void> {
  await provider?.shutdown();
  provider = undefined;
  active = undefined;
}

/** Runs `fn` in a child span of the current one, when tracing is on. */
export async function inSpan<T>(name: string, attributes: Record<string, string | number>, fn: () => Promise<T>): Promise<T> {
  const t = active;
  if (!t) return fn();
  return t.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
    try {
      return await fn();
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** A span per database query, child of whatever span is current (the request's). */
export class QuerySpans implements KyselyPlugin {
  readonly #spans = new WeakMap<object, Span>();

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const t = active;
    if (t) {
      const operation = args.node.kind.replace(/QueryNode$/, '').toLowerCase();
      this.#spans.set(args.queryId, t.startSpan(`db ${operation}`, { kind: SpanKind.CLIENT, attributes: { 'db.operation.name': operation } }, context.active()));
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.#spans.get(args.queryId)?.end();
    return args.result;
  }
}

export { context, trace, SpanKind, SpanStatusCode };

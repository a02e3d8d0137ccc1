// OpenTelemetry tracing (contract §17, docs/operations.md), off unless OTEL_EXPORTER_OTLP_ENDPOINT (or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set and OTEL_SDK_DISABLED is not true. On: a span per request
// (src/app.ts) continuing the caller's traceparent, a child span per database query (Kysely's query
// log) and per document drawn, exported by OTLP/HTTP. The SDK reads its other standard OTEL_*
// variables itself. Off: the SDK is never loaded and no hook, logger or span is installed.
import { context, propagation, trace, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { AliasNode, TableNode, type LogEvent, type Logger, type RootOperationNode } from 'kysely';

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
  const [core, { BasicTracerProvider, BatchSpanProcessor }, { AsyncLocalStorageContextManager }, resources] = await Promise.all([
    import('@opentelemetry/core'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/resources'),
  ]);
  if (core.getBooleanFromEnv('OTEL_SDK_DISABLED')) return;
  const json = settings.protocol === 'http/json';
  const { OTLPTraceExporter } = json ? await import('@opentelemetry/exporter-trace-otlp-http') : await import('@opentelemetry/exporter-trace-otlp-proto');
  // Later ones win: our default name, then the host and process, then OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME.
  const resource = resources
    .defaultResource()
    .merge(resources.resourceFromAttributes({ 'service.name': settings.serviceName }))
    .merge(resources.detectResources({ detectors: [resources.hostDetector, resources.processDetector, resources.envDetector] }));
  const p = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter(), { scheduledDelayMillis: core.getNumberFromEnv('OTEL_BSP_SCHEDULE_DELAY') ?? 1000 })],
  });
  // OTEL_PROPAGATORS: tracecontext and baggage are known; others (b3, jaeger, …) are not installed.
  const propagators = (core.getStringListFromEnv('OTEL_PROPAGATORS') ?? ['tracecontext', 'baggage']).flatMap((name) =>
    name === 'tracecontext' ? [new core.W3CTraceContextPropagator()] : name === 'baggage' ? [new core.W3CBaggagePropagator()] : [],
  );
  propagation.setGlobalPropagator(new core.CompositePropagator({ propagators }));
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

function failed(span: Span, err: unknown): void {
  span.recordException(err as Error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message });
}

/** Runs `fn` in a child span of the current one, when tracing is on and a request is being traced. */
export async function inSpan<T>(name: string, attributes: Record<string, string | number>, fn: () => Promise<T>): Promise<T> {
  const t = active;
  if (!t || !trace.getSpan(context.active())) return fn();
  return t.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes }, async (span) => {
    try {
      return await fn();
    } catch (err) {
      failed(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

const OPERATIONS: Partial<Record<RootOperationNode['kind'], string>> = {
  SelectQueryNode: 'SELECT',
  InsertQueryNode: 'INSERT',
  UpdateQueryNode: 'UPDATE',
  DeleteQueryNode: 'DELETE',
  MergeQueryNode: 'MERGE',
};

/** The one table a query works on, when it names exactly one (with a join or a second table: none). */
function tableOf(node: RootOperationNode): string | undefined {
  const target = node.kind === 'InsertQueryNode' ? node.into : node.kind === 'UpdateQueryNode' ? node.table : undefined;
  const tables = [...(target ? [target] : []), ...('from' in node ? (node.from?.froms ?? []) : []), ...('joins' in node ? (node.joins ?? []) : [])];
  const only = tables.length === 1 && AliasNode.is(tables[0]!) ? tables[0].node : tables[0];
  return tables.length === 1 && only && TableNode.is(only) ? only.table.identifier.name : undefined;
}

/**
 * Kysely's query log as spans, one per query run inside a traced request, made once the query has
 * answered or failed (a plugin never hears of a failure). Queries outside any span (the worker's
 * polls, start-up) are not traced. Undefined when tracing is off: then Kysely logs nothing.
 */
export function querySpans(system: 'sqlite' | 'postgresql'): Logger | undefined {
  const t = active;
  if (!t) return undefined;
  return (event: LogEvent) => {
    const parent = context.active();
    if (!trace.getSpan(parent)) return;
    const operation = OPERATIONS[event.query.query.kind] ?? /^\s*([a-z]+)/i.exec(event.query.sql)?.[1]?.toUpperCase();
    const table = tableOf(event.query.query);
    const attributes: Attributes = { 'db.system.name': system, 'db.operation.name': operation, 'db.collection.name': table };
    const name = [operation, table].filter(Boolean).join(' ') || system;
    const span = t.startSpan(name, { kind: SpanKind.CLIENT, startTime: Date.now() - event.queryDurationMillis, attributes }, parent);
    if (event.level === 'error') {
      const code = (event.error as { code?: unknown })?.code;
      span.setAttribute('error.type', typeof code === 'string' ? code : ((event.error as Error)?.name ?? 'Error'));
      if (system === 'postgresql' && typeof code === 'string') span.setAttribute('db.response.status_code', code);
      failed(span, event.error);
    }
    span.end();
  };
}

export { context, propagation, trace, ROOT_CONTEXT, SpanKind, SpanStatusCode };

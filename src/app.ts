// Assembles the Fastify app: the one place that knows every capability.
import { context, propagation, trace, tracer, ROOT_CONTEXT, SpanKind, SpanStatusCode } from './tracing.ts';
import type { Span } from '@opentelemetry/api';
import { httpRequestDuration } from './metrics.ts';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { InvalidInput, ShuttingDown } from './errors.ts';
import type { AppContext } from './context.ts';
import { clientErrors, frameworkErrors, installErrorHandling } from './http/errors.ts';
import { installAuth } from './http/auth.ts';
import { installIdempotency } from './http/idempotency.ts';
import { installLocations } from './http/location.ts';
import { installInputChecks } from './http/input.ts';
import { decimalNumbersOnly, everyProblem, inputValidator } from './http/validators.ts';
import { installRateLimits, memoryLimiter, type RateLimiter, sharedLimiter } from './http/rate-limit.ts';
import { installOpenApi, openApiRoutes } from './http/openapi.ts';
import { webhookEventsDocument } from './webhooks/schemas.ts';
import { errorSchema } from './http/schemas.ts';
import { authRoutes } from './oauth/routes.ts';
import { isGrantRevoked } from './oauth/authorize.ts';
import { healthRoutes } from './health/routes.ts';
import { shipmentRoutes, shipmentSchemas } from './shipments/routes.ts';
import { addressRoutes, addressSchemas } from './addresses/routes.ts';
import { stampRoutes, stampSchemas } from './stamps/routes.ts';
import { batchRoutes, batchSchemas } from './batches/routes.ts';
import { manifestRoutes, manifestSchemas } from './manifests/routes.ts';
import { labelRoutes, labelSchemas } from './labels/routes.ts';
import { trackingRoutes, trackingSchemas } from './tracking/routes.ts';
import { webhookRoutes, webhookSchemas } from './webhooks/routes.ts';
import { dashboardRoutes } from './dashboard/routes.ts';
import { holdsCredential } from './log.ts';

export const BODY_LIMIT = 1024 * 1024;

const FORBIDDEN_KEY = 'malformed request: a key named __proto__, or constructor holding prototype, is not accepted in a body';

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** One access line per request, written when it completes, instead of Fastify's two. */
class AccessLog extends LogController {
  constructor() {
    super({ disableRequestLogging: true });
  }
  override requestCompleted(_error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    request.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/** TRUST_PROXY as Fastify takes it: a hop count becomes "trust the first n hops". */
function trustProxyOf(setting: false | number | string[]): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof setting === 'number' ? (_address, hop) => hop < setting : setting;
}

/** RATE_LIMIT_PER_SECOND's limiter: in memory on SQLite (one process), shared through PostgreSQL otherwise; none at 0. */
function rateLimiterOf(app: FastifyInstance, ctx: AppContext): RateLimiter | null {
  const { rateLimitPerSecond: rate, rateLimitBurst: burst } = ctx.config;
  if (rate <= 0) return null;
  if (ctx.storage.dialect !== 'postgres') return memoryLimiter(rate, burst);
  const limiter = sharedLimiter(ctx.db, rate, burst);
  // What this process took is written before the database closes (closeContext comes after the app's close).
  app.addHook('onClose', () => limiter.close().catch((err: unknown) => ctx.log.warn({ err }, 'rate limits: what was taken here could not be written')));
  return limiter;
}

export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const checkEvery = Math.min(1000, Math.ceil(ctx.config.requestTimeoutMs / 2));
  const app = Fastify({
    loggerInstance: ctx.log as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      // A credential sent as an id (a client's mistake) would be echoed and logged: replaced too.
      return typeof given === 'string' && SAFE_REQUEST_ID.test(given) && !holdsCredential(given) ? given : randomUUID();
    },
    frameworkErrors,
    clientErrorHandler: clientErrors,
    logController: new AccessLog(),
    // Refused by the hook below in the service's own words instead (Fastify's 503 has neither code nor Retry-After).
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
    // Slow clients: the whole request within REQUEST_TIMEOUT_MS (408), checked every second or sooner.
    // A silent socket is cut only after that check has had its turn, so a stalled body gets its 408.
    // An idle kept-alive connection stays Fastify's 72 s, longer than common proxies keep theirs (60 s),
    // so a proxy never sends on a connection the service is closing.
    requestTimeout: ctx.config.requestTimeoutMs,
    connectionTimeout: ctx.config.requestTimeoutMs + 2 * checkEvery + 1000,
    http: { headersTimeout: Math.min(ctx.config.requestTimeoutMs, 60_000), connectionsCheckingInterval: checkEvery },
    trustProxy: trustProxyOf(ctx.config.trustProxy),
  });

  const sharedSchemas = [errorSchema, ...shipmentSchemas, ...addressSchemas, ...stampSchemas, ...labelSchemas, ...batchSchemas, ...manifestSchemas, ...trackingSchemas, ...webhookSchemas];
  for (const s of sharedSchemas) app.addSchema(s);
  // Every problem of a refused body at once (one `details` entry per field), so a client fixes them in one go.
  const bodies = inputValidator(sharedSchemas, { coerceTypes: false });
  const bodiesEveryProblem = inputValidator(sharedSchemas, { coerceTypes: false, allErrors: true });
  const others = inputValidator(sharedSchemas, { coerceTypes: 'array' });
  app.setValidatorCompiler(({ schema, httpPart }) =>
    httpPart === 'body' ? everyProblem(bodies.compile(schema), bodiesEveryProblem.compile(schema)) : decimalNumbersOnly(schema as Parameters<typeof decimalNumbersOnly>[0], others.compile(schema)),
  );

  // A PUT or POST with `Content-Type: application/json` and no body (common from HTTP clients on
  // routes that take none, like invalidate) is an absent body, not malformed JSON.
  // JSON only: a text/plain body is 415 like any other type a route does not take (Fastify parses text by default).
  app.removeContentTypeParser('text/plain');
  const defaultJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  // Read as bytes, so that a body that is not UTF-8 is refused rather than decoded into U+FFFD and stored.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length === 0) return done(null, undefined);
    if (!isUtf8(bytes)) return done(new InvalidInput('malformed request: the body is not UTF-8 text; send JSON in UTF-8'), undefined);
    const text = bytes.toString('utf8');
    defaultJson(request, text, (err, parsed) => {
      // Fastify's parser also refuses valid JSON whose keys could reach an object's prototype: said plainly.
      if (err && (err as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY' && isJson(text)) return done(new InvalidInput(FORBIDDEN_KEY), undefined);
      done(err, parsed);
    });
  });

  // A span per request when tracing is on (src/tracing.ts); nothing at all when it is off.
  const t = tracer();
  if (t) {
    const spans = new WeakMap<object, Span>();
    app.addHook('onRequest', (request, _reply, done) => {
      // The caller's trace when its traceparent is well formed (OTEL_PROPAGATORS), a new one otherwise.
      const parent = propagation.extract(ROOT_CONTEXT, request.headers);
      const route = request.routeOptions.url;
      const span = t.startSpan(
        route ? `${request.method} ${route}` : request.method,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'http.route': route, 'url.path': request.url.split('?')[0], 'url.scheme': request.protocol } },
        parent,
      );
      spans.set(request, span);
      context.with(trace.setSpan(parent, span), done);
    });
    app.addHook('onResponse', (request, reply, done) => {
      const span = spans.get(request);
      span?.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span?.setAttributes({ 'error.type': String(reply.statusCode) }).setStatus({ code: SpanStatusCode.ERROR });
      span?.end();
      done();
    });
  }

  // Every answer's time by route template (never a path with an id in it) and status; with
  // METRICS_PORT=0 nobody can read it, so it is not measured.
  if (ctx.config.metricsPort > 0) {
    app.addHook('onResponse', (request, reply, done) => {
      httpRequestDuration.observe({ method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) }, reply.elapsedTime / 1000);
      done();
    });
  }

  // More connections than this are refused (closed at once) until some close.
  app.server.maxConnections = ctx.config.maxConnections;
  installErrorHandling(app);
  // A request that arrives while the service shuts down (on a connection already open) is refused as
  // a database outage is, 503 with Retry-After, and its connection closed: another process takes it.
  let closing = false;
  // A request in flight when the shutdown began is answered, and its connection then closed (a
  // kept-alive one would otherwise hold the close until the client lets go): `Connection: close` on
  // its answer, and every connection closed as soon as it is idle (an answer whose head went out
  // before the shutdown, a long download, carries no such header).
  app.addHook('preClose', (done) => {
    closing = true;
    const idle = setInterval(() => app.server.closeIdleConnections(), 50).unref();
    app.server.once('close', () => clearInterval(idle));
    done();
  });
  app.addHook('onSend', (_request, reply, _payload, done) => {
    if (closing) reply.header('connection', 'close');
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (!closing) return done();
    reply.header('connection', 'close');
    // The health check says so in its own shape, so a load balancer stops sending here.
    if (request.routeOptions.url === '/v1/health') return void reply.code(503).header('retry-after', '1').send({ status: 'unavailable', version: ctx.config.version });
    done(new ShuttingDown());
  });
  // Both add their hooks to each route as it is registered (onRoute), so they come before any route;
  // installAuth's also sets x-request-id (the error and not-found handlers set it themselves).
  const limiter = rateLimiterOf(app, ctx);
  installAuth(app, ctx, (familyId) => isGrantRevoked(ctx, familyId), limiter);
  // After installAuth, so each route's limit runs once its caller is known.
  if (limiter) installRateLimits(app, limiter);
  installIdempotency(app, ctx);
  installLocations(app, ctx.config.baseUrl);
  installInputChecks(app);
  await installOpenApi(app, ctx, webhookEventsDocument);

  await app.register(async (scope) => authRoutes(scope, ctx));
  await app.register(
    async (v1) => {
      // Answers carry addresses and tokens of tenants: no shared cache keeps them, no browser sniffs
      // them as something else. Downloads set their own Cache-Control (a label may be kept until its link expires).
      v1.addHook('onSend', (_request, reply, payload, done) => {
        reply.header('x-content-type-options', 'nosniff');
        if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
        done(null, payload);
      });
      healthRoutes(v1, ctx);
      openApiRoutes(v1);
      shipmentRoutes(v1, ctx);
      addressRoutes(v1, ctx);
      stampRoutes(v1, ctx);
      labelRoutes(v1, ctx);
      batchRoutes(v1, ctx);
      manifestRoutes(v1, ctx);
      trackingRoutes(v1, ctx);
      webhookRoutes(v1, ctx);
    },
    { prefix: '/v1' },
  );
  // The web pages for an account's users (§15), with their own cookies, CSRF tokens and error pages.
  await app.register(async (pages) => dashboardRoutes(pages, ctx, limiter), { prefix: '/dashboard' });
  return app;
}

// The one place where errors become responses: `{code, message}` (or RFC 6749 on OAuth routes).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES, maxHeaderSize } from 'node:http';
import type { Socket } from 'node:net';
import { UUID_PATTERN } from '../db/ids.ts';
import { isUnavailable } from '../db/index.ts';
import { AppError, InvalidInput, RouteNotFound, NotFound, OAuthError, PayloadTooLarge, ShuttingDown, Unavailable, UnsupportedMediaType, type FieldProblem } from '../errors.ts';
import { COUNTRY_CODE_ANY_CASE_PATTERN, COUNTRY_CODE_PATTERN, CURRENCY_CODE_PATTERN, EEI_PATTERN, EMAIL_PATTERN, EORI_PATTERN, HS_CODE_PATTERN, IOSS_PATTERN, JSON_UTF8, PHONE_PATTERN, POSTAL_CODE_PATTERN, PRINTABLE_PATTERN, VISIBLE_PATTERN } from './schemas.ts';

function fieldOf(instancePath: string, params: Record<string, unknown> | undefined, where: string): string {
  // A JavaScript path, as the contract writes it: `items[7].shipment.to.country`.
  const missing = params && typeof params.missingProperty === 'string' ? params.missingProperty : undefined;
  const extra = params && typeof params.additionalProperty === 'string' ? params.additionalProperty : undefined;
  const segments = [...instancePath.split('/').slice(1), ...[missing ?? extra].filter((s): s is string => Boolean(s))];
  const full = segments.map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : `${i ? '.' : ''}${s}`)).join('');
  return full || where;
}

/** What a value of each pattern the schemas use must look like, for a client rather than as a regex. */
const PATTERN_WORDS = new Map<string, string>([
  [UUID_PATTERN, 'must be a UUID (in lower case, as ids are issued)'],
  [VISIBLE_PATTERN, 'must hold a printable character, not only spaces or invisible ones'],
  [PRINTABLE_PATTERN, 'must not contain control characters'],
  [COUNTRY_CODE_PATTERN, 'must be a two-letter ISO 3166-1 country code in capitals, like DE or US'],
  [COUNTRY_CODE_ANY_CASE_PATTERN, 'must be a two-letter ISO 3166-1 country code, like DE or US'],
  [CURRENCY_CODE_PATTERN, 'must be a three-letter ISO 4217 currency code in capitals, like EUR or USD'],
  [HS_CODE_PATTERN, 'must be 6 to 10 digits, without dots or spaces, like 610910'],
  [POSTAL_CODE_PATTERN, 'may hold only letters, digits, spaces and hyphens'],
  [PHONE_PATTERN, 'may hold only digits, spaces and + ( ) . / -'],
  [EMAIL_PATTERN, 'must be an email address, like ada@example.org'],
  [IOSS_PATTERN, 'must be an IOSS number: IM and 10 digits, like IM2760000001'],
  [EORI_PATTERN, 'must be an EORI number: a country code and up to 15 letters or digits, like DE123456789012345'],
  [EEI_PATTERN, 'must be an AES filing\'s ITN, like AES X20261129123456, or an exemption, like NOEEI 30.37(a)'],
]);

const FORMAT_WORDS: Record<string, string> = {
  uuid: 'must be a UUID',
  uri: 'must be an absolute URL, like https://example.com/hooks',
  'date-time': 'must be an RFC 3339 date-time with an offset, like 2026-01-01T10:00:00Z',
  email: 'must be an email address',
};

const plural = (n: number | undefined, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
const TYPE_WORDS: Record<string, string> = { string: 'a string', number: 'a number', integer: 'an integer', boolean: 'true or false', object: 'an object', array: 'an array', null: 'null' };

/** Ajv's wording where it is not plain enough for a client: allowed values named, no regexes. */
function problemOf(v: { keyword: string; params?: unknown; schema?: unknown; message?: string }): string {
  const params = (v.params ?? {}) as { allowedValues?: unknown[]; format?: string; pattern?: string; limit?: number; type?: string; i?: number; j?: number };
  switch (v.keyword) {
    case 'additionalProperties': return 'is not a known field';
    case 'required': return 'is required';
    case 'maxProperties': return `must have at most ${plural(params.limit, 'field')}`;
    case 'minProperties': return `must have at least ${plural(params.limit, 'field')}`;
    case 'minItems': return params.limit === 1 ? 'must not be empty' : `must have at least ${plural(params.limit, 'item')}`;
    case 'maxItems': return `must have at most ${plural(params.limit, 'item')}`;
    case 'uniqueItems': return `must not repeat an item (items ${Math.min(params.i ?? 0, params.j ?? 0)} and ${Math.max(params.i ?? 0, params.j ?? 0)} are the same)`;
    case 'minLength': return params.limit === 1 ? 'must not be empty' : `must have at least ${plural(params.limit, 'character')}`;
    case 'maxLength': return `must have at most ${plural(params.limit, 'character')}`;
    case 'maximum': return `must be at most ${params.limit}`;
    case 'minimum': return `must be at least ${params.limit}`;
    case 'exclusiveMaximum': return `must be less than ${params.limit}`;
    case 'exclusiveMinimum': return `must be more than ${params.limit}`;
    case 'type': {
      const words = String(params.type ?? '').split(',').map((t) => TYPE_WORDS[t] ?? t);
      if (words.length && words.every(Boolean)) return `must be ${words.join(' or ')}`;
      break;
    }
    case 'enum': return `must be one of ${(params.allowedValues ?? []).join(', ')}`;
    case 'format': if (params.format && FORMAT_WORDS[params.format]) return FORMAT_WORDS[params.format]!; break;
    case 'pattern': if (params.pattern && PATTERN_WORDS.has(params.pattern)) return PATTERN_WORDS.get(params.pattern)!; break;
  }
  return v.message ?? 'is invalid';
}

/** The most `details` a 400 lists: a batch of a thousand broken items names the first hundred problems. */
export const MAX_DETAILS = 100;

/** Ajv's errors as the `details` of a 400: each names its field as a JavaScript path, the first problem of each field once. */
export function validationProblems(errors: readonly { keyword: string; instancePath?: string; params?: unknown; schema?: unknown; message?: string }[], where = 'body'): FieldProblem[] {
  const byField = new Map<string, FieldProblem>();
  for (const v of errors) {
    const field = fieldOf(v.instancePath ?? '', v.params as Record<string, unknown>, where);
    if (!byField.has(field)) byField.set(field, { field, message: problemOf(v) });
    if (byField.size === MAX_DETAILS) break;
  }
  return [...byField.values()];
}

/** How a message names the part of the request a field is in (a body's fields need no word). */
const WHERE_WORDS: Record<string, string> = { querystring: 'query parameter', params: 'path parameter', headers: 'header' };

/** Turns anything thrown into one of our typed errors. */
export function toAppError(err: FastifyError | Error, request: FastifyRequest): AppError {
  if (err instanceof AppError) return err;
  const fe = err as FastifyError;
  if (fe.validation) {
    const where = fe.validationContext ?? 'body';
    const details = validationProblems(fe.validation, where);
    // A query parameter given twice (`limit=5&limit=5`) arrives as a list, which no schema of one value
    // takes (a `type` error); a parameter that is a list by its schema (`ids=a,b`) keeps its own message.
    if (where === 'querystring') {
      const query = (request.query ?? {}) as Record<string, unknown>;
      const listed = new Set(fe.validation.filter((v) => v.keyword === 'type').map((v) => v.instancePath.replace(/^\//, '')));
      for (const d of details) if (Array.isArray(query[d.field]) && listed.has(d.field)) d.message = 'must be given once';
    }
    const first = details[0]!;
    const message = `${WHERE_WORDS[where] ?? ''} ${first.field} ${first.message}`.trim();
    return new InvalidInput(message, details);
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLarge(`request body is larger than the limit of ${sizeOf(request.routeOptions.bodyLimit ?? 1024 * 1024)}`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaType(`content type ${request.headers['content-type'] ?? '(none)'} is not supported; send ${bodyTypesOf(request).join(' or ')}`);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new InvalidInput('request body is empty; send a JSON object');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new InvalidInput('Content-Length does not match the body');
    case 'FST_ERR_NOT_FOUND':
      return new NotFound('route', `${request.method} ${request.url.split('?')[0]}`);
  }
  if (err instanceof SyntaxError || fe.statusCode === 400) return new InvalidInput(`malformed request: ${err instanceof SyntaxError ? 'body is not valid JSON' : fe.message}`);
  if (fe.statusCode === 404) return new NotFound('route', `${request.method} ${request.url.split('?')[0]}`);
  if (fe.statusCode === 415) return new UnsupportedMediaType(fe.message);
  if (fe.statusCode === 413) return new PayloadTooLarge('request body is too large');
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) return new AppError(fe.statusCode, 'INVALID_INPUT', fe.message);
  // Nothing was wrong with the request: the same one may be sent again in a moment.
  if (isUnavailable(err) || isUnavailable(err.cause)) return new Unavailable('the database is unavailable or did not answer in time; send the request again shortly (a POST with the same Idempotency-Key)');
  return new AppError(500, 'INTERNAL', 'internal error; the request id in x-request-id identifies it in the logs');
}

/**
 * Fastify answers a malformed path (bad percent-encoding, an over-long parameter) before any hook or
 * error handler runs; this option of the Fastify constructor puts those into our shape too.
 */
export function frameworkErrors(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const appErr =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new InvalidInput('a path parameter is longer than any valid value')
      : err.code === 'FST_ERR_BAD_URL'
        ? new InvalidInput('the path is not a valid URL (bad percent-encoding)')
        : toAppError(err, request);
  request.log.info({ code: appErr.code, status: appErr.status }, appErr.message);
  void reply.header('x-request-id', request.id).status(appErr.status).type(JSON_UTF8).send(appErr.body());
}

/**
 * What Node's HTTP parser refuses before Fastify sees a request at all (malformed HTTP, headers over
 * the size limit, a request not complete within REQUEST_TIMEOUT_MS): answered in the contract's shape
 * too, with the status HTTP has for it, and the connection closed.
 */
export function clientErrors(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message]: [number, string] =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'the request did not arrive in time (REQUEST_TIMEOUT_MS); the connection is closed']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, `the request's headers are larger than ${maxHeaderSize / 1024} KiB`]
        : [400, 'the request is not valid HTTP/1.1'];
  const body = JSON.stringify({ code: 'INVALID_INPUT', message });
  this.log.info({ code: 'INVALID_INPUT', status, reason: err.code }, message);
  if (socket.writable) socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${JSON_UTF8}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  socket.destroy(err);
}

/** Any error of the token endpoint in RFC 6749 §5.2's shape, its status and headers (`Retry-After`) kept. */
function oauthShape(err: AppError): AppError {
  if (err instanceof OAuthError) return err;
  if (err.status === 401) return new OAuthError('invalid_client', err.message);
  if (err.status === 429 || err.status === 503) return new OAuthError('temporarily_unavailable', err.message, { status: err.status, headers: err.headers });
  if (err.status >= 500) return new OAuthError('server_error', err.message, { status: err.status, headers: err.headers });
  return new OAuthError('invalid_request', err.message);
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let appErr = toAppError(err, request);
    // A refusal during shutdown is planned (the load balancer sends the request elsewhere): no failure of ours.
    const planned = appErr instanceof ShuttingDown;
    if (request.routeOptions.config?.oauth) appErr = oauthShape(appErr);
    if (appErr.status >= 500 && !planned) request.log.error({ err }, 'request failed');
    else request.log.info({ code: appErr.code, status: appErr.status }, appErr.message);
    reply.header('x-request-id', request.id).headers(appErr.headers);
    if (appErr instanceof OAuthError) reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    return reply.status(appErr.status).type(JSON_UTF8).send(appErr.body());
  });
  // The methods of every route path, so a known path asked with another method says which it takes (Allow).
  const routes: { pattern: RegExp; methods: Set<string> }[] = [];
  app.addHook('onRoute', (route) => {
    const pattern = new RegExp(`^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]\w*/g, '[^/]+')}/?$`);
    let entry = routes.find((r) => r.pattern.source === pattern.source);
    if (!entry) {
      entry = { pattern, methods: new Set() };
      routes.push(entry);
    }
    for (const m of [route.method].flat()) entry.methods.add(m);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => [...r.methods]));
    const err = allowed.size > 0 ? new RouteNotFound(request.method, path, [...allowed].sort()) : new NotFound('route', `${request.method} ${path}`);
    return reply.header('x-request-id', request.id).headers(err.headers).status(err.status).type(JSON_UTF8).send(err.body());
  });
}

/** 1 MiB, 256 KiB: a body limit as people write it. */
function sizeOf(bytes: number): string {
  return bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${Math.round(bytes / 1024)} KiB`;
}

/** The body types a route takes: those its config names (the logo: PNG or JPEG), else JSON. */
function bodyTypesOf(request: FastifyRequest): string[] {
  return (request.routeOptions.config as { bodyTypes?: string[] } | undefined)?.bodyTypes ?? ['application/json'];
}

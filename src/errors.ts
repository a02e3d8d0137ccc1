// The typed errors every layer throws; src/http/errors.ts maps them to `{code, message}` in one place.

export interface FieldProblem {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details?: FieldProblem[];
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, options: { details?: FieldProblem[]; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = code;
    this.status = status;
    this.code = code;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  /** What goes on the wire. */
  body(): Record<string, unknown> {
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }
}

export class InvalidInput extends AppError {
  constructor(message: string, details?: FieldProblem[]) {
    super(400, 'INVALID_INPUT', message, { details });
  }
}

export class Unauthorized extends AppError {
  constructor(message: string, bearerError?: string) {
    const challenge = bearerError ? `Bearer realm="shipping", error="${bearerError}"` : 'Bearer realm="shipping"';
    super(401, 'UNAUTHORIZED', message, { headers: { 'www-authenticate': challenge } });
  }
}

export class Forbidden extends AppError {
  constructor(message: string, missingScope?: string) {
    const headers: Record<string, string> = missingScope
      ? { 'www-authenticate': `Bearer realm="shipping", error="insufficient_scope", scope="${missingScope}"` }
      : {};
    super(403, 'FORBIDDEN', message, { headers });
  }
}

export class NotFound extends AppError {
  constructor(kind: string, id?: string) {
    super(404, 'NOT_FOUND', id === undefined ? `${kind} not found` : `${kind} ${id} not found`);
  }
}

/**
 * The path exists, the method does not: §9's NOT_FOUND for an unknown route (a route is a method and
 * a path; the contract's codes have no 405), with RFC 9110's `Allow` listing the methods it takes.
 */
export class RouteNotFound extends AppError {
  constructor(method: string, path: string, allowed: string[]) {
    super(404, 'NOT_FOUND', `route ${method} ${path} not found; ${path} takes ${allowed.join(', ')}`, { headers: { allow: allowed.join(', ') } });
  }
}

export class Conflict extends AppError {
  constructor(message: string) {
    super(409, 'CONFLICT', message);
  }
}

export class Gone extends AppError {
  constructor(message: string) {
    super(410, 'GONE', message);
  }
}

export class PayloadTooLarge extends AppError {
  constructor(message: string) {
    super(413, 'PAYLOAD_TOO_LARGE', message);
  }
}

export class UnsupportedMediaType extends AppError {
  constructor(message: string) {
    super(415, 'UNSUPPORTED_MEDIA_TYPE', message);
  }
}

export class IdempotencyKeyReused extends AppError {
  constructor(message: string) {
    super(422, 'IDEMPOTENCY_KEY_REUSED', message);
  }
}

export class RateLimited extends AppError {
  constructor(message: string, retryAfterSeconds: number) {
    super(429, 'RATE_LIMITED', message, { headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) } });
  }
}

/** A dependency (the database) could not answer: the same request may be sent again in a second. */
export class Unavailable extends AppError {
  constructor(message: string) {
    super(503, 'UNAVAILABLE', message, { headers: { 'retry-after': '1' } });
  }
}

/** A request that arrives while the process shuts down: answered 503 as planned, so not logged as a failure. */
export class ShuttingDown extends Unavailable {
  constructor() {
    super('the service is shutting down: send the request again');
  }
}

/** RFC 6749 §5.2 errors of the token endpoint, with their own wire shape `{error, error_description}`. */
export class OAuthError extends AppError {
  readonly error: string;
  /**
   * `temporarily_unavailable` (429 rate limited, 503 the database away) and `server_error` (500) are
   * the codes RFC 6749 §4.1.2.1 gives for those at the authorization endpoint, kept in this shape here
   * too: a client of the token endpoint reads one shape of error, with the status and `Retry-After`.
   */
  constructor(
    error: 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type' | 'invalid_scope' | 'temporarily_unavailable' | 'server_error',
    description: string,
    options: { basicChallenge?: boolean; status?: number; headers?: Record<string, string> } = {},
  ) {
    const status = options.status ?? (error === 'invalid_client' ? 401 : 400);
    super(status, error.toUpperCase(), description, { headers: { ...options.headers, ...(options.basicChallenge ? { 'www-authenticate': 'Basic realm="shipping"' } : {}) } });
    this.error = error;
  }

  override body(): Record<string, unknown> {
    return { error: this.error, error_description: this.message };
  }
}

// pino, with every place a credential could appear redacted (keys, tokens, secrets, passwords).
import pino, { type Bindings, type ChildLoggerOptions, type Logger, type DestinationStream, type LevelWithSilentOrString } from 'pino';

const SENSITIVE_QUERY = /([?&](?:sig|signature|token|access_token|refresh_token|id_token|code|code_verifier|client_secret|password|secret|api_key|apikey|x-api-key|key)=)[^&#]*/gi;
// Credentials recognisable by their shape wherever they turn up (a key pasted into a path or a field):
// API keys, client secrets, webhook secrets and JWTs.
const CREDENTIAL_SHAPES = /\b(?:sk_(?:test|live)_|cs_|whsec_)[A-Za-z0-9+/=_-]{8,}|\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g;

export function redactText(text: string): string {
  return text.replace(CREDENTIAL_SHAPES, '[redacted]');
}

export function redactUrl(url: string): string {
  // Both patterns need one of these; most URLs (a path with UUIDs) have none and skip the regexes.
  if (!url.includes('?') && !url.includes('&') && !url.includes('_') && !url.includes('eyJ')) return url;
  return redactText(url.replace(SENSITIVE_QUERY, '$1[redacted]'));
}

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.secret',
  '*.password',
  '*.client_secret',
  '*.access_token',
  '*.refresh_token',
  '*.apiKey',
  '*.key',
  'secret',
  'password',
];

/**
 * The service's log destination (stdout by default). Lines written during one turn of the event loop
 * are joined and written together at the end of it (setImmediate), or at once when 16 Ki characters
 * are waiting: under load, many requests' lines share one write system call instead of one each, and
 * nothing waits longer than the current turn. The write itself is synchronous (a sync SonicBoom, which
 * retries EAGAIN on pipes), and whatever is pending is written synchronously when the process exits,
 * also after an uncaught exception or `process.exit`: only a kill -9 or a crash of the runtime itself
 * can lose the lines of the current turn (docs/decisions.md).
 */
export class TurnBufferedDestination implements DestinationStream {
  readonly #out: DestinationStream;
  #pending: string[] = [];
  #chars = 0;
  #scheduled = false;
  #registered = false;

  constructor(dest: number | string = 1) {
    this.#out = pino.destination({ dest, sync: true });
  }

  write(line: string): void {
    this.#pending.push(line);
    this.#chars += line.length;
    if (!this.#registered) {
      this.#registered = true;
      unflushed.add(this);
    }
    if (this.#chars >= 16384) this.flushSync();
    else if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#endOfTurn);
    }
  }

  readonly #endOfTurn = (): void => {
    this.#scheduled = false;
    this.flushSync();
  };

  /** Writes every pending line now. */
  flushSync(): void {
    if (this.#pending.length === 0) return;
    const text = this.#pending.length === 1 ? this.#pending[0]! : this.#pending.join('');
    this.#pending = [];
    this.#chars = 0;
    this.#out.write(text);
  }

  /** pino's `logger.flush(cb)`. */
  flush(cb?: (err?: Error) => void): void {
    this.flushSync();
    cb?.();
  }
}

// Destinations that have been written to, flushed when the process exits (one listener for all).
const unflushed = new Set<TurnBufferedDestination>();
process.once('exit', () => {
  for (const d of unflushed) d.flushSync();
});

export function serviceDestination(dest: number | string = 1): DestinationStream {
  return new TurnBufferedDestination(dest);
}

type LogMethods = Record<'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', (...args: unknown[]) => void>;

/**
 * A request's logger that becomes a pino child (with the request id bound) only when something logs
 * through it: most requests log only their access line, which has its own logger, so the child built
 * for every request by Fastify cost more than it was used.
 */
export class LazyChildLogger {
  readonly #parent: Logger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: Logger | undefined;

  constructor(parent: Logger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  get #logger(): Logger {
    return (this.#child ??= this.#parent.child(this.#bindings, this.#options));
  }

  get #methods(): LogMethods {
    return this.#logger as unknown as LogMethods;
  }

  get level(): LevelWithSilentOrString {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }
  set level(level: LevelWithSilentOrString) {
    this.#logger.level = level;
  }

  fatal(...args: unknown[]): void {
    this.#methods.fatal(...args);
  }
  error(...args: unknown[]): void {
    this.#methods.error(...args);
  }
  warn(...args: unknown[]): void {
    this.#methods.warn(...args);
  }
  info(...args: unknown[]): void {
    this.#methods.info(...args);
  }
  debug(...args: unknown[]): void {
    this.#methods.debug(...args);
  }
  trace(...args: unknown[]): void {
    this.#methods.trace(...args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return this.#logger.child(bindings, options);
  }
}

export interface AccessEntry {
  reqId: string;
  method: string;
  url: string;
  remoteAddress: string | undefined;
  statusCode: number;
  responseTime: number;
}

/**
 * The access line of every request, `{level, time, pid, hostname, reqId, req: {method, url, id,
 * remoteAddress}, res: {statusCode}, responseTime, msg}` exactly as `log.info` would write it with
 * the serializers above, but composed directly and written to the logger's own stream: pino's
 * general path (hooks, serializers, path redaction, generic stringify) cost several times the line.
 * The URL is redacted as everywhere else (redactUrl); the line carries no headers and no body.
 */
export function accessLogWriter(log: Logger): (entry: AccessEntry) => void {
  const internals = log as unknown as Record<symbol, unknown>;
  const stream = internals[pino.symbols.streamSym] as DestinationStream | undefined;
  const time = internals[pino.symbols.timeSym] as (() => string) | undefined;
  const chindings = internals[pino.symbols.chindingsSym] as string | undefined;
  const info = pino.levels.values.info!;
  if (!stream || typeof time !== 'function' || typeof chindings !== 'string') {
    return (e) => log.info({ reqId: e.reqId, req: { method: e.method, url: e.url, id: e.reqId, ip: e.remoteAddress }, res: { statusCode: e.statusCode }, responseTime: e.responseTime }, 'request completed');
  }
  // The constant parts joined once: each piece of a template costs a string of its own.
  const head = `{"level":${info}`;
  const afterTime = `${chindings},"reqId":`;
  return (e) => {
    if (log.levelVal > info) return;
    // Request ids (ours or a client's that passed SAFE_REQUEST_ID), methods and addresses rarely need
    // escaping; the test is cheaper than JSON.stringify's general path.
    const id = quote(e.reqId);
    const address = e.remoteAddress === undefined ? '' : `,"remoteAddress":${quote(e.remoteAddress)}`;
    stream.write(
      `${head}${time.call(log)}${afterTime}${id},"req":{"method":${quote(e.method)},"url":${JSON.stringify(redactUrl(e.url))},"id":${id}${address}},` +
        `"res":{"statusCode":${e.statusCode}},"responseTime":${millis(e.responseTime)},"msg":"request completed"}\n`,
    );
  };
}

/**
 * Milliseconds to the microsecond, as a JSON number (`0.412`, `12.030`): integers format several
 * times faster than a double's shortest representation, and the digits past a microsecond were noise.
 */
export function millis(ms: number): string {
  const us = Math.round(ms * 1000);
  if (!(us >= 0 && us <= Number.MAX_SAFE_INTEGER)) return Number.isFinite(ms) ? String(ms) : 'null';
  const frac = us % 1000;
  return `${(us - frac) / 1000}.${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}`;
}

const PLAIN = /^[A-Za-z0-9._:\-]*$/;

/** A JSON string literal: as is when the text has nothing to escape, else JSON.stringify. */
function quote(text: string): string {
  return PLAIN.test(text) ? `"${text}"` : JSON.stringify(text);
}

export function createLogger(level: string, destination: DestinationStream = serviceDestination()): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      hooks: {
        // Messages may quote what a client sent (an unknown field value, a path); scrub credentials there too.
        logMethod(args, method) {
          method.apply(this, args.map((a) => (typeof a === 'string' ? redactText(a) : a)) as Parameters<typeof method>);
        },
      },
      serializers: {
        req: (req: { method: string; url: string; id?: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), id: req.id, remoteAddress: req.ip }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        err: pino.stdSerializers.err,
      },
    },
    destination,
  );
}

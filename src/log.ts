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
 * The service's log destination (stdout by default): lines are buffered and written asynchronously in
 * chunks of at least 4 KiB, and at least every second when fewer come, instead of one blocking
 * write per line. pino flushes the buffer synchronously when the process exits (also on an uncaught
 * exception or `process.exit`); only a kill -9 or a crash of the runtime itself loses the last second
 * of lines (docs/decisions.md).
 */
export function serviceDestination(dest: number | string = 1): DestinationStream {
  return pino.destination({ dest, sync: false, minLength: 4096, periodicFlush: 1000 });
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

// pino, with every place a credential could appear redacted (keys, tokens, secrets, passwords).
import pino, { type Logger, type DestinationStream } from 'pino';

const SENSITIVE_QUERY = /([?&](?:sig|signature|token|access_token|refresh_token|id_token|code|code_verifier|client_secret|password|secret|api_key|apikey|x-api-key|key)=)[^&#]*/gi;
// Credentials recognisable by their shape wherever they turn up (a key pasted into a path or a field):
// API keys, client secrets, webhook secrets, refresh tokens, authorization codes and JWTs.
const CREDENTIAL_SHAPES = /\b(?:sk_(?:test|live)_|cs_|whsec_|rt_|ac_)[A-Za-z0-9+/=_-]{8,}|\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g;

/** Whether `text` holds anything shaped like a key, secret or JWT (what redactText replaces). */
export function holdsCredential(text: string): boolean {
  CREDENTIAL_SHAPES.lastIndex = 0;
  return CREDENTIAL_SHAPES.test(text);
}

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
 * The service's log destination: standard output by default, written synchronously, so a line logged
 * before a crash is never lost.
 */
export function serviceDestination(dest: number | string = 1): DestinationStream {
  return pino.destination({ dest, sync: true });
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

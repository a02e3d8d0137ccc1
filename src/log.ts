// pino, with every place a credential could appear redacted (keys, tokens, secrets, passwords).
import pino, { type Logger, type DestinationStream } from 'pino';

const SENSITIVE_QUERY = /([?&](?:sig|signature|token|access_token|code|client_secret|password|secret)=)[^&#]*/gi;

export function redactUrl(url: string): string {
  return url.replace(SENSITIVE_QUERY, '$1[redacted]');
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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: {
        req: (req: { method: string; url: string; id?: string; ip?: string }) => ({ method: req.method, url: redactUrl(req.url), id: req.id, remoteAddress: req.ip }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        err: pino.stdSerializers.err,
      },
    },
    destination,
  );
}

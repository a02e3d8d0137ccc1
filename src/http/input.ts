// Every string the service takes (JSON and form bodies, query strings, path parameters) refuses
// control characters before a handler or a database sees it: PostgreSQL cannot store NUL in text, and
// the others corrupt printed labels and logs. It refuses unpaired UTF-16 surrogates (`"\ud800"` in
// JSON) too: they are no character, cannot be written as UTF-8, and print as `?`. Headers need no
// check: Node's HTTP parser refuses them.
import type { FastifyInstance, preParsingHookHandler, preValidationHookHandler } from 'fastify';
import { InvalidInput, UnsupportedMediaType } from '../errors.ts';
import { CONTROL } from './schemas.ts';

const CONTROL_CHARACTER = new RegExp(`[${CONTROL}]`);

/** Deeper JSON than this is refused: no request of this API needs it, and walking it must not overflow. */
export const MAX_DEPTH = 64;

export class TooDeep extends Error {}

/** What a string must not hold, and how the refusal says it (null: nothing). */
export function flaw(text: string): string | null {
  if (CONTROL_CHARACTER.test(text)) return 'must not contain control characters';
  if (!text.isWellFormed()) return 'must be well-formed Unicode (it holds an unpaired surrogate)';
  return null;
}

/**
 * The field path of the first string under `value` holding a control character or an unpaired
 * surrogate, with what is wrong, or null; throws TooDeep past MAX_DEPTH (so the walk's own recursion
 * stays shallow). The path is only written out for a finding: a body of 250 addresses is walked
 * without building a string per field.
 */
export function badStringAt(value: unknown, path: string): { field: string; message: string } | null {
  const trail: (string | number)[] = [];
  const found = { message: '' };
  return holdsBadString(value, trail, path, found) ? { field: pathOf(path, trail), message: found.message } : null;
}

/** Depth first in field order, an object's keys before its values; `trail` ends where it stops. */
function holdsBadString(value: unknown, trail: (string | number)[], path: string, found: { message: string }): boolean {
  if (typeof value === 'string') {
    const message = flaw(value);
    if (message) found.message = message;
    return message !== null;
  }
  // A binary body (the logo) holds no text: walking its bytes one key at a time held the event loop
  // for a tenth of a second per 256 KiB.
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return false;
  if (trail.length >= MAX_DEPTH) throw new TooDeep(pathOf(path, trail));
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      trail.push(i);
      if (holdsBadString(value[i], trail, path, found)) return true;
      trail.pop();
    }
    return false;
  }
  const keys = Object.keys(value);
  // Of several bad keys the last is named, as the walk has always done.
  for (let i = keys.length - 1; i >= 0; i--) {
    const message = flaw(keys[i]!);
    if (message) {
      found.message = message;
      trail.push(keys[i]!);
      return true;
    }
  }
  for (const key of keys) {
    trail.push(key);
    if (holdsBadString((value as Record<string, unknown>)[key], trail, path, found)) return true;
    trail.pop();
  }
  return false;
}

/** A JavaScript path, as validation errors name fields: `items[7].shipment.to.name`. */
function pathOf(path: string, trail: (string | number)[]): string {
  let where = path;
  for (const key of trail) where = typeof key === 'number' ? `${where}[${key}]` : where ? `${where}.${key}` : key;
  return where;
}

const refuseControlCharacters: preValidationHookHandler = (request, _reply, done) => {
  for (const [where, value] of [['body', request.body], ['querystring', request.query], ['params', request.params]] as const) {
    let found: { field: string; message: string } | null;
    try {
      found = badStringAt(value, '');
    } catch (err) {
      if (!(err instanceof TooDeep)) throw err;
      done(new InvalidInput(`${where} is nested more than ${MAX_DEPTH} levels deep`, [{ field: err.message || where, message: `is nested more than ${MAX_DEPTH} levels deep` }]));
      return;
    }
    if (found !== null) {
      const name = found.field || where;
      done(new InvalidInput(`${where === 'body' ? '' : `${where} `}${name} ${found.message}`.trim(), [{ field: name, message: found.message }]));
      return;
    }
  }
  done();
};

/**
 * A body is taken as sent: a `Content-Encoding` (gzip, …) is refused rather than parsed as if it
 * were not there, and JSON in a charset other than UTF-8 rather than read as UTF-8 (RFC 9110 §15.5.16).
 */
const refuseEncodedBodies: preParsingHookHandler = (request, _reply, payload, done) => {
  const coding = request.headers['content-encoding']?.trim().toLowerCase();
  if (coding && coding !== 'identity') return done(new UnsupportedMediaType(`Content-Encoding ${coding} is not supported; send the body unencoded`), payload);
  const type = request.headers['content-type'] ?? '';
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(type)?.[1]?.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8' && /^application\/json\b/i.test(type)) {
    return done(new UnsupportedMediaType(`charset ${charset} is not supported; send JSON in UTF-8`), payload);
  }
  done(null, payload);
};

export function installInputChecks(app: FastifyInstance): void {
  app.addHook('preValidation', refuseControlCharacters);
  // Only routes that take a body pay for the encoding check.
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    if (!methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH')) return;
    route.preParsing = route.preParsing === undefined ? [refuseEncodedBodies] : [refuseEncodedBodies, ...[route.preParsing].flat()];
  });
}

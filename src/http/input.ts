// Every string the service takes (JSON and form bodies, query strings, path parameters) refuses
// control characters before a handler or a database sees it: PostgreSQL cannot store NUL in text, and
// the others corrupt printed labels and logs. It refuses unpaired UTF-16 surrogates (`"\ud800"` in
// JSON) too: they are no character, cannot be written as UTF-8, and print as `?`. Headers need no
// check: Node's HTTP parser refuses them.
import type { FastifyInstance, FastifyRequest, preParsingHookHandler, preValidationHookHandler } from 'fastify';
import { InvalidInput, UnsupportedMediaType, type FieldProblem } from '../errors.ts';
import { MAX_DETAILS, validationProblems } from './errors.ts';
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
 * Every string under `value` (keys and values, depth first in field order, an object's keys before
 * its values) holding a control character or an unpaired surrogate, as field paths with what is
 * wrong, at most `limit` of them; throws TooDeep past MAX_DEPTH (so the walk's own recursion stays
 * shallow). A path is only written out for a finding: a body of 250 addresses is walked without
 * building a string per field.
 */
export function badStrings(value: unknown, path: string, limit = MAX_DETAILS): FieldProblem[] {
  const found: FieldProblem[] = [];
  collectBadStrings(value, [], path, found, limit);
  return found;
}

function collectBadStrings(value: unknown, trail: (string | number)[], path: string, found: FieldProblem[], limit: number): void {
  if (found.length >= limit) return;
  if (typeof value === 'string') {
    const message = flaw(value);
    if (message) found.push({ field: pathOf(path, trail), message });
    return;
  }
  // A binary body (the logo) holds no text: walking its bytes one key at a time held the event loop
  // for a tenth of a second per 256 KiB.
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return;
  if (trail.length >= MAX_DEPTH) throw new TooDeep(pathOf(path, trail));
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      trail.push(i);
      collectBadStrings(value[i], trail, path, found, limit);
      trail.pop();
    }
    return;
  }
  const keys = Object.keys(value);
  let badKeys = false;
  for (const key of keys) {
    const message = flaw(key);
    if (!message) continue;
    badKeys = true;
    if (found.length < limit) found.push({ field: pathOf(path, [...trail, key]), message });
  }
  // A bad key's value is not looked into: the key already names the problem.
  for (const key of keys) {
    if (badKeys && flaw(key)) continue;
    trail.push(key);
    collectBadStrings((value as Record<string, unknown>)[key], trail, path, found, limit);
    trail.pop();
  }
}

/** A JavaScript path, as validation errors name fields: `items[7].shipment.to.name`. */
function pathOf(path: string, trail: (string | number)[]): string {
  let where = path;
  for (const key of trail) where = typeof key === 'number' ? `${where}[${key}]` : where ? `${where}.${key}` : key;
  return where;
}

const PARTS = ['body', 'querystring', 'params'] as const;
type Part = (typeof PARTS)[number];

function inputOf(request: FastifyRequest, part: Part): unknown {
  return part === 'body' ? request.body : part === 'querystring' ? request.query : request.params;
}

/**
 * Refuses a request with a bad string before its schema is checked, and, so that a client fixes
 * everything in one go, names in the same 400 every bad string and every problem the schema finds.
 * It is each route's last preValidation hook, so the schema sees what the route's own hooks made of
 * the request (an absent body as `{}`, `ids=a,b` split), as Fastify's validation does next.
 */
const refuseControlCharacters: preValidationHookHandler = (request, _reply, done) => {
  const flaws: (FieldProblem & { part: Part })[] = [];
  for (const part of PARTS) {
    try {
      for (const f of badStrings(inputOf(request, part), '', MAX_DETAILS - flaws.length)) flaws.push({ part, field: f.field || part, message: f.message });
    } catch (err) {
      if (!(err instanceof TooDeep)) throw err;
      done(new InvalidInput(`${part} is nested more than ${MAX_DEPTH} levels deep`, [{ field: err.message || part, message: `is nested more than ${MAX_DEPTH} levels deep` }]));
      return;
    }
  }
  if (flaws.length === 0) return done();
  const first = flaws[0]!;
  const details: FieldProblem[] = flaws.map(({ field, message }) => ({ field, message }));
  const named = new Set(flaws.map((f) => `${f.part} ${f.field}`));
  for (const part of PARTS) {
    const validate = request.getValidationFunction(part);
    if (typeof validate !== 'function' || validate(inputOf(request, part))) continue;
    for (const problem of validationProblems(validate.errors ?? [], part)) {
      if (details.length >= MAX_DETAILS) break;
      if (!named.has(`${part} ${problem.field}`)) details.push(problem);
      named.add(`${part} ${problem.field}`);
    }
  }
  done(new InvalidInput(`${first.part === 'body' ? '' : `${first.part} `}${first.field} ${first.message}`.trim(), details));
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
  app.addHook('onRoute', (route) => {
    const hooks = [route.preValidation ?? []].flat();
    if (!hooks.includes(refuseControlCharacters)) route.preValidation = [...hooks, refuseControlCharacters];
    // Only routes that take a body pay for the encoding check.
    const methods = [route.method].flat();
    if (!methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH')) return;
    route.preParsing = route.preParsing === undefined ? [refuseEncodedBodies] : [refuseEncodedBodies, ...[route.preParsing].flat()];
  });
}

// Every string the service takes (JSON and form bodies, query strings, path parameters) refuses
// control characters before a handler or a database sees it: PostgreSQL cannot store NUL in text, and
// the others corrupt printed labels and logs. Headers need no check: Node's HTTP parser refuses them.
import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import { InvalidInput } from '../errors.ts';

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Deeper JSON than this is refused: no request of this API needs it, and walking it must not overflow. */
export const MAX_DEPTH = 64;

export class TooDeep extends Error {}

/**
 * The field path of the first string under `value` holding a control character, or null. Walks with
 * its own stack (a deeply nested body cannot overflow the call stack) and throws TooDeep past MAX_DEPTH.
 */
export function controlCharacterAt(value: unknown, path: string): string | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value, path, depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    const v = item.value;
    if (typeof v === 'string') {
      if (CONTROL.test(v)) return item.path;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    if (item.depth >= MAX_DEPTH) throw new TooDeep(item.path);
    const entries: [string, unknown][] = Array.isArray(v) ? v.map((x, i) => [`[${i}]`, x]) : Object.entries(v);
    // Reversed onto the stack, so the first field is looked at first.
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      // A JavaScript path, as validation errors name fields: `items[7].shipment.to.name`.
      const where = Array.isArray(v) || !item.path ? `${item.path}${key}` : `${item.path}.${key}`;
      if (!Array.isArray(v) && CONTROL.test(key)) return where;
      stack.push({ value: child, path: where, depth: item.depth + 1 });
    }
  }
  return null;
}

const refuseControlCharacters: preValidationHookHandler = (request, _reply, done) => {
  for (const [where, value] of [['body', request.body], ['querystring', request.query], ['params', request.params]] as const) {
    let field: string | null;
    try {
      field = controlCharacterAt(value, '');
    } catch (err) {
      if (!(err instanceof TooDeep)) throw err;
      done(new InvalidInput(`${where} is nested more than ${MAX_DEPTH} levels deep`, [{ field: err.message || where, message: `is nested more than ${MAX_DEPTH} levels deep` }]));
      return;
    }
    if (field !== null) {
      const name = field || where;
      done(new InvalidInput(`${where === 'body' ? '' : `${where} `}${name} must not contain control characters`.trim(), [{ field: name, message: 'must not contain control characters' }]));
      return;
    }
  }
  done();
};

export function installInputChecks(app: FastifyInstance): void {
  app.addHook('preValidation', refuseControlCharacters);
}

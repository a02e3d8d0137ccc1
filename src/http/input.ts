// Every string the service takes (JSON and form bodies, query strings, path parameters) refuses
// control characters before a handler or a database sees it: PostgreSQL cannot store NUL in text, and
// the others corrupt printed labels and logs. Headers need no check: Node's HTTP parser refuses them.
import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import { InvalidInput } from '../errors.ts';

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** The field path of the first string under `value` holding a control character, or null. */
export function controlCharacterAt(value: unknown, path: string): string | null {
  if (typeof value === 'string') return CONTROL.test(value) ? path : null;
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = controlCharacterAt(value[i], `${path}.${i}`);
      if (found) return found;
    }
    return null;
  }
  for (const [key, v] of Object.entries(value)) {
    const where = path ? `${path}.${key}` : key;
    if (CONTROL.test(key)) return where;
    const found = controlCharacterAt(v, where);
    if (found) return found;
  }
  return null;
}

const refuseControlCharacters: preValidationHookHandler = (request, _reply, done) => {
  for (const [where, value] of [['body', request.body], ['querystring', request.query], ['params', request.params]] as const) {
    const field = controlCharacterAt(value, '');
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

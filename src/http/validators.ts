// The JSON Schema validators of request input: bodies checked strictly (no type coercion, unknown
// fields rejected), query strings and paths coerced. A body is checked to its first problem, then,
// when it is refused and small enough, again for every problem (everyProblem); a form that shows
// every problem beside its field (the dashboard) asks for all of them.
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export function inputValidator(schemas: readonly object[], options: { coerceTypes: false | 'array'; allErrors?: boolean }): Ajv {
  const ajv = addFormats(new Ajv({ coerceTypes: options.coerceTypes, useDefaults: true, removeAdditional: false, allErrors: options.allErrors ?? false, strict: false }));
  for (const s of schemas) ajv.addSchema(s);
  return ajv;
}

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/**
 * The values (objects, arrays, strings, numbers) a refused body may hold for it to be checked again
 * for every problem. Looking for every problem walks the whole body, every item of an array already
 * too long included: a 4 MiB body of a million `{}` held the event loop for seconds that way. A
 * larger refused body is answered with its first problem.
 */
export const EVERY_PROBLEM_VALUES = 20_000;

/** Whether `value` holds at most `limit` values, counted until the limit is passed. */
function holdsAtMost(value: unknown, limit: number): boolean {
  const stack = [value];
  let count = 1;
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    const children = Array.isArray(v) ? v : Object.values(v);
    count += children.length;
    if (count > limit) return false;
    for (const child of children) stack.push(child);
  }
  return true;
}

/** `first` (stops at the first problem) for every body; `every` (all errors) again for a refused one of at most EVERY_PROBLEM_VALUES values. */
export function everyProblem(first: Validate, every: Validate): Validate {
  const check: Validate = (data) => {
    if (first(data)) {
      check.errors = null;
      return true;
    }
    check.errors = first.errors;
    if (holdsAtMost(data, EVERY_PROBLEM_VALUES) && !every(data)) check.errors = every.errors;
    return false;
  };
  return check;
}
type PropertySchema = { type?: unknown; items?: { type?: unknown } };
const DECIMAL: Record<string, RegExp> = { integer: /^-?\d+$/, number: /^-?\d+(\.\d+)?$/ };

/**
 * Ajv reads a number in a query string or path as JavaScript does, so `limit=0x10`, `1e1` or ` 2`
 * passed as 16, 10 and 2. A number there must be written in plain decimal: anything else is refused
 * with the error Ajv gives a value that is not a number at all.
 */
export function decimalNumbersOnly(schema: { properties?: Record<string, PropertySchema> } | undefined, validate: Validate): Validate {
  const numeric = Object.entries(schema?.properties ?? {}).flatMap(([name, s]) => {
    const type = s.type === 'array' ? s.items?.type : s.type;
    return typeof type === 'string' && DECIMAL[type] ? [{ name, type, pattern: DECIMAL[type]! }] : [];
  });
  if (numeric.length === 0) return validate;
  const checked: Validate = (data) => {
    for (const { name, type, pattern } of numeric) {
      const value = (data as Record<string, unknown> | null | undefined)?.[name];
      for (const v of Array.isArray(value) ? value : [value]) {
        if (typeof v !== 'string' || pattern.test(v)) continue;
        checked.errors = [{ instancePath: `/${name}`, schemaPath: `#/properties/${name}/type`, keyword: 'type', params: { type }, message: `must be ${type}` }];
        return false;
      }
    }
    const ok = validate(data);
    checked.errors = validate.errors;
    return ok;
  };
  return checked;
}

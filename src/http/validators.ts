// The JSON Schema validators of request input: bodies checked strictly (no type coercion, unknown
// fields rejected), query strings and paths coerced. The routes stop at the first problem; a form
// that shows every problem beside its field (the dashboard) asks for all of them.
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export function inputValidator(schemas: readonly object[], options: { coerceTypes: false | 'array'; allErrors?: boolean }): Ajv {
  const ajv = addFormats(new Ajv({ coerceTypes: options.coerceTypes, useDefaults: true, removeAdditional: false, allErrors: options.allErrors ?? false, strict: false }));
  for (const s of schemas) ajv.addSchema(s);
  return ajv;
}

type Validate = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };
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

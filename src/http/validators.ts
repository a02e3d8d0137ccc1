// The JSON Schema validators of request input: bodies checked strictly (no type coercion, unknown
// fields rejected), query strings and paths coerced. The routes stop at the first problem; a form
// that shows every problem beside its field (the dashboard) asks for all of them.
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export function inputValidator(schemas: readonly object[], options: { coerceTypes: false | 'array'; allErrors?: boolean }): Ajv {
  const ajv = addFormats(new Ajv({ coerceTypes: options.coerceTypes, useDefaults: true, removeAdditional: false, allErrors: options.allErrors ?? false, strict: false }));
  for (const s of schemas) ajv.addSchema(s);
  return ajv;
}

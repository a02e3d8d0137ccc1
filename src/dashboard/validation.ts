// The API's own checks for what a dashboard form builds: the JSON Schema of the request body (every
// problem at once, so each field shows its message) before the service's rules.
import type { ValidateFunction } from 'ajv';
import { validationProblems } from '../http/errors.ts';
import { flaw } from '../http/input.ts';
import { inputValidator } from '../http/validators.ts';
import type { FieldProblem } from '../errors.ts';
import { createShipmentBody, shipmentBodySchemas } from '../shipments/service.ts';

// As the API checks bodies, but every error rather than the first.
const ajv = inputValidator(shipmentBodySchemas, { coerceTypes: false, allErrors: true });
const compiled = new WeakMap<object, ValidateFunction>();

/** The problems of `body` against a route's body schema, named as the API names them (`to.postalCode`), under `prefix`. */
export function bodyProblems(schema: object, body: unknown, prefix = ''): FieldProblem[] {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  // As the API does before its schema: a control character is named as one, not as a pattern the text fails.
  const flawed: FieldProblem[] = [];
  badStrings(body, '', flawed);
  const named = new Set(flawed.map((p) => p.field));
  const schemaProblems = validate(body) ? [] : validationProblems(validate.errors ?? []).filter((p) => !named.has(p.field));
  return [...flawed, ...schemaProblems].map((p) => ({ ...p, field: p.field === 'body' ? prefix.replace(/\.$/, '') || 'body' : `${prefix}${p.field}` }));
}

/** Every string under `value` holding a control character or an unpaired surrogate, named as the API names fields. */
function badStrings(value: unknown, path: string, out: FieldProblem[]): void {
  if (typeof value === 'string') {
    const message = flaw(value);
    if (message) out.push({ field: path || 'body', message });
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) badStrings(value[i], `${path}[${i}]`, out);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) badStrings(v, path ? `${path}.${key}` : key, out);
  }
}

/** The problems of a shipment body as `POST /v1/shipments` would name them. */
export function shipmentBodyProblems(body: unknown, prefix = ''): FieldProblem[] {
  return bodyProblems(createShipmentBody, body, prefix);
}

/** `a.b[2].c` set on an object, making the objects and arrays on the way (paths are the caller's own, never a request's). */
export function setField(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.match(/[^.[\]]+/g)!;
  let at: Record<string, unknown> = target;
  keys.forEach((key, i) => {
    if (i === keys.length - 1) {
      at[key] = value;
      return;
    }
    at[key] ??= /^\d+$/.test(keys[i + 1]!) ? [] : {};
    at = at[key] as Record<string, unknown>;
  });
}

/**
 * How to write a number typed with a comma, for the message that refuses it: `1,5` is a decimal comma
 * (`1.5`); `1,500` may be a thousands separator, so no number is suggested for it. '' without a comma.
 */
export function commaHint(text: string): string {
  if (/^\d+,\d{1,2}$/.test(text)) return ` (write decimals with a point: ${text.replace(',', '.')})`;
  return text.includes(',') ? ' (write it with a decimal point and no separators, like 1.5 or 1500)' : '';
}

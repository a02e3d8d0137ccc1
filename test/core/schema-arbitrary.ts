// fast-check arbitraries generated from the JSON Schemas of an OpenAPI 3.1 document: values a schema
// accepts, and values broken in one place (a required field gone, an unknown field, a wrong type, a
// control character, a string far too long), for the property-based conformance test.
import fc from 'fast-check';

type Schema = Record<string, any>;

/** The schema a `$ref` names inside the document. */
export function resolve(schema: Schema, doc: Schema): Schema {
  let s = schema;
  for (let depth = 0; typeof s?.$ref === 'string' && depth < 10; depth++) {
    s = s.$ref
      .replace(/^#\//, '')
      .split('/')
      .map((p: string) => p.replace(/~1/g, '/').replace(/~0/g, '~'))
      .reduce((node: Schema, key: string) => node?.[key], doc);
  }
  return s ?? {};
}

function stringOf(s: Schema): fc.Arbitrary<string> {
  const min = s.minLength ?? 0;
  const max = Math.min(s.maxLength ?? 40, 200);
  if (s.format === 'uuid') return fc.uuid({ version: 7 });
  if (s.format === 'date-time') return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
  if (s.format === 'uri') return fc.constantFrom('https://hooks.example.org/shipping', 'http://127.0.0.1:9/hook', 'https://shop.example.com/a?b=c');
  if (s.pattern) return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length >= min && v.length <= max);
  return fc.string({ minLength: min, maxLength: max, unit: 'grapheme' });
}

function numberOf(s: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + (integer ? 1 : 1e-3) : -1e6);
  const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - (integer ? 1 : 1e-3) : 1e6);
  return integer ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
}

/** Values `schema` accepts (for the keywords this service's schemas use). */
export function valid(schema: Schema, doc: Schema, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema, doc);
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum);
  if (Array.isArray(s.oneOf ?? s.anyOf)) return fc.oneof(...(s.oneOf ?? s.anyOf).map((x: Schema) => valid(x, doc, depth + 1)));
  const types: string[] = Array.isArray(s.type) ? s.type : s.type ? [s.type] : s.properties ? ['object'] : ['string'];
  return fc.oneof(
    ...types.map((type): fc.Arbitrary<unknown> => {
      switch (type) {
        case 'null':
          return fc.constant(null);
        case 'boolean':
          return fc.boolean();
        case 'integer':
          return numberOf(s, true);
        case 'number':
          return numberOf(s, false);
        case 'array':
          return fc.array(valid(s.items ?? {}, doc, depth + 1), { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 3, 3) });
        case 'object': {
          const properties: Record<string, Schema> = s.properties ?? {};
          const required: string[] = s.required ?? [];
          // Deep optional fields are left out past a few levels, so values stay small.
          const keys = Object.keys(properties).filter((k) => required.includes(k) || depth < 3);
          const record = fc.record(Object.fromEntries(keys.map((k) => [k, valid(properties[k]!, doc, depth + 1)])), { requiredKeys: keys.filter((k) => required.includes(k)) });
          // A value that depends on another field: a service of the carrier chosen (x-services-by-carrier).
          const byCarrier = properties.service?.['x-services-by-carrier'] as Record<string, string[]> | undefined;
          if (!byCarrier) return record;
          return record.chain((v) => {
            const services = byCarrier[(v as { carrier?: string }).carrier ?? ''];
            return services ? fc.constantFrom(...services).map((service) => ({ ...v, service })) : fc.constant(v);
          });
        }
        default:
          return stringOf(s);
      }
    }),
  );
}

/** The paths of the string leaves of a value. */
export function stringLeaves(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringLeaves(v, [...path, i]));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, [...path, k]));
  return [];
}

/** `value` with the string at `path` changed by `change`. */
export function changedAt(value: unknown, path: (string | number)[], change: (s: string) => string): unknown {
  if (path.length === 0) return change(value as string);
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? changedAt(v, rest, change) : v));
  return { ...(value as Record<string, unknown>), [head!]: changedAt((value as Record<string, unknown>)[head!], rest, change) };
}

/** A value of `schema` broken in exactly one place. */
export function broken(schema: Schema, doc: Schema): fc.Arbitrary<unknown> {
  const s = resolve(schema, doc);
  const wrongType = fc.constantFrom<unknown>(12345, 'text', true, [], { nested: 1 }, null);
  if (s.type !== 'object' && !s.properties) {
    return fc.oneof(wrongType, fc.constant('\u0000'), fc.constant('x'.repeat(5000)));
  }
  const properties: Record<string, Schema> = s.properties ?? {};
  const required: string[] = s.required ?? [];
  return valid(s, doc).chain((value) => {
    const v = { ...(value as Record<string, unknown>) };
    const names = Object.keys(properties);
    const cases: fc.Arbitrary<unknown>[] = [fc.constant({ ...v, unknownField: 1 }), wrongType];
    if (required.length) cases.push(fc.constantFrom(...required).map((k) => Object.fromEntries(Object.entries(v).filter(([key]) => key !== k))));
    if (names.length) {
      cases.push(fc.tuple(fc.constantFrom(...names), wrongType).map(([k, bad]) => ({ ...v, [k]: bad })));
      cases.push(fc.constantFrom(...names).map((k) => ({ ...v, [k]: 'x'.repeat(5000) })));
    }
    // A control character in one string however deep, or in every string (NUL is what PostgreSQL
    // cannot store): together as likely as all the other breakages.
    const leaves = stringLeaves(v);
    if (!leaves.length) return fc.oneof(...cases);
    const char = fc.constantFrom('\u0000', '\u0007', '\u001b');
    const control = fc.oneof(
      fc.tuple(fc.constantFrom(...leaves), char).map(([leaf, c]) => changedAt(v, leaf, (s) => `${s}${c}`)),
      char.map((c) => leaves.reduce<unknown>((value, leaf) => changedAt(value, leaf, (s) => `${s}${c}`), v)),
    );
    return fc.oneof({ weight: 1, arbitrary: fc.oneof(...cases) }, { weight: 1, arbitrary: control });
  });
}

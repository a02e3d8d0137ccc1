// The API's own checks for what a dashboard form builds: the JSON Schema of the request body (every
// problem at once, so each field shows its message) before the service's rules.
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { validationProblems } from '../http/errors.ts';
import type { FieldProblem } from '../errors.ts';
import { createShipmentBody, shipmentBodySchemas, type NewShipment } from '../shipments/service.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

// As the API checks bodies (no coercion), but every error rather than the first.
const ajv = addFormats(new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: true, strict: false }));
for (const s of shipmentBodySchemas) ajv.addSchema(s);
let shipmentValidator: ValidateFunction | undefined;

/** The problems of a shipment body as `POST /v1/shipments` would name them (`to.postalCode`), or none. */
export function shipmentBodyProblems(body: unknown, prefix = ''): FieldProblem[] {
  shipmentValidator ??= ajv.compile(createShipmentBody);
  if (shipmentValidator(body)) return [];
  return validationProblems(shipmentValidator.errors ?? []).map((p) => ({ ...p, field: p.field === 'body' ? prefix.replace(/\.$/, '') || 'body' : `${prefix}${p.field}` }));
}

export type { NewShipment };

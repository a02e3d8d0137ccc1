import type { AppContext } from '../context.ts';
import type { Db, Tx } from '../db/index.ts';
import { isoNow, uuidv7 } from '../db/ids.ts';
import { recordDomainEvent } from '../db/events.ts';
import { InvalidInput, NotFound } from '../errors.ts';
import { addressProblems } from '../addresses/service.ts';
import { SERVICES, findService, type Carrier } from '../carriers/services.ts';
import type { Page } from '../db/page.ts';
import * as store from './store.ts';
import type { Address, Parcel } from '../carriers/types.ts';
import { addressSchema, parcelSchema } from './schemas.ts';

export type { Address, Parcel };

export interface NewShipment {
  carrier: Carrier;
  service: string;
  from: Address;
  to: Address;
  parcel: Parcel;
  reference?: string;
  messages?: string[];
}

export interface Shipment extends NewShipment {
  id: string;
  status: string;
  label?: { id: string; trackingNumber: string; carrier: string };
  createdAt: string;
  updatedAt: string;
}

export function toShipment(row: store.ShipmentRow): Shipment {
  const s: Shipment = {
    id: row.id,
    carrier: row.carrier as Carrier,
    service: row.service,
    from: JSON.parse(row.from_address),
    to: JSON.parse(row.to_address),
    parcel: JSON.parse(row.parcel),
    status: row.status,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.reference !== null) s.reference = row.reference;
  if (row.messages !== null) s.messages = JSON.parse(row.messages) as string[];
  if (row.label_id && row.tracking_number) s.label = { id: row.label_id, trackingNumber: row.tracking_number, carrier: row.carrier };
  return s;
}

interface ObjectSchema {
  required?: readonly string[];
  properties?: Record<string, unknown>;
}

/**
 * `value` with its keys in the order the response serializer (fast-json-stringify) writes them: the
 * schema's required properties first, then the others, nested objects too. The stored address and
 * parcel JSON then reads exactly as the POST answer did, whatever order the client sent the keys in.
 */
function inSchemaOrder(value: unknown, schema: ObjectSchema): unknown {
  if (!schema.properties || typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const source = value as Record<string, unknown>;
  const required = schema.required ?? [];
  const keys = [...required, ...Object.keys(schema.properties).filter((k) => !required.includes(k))];
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    if (key in source) out[key] = inSchemaOrder(source[key], schema.properties[key] as ObjectSchema);
  }
  return out;
}

/** Every check of a new shipment that needs no database: 400 naming the field (under `prefix`). */
export function checkShipment(input: NewShipment, prefix = ''): void {
  if (!findService(input.carrier, input.service)) {
    const known = SERVICES[input.carrier].map((s) => s.code).join(', ');
    throw new InvalidInput(`${prefix}service ${input.service} is not offered by ${input.carrier}; choose one of ${known}`, [{ field: `${prefix}service`, message: `must be one of ${known}` }]);
  }
  const problems = [...addressProblems(input.from, `${prefix}from`), ...addressProblems(input.to, `${prefix}to`)];
  if (problems.length) throw new InvalidInput(`${problems[0]!.field}: ${problems[0]!.message}`, problems);
  const p = input.parcel;
  const dims = [p.length, p.width, p.height].filter((d) => d !== undefined).length;
  if (dims !== 0 && (dims !== 3 || !p.dimensionUnit)) {
    throw new InvalidInput(`${prefix}parcel dimensions need length, width, height and dimensionUnit together`, [{ field: `${prefix}parcel`, message: 'incomplete dimensions' }]);
  }
}

export async function createShipment(ctx: AppContext, accountId: string, input: NewShipment): Promise<Shipment> {
  checkShipment(input);
  return ctx.db.transaction().execute((tx) => insertShipment(tx, accountId, input));
}

/** Writes a checked new shipment and its `shipment.created` event inside the caller's transaction. */
export async function insertShipment(tx: Tx, accountId: string, input: NewShipment): Promise<Shipment> {
  const now = isoNow();
  const row: store.ShipmentRow = {
    id: uuidv7(),
    account_id: accountId,
    carrier: input.carrier,
    service: input.service,
    from_address: JSON.stringify(inSchemaOrder(input.from, addressSchema)),
    to_address: JSON.stringify(inSchemaOrder(input.to, addressSchema)),
    parcel: JSON.stringify(inSchemaOrder(input.parcel, parcelSchema)),
    reference: input.reference ?? null,
    messages: input.messages?.length ? JSON.stringify(input.messages) : null,
    status: 'created',
    label_id: null,
    tracking_number: null,
    created_at: now,
    updated_at: now,
  };
  const shipment = toShipment(row);
  await store.insertShipment(tx, row);
  await recordDomainEvent(tx, { accountId, type: 'shipment.created', subjectId: row.id, data: shipment, at: now });
  return shipment;
}

/** The shipment of this account, or NOT_FOUND (also for another account's id). */
export async function getShipment(db: Db | Tx, accountId: string, id: string): Promise<Shipment> {
  const row = await store.findShipment(db, accountId, id);
  if (!row) throw notFound(id);
  return toShipment(row);
}

/** NOT_FOUND naming the id: also what another account's shipment answers. */
function notFound(id: string): NotFound {
  return new NotFound('shipment', id);
}

export async function listShipments(ctx: AppContext, accountId: string, page: Page): Promise<Shipment[]> {
  return (await store.listShipments(ctx.db, accountId, page)).map(toShipment);
}

// ---- what the other capabilities do to a shipment, inside their own transactions ----

/** Any accounts' shipments by id, in no particular order (ids come from the caller's own rows). */
export async function shipmentsByIds(tx: Db | Tx, ids: string[]): Promise<Shipment[]> {
  if (ids.length === 0) return [];
  return (await store.findShipmentsByIds(tx, [...new Set(ids)])).map(toShipment);
}

/** Records (or clears, with null) the shipment's active label. */
export async function attachLabel(tx: Tx, shipmentId: string, label: { id: string; trackingNumber: string } | null, at: string): Promise<void> {
  await store.setShipmentLabel(tx, shipmentId, label, at);
}

/** Records the status its active label's tracking reached. */
export async function recordShipmentStatus(tx: Tx, shipmentId: string, status: string, at: string): Promise<void> {
  await store.updateShipmentStatus(tx, shipmentId, status, at);
}

/** The body of `POST /v1/shipments`, for capabilities that take a shipment inside their own (batches). */
export { createShipmentBody } from './schemas.ts';

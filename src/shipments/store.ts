import type { Db, Tx } from '../db/index.ts';
import { preparedQuery, sqliteTextNow } from '../db/prepared.ts';
import type { ShipmentsTable } from '../db/schema.ts';
import type { Page } from '../http/pagination.ts';

export type ShipmentRow = ShipmentsTable;

export async function insertShipment(tx: Tx | Db, row: ShipmentRow): Promise<void> {
  await tx.insertInto('shipments').values(row).execute();
}

const shipmentById = preparedQuery((db, id: string, accountId: string) => db.selectFrom('shipments').selectAll().where('id', '=', id).where('account_id', '=', accountId));

export async function findShipment(db: Db | Tx, accountId: string, id: string): Promise<ShipmentRow | undefined> {
  return (await shipmentById(db, id, accountId))[0];
}

/**
 * The shipment's JSON answer as SQLite composes it, the same text as `shipmentJson` (service.ts) makes
 * of the row, key for key and byte for byte (test/shipments/shipments.test.ts holds the two equal for
 * any row; change them together). The read then gets one flat string from the database instead of
 * thirteen columns to join: the hottest read of the API (bench/api.bench.ts). `json_quote` escapes
 * text as JSON.stringify does; the address and parcel columns hold JSON already.
 */
const SHIPMENT_JSON_SQL =
  `select '{"id":' || json_quote(id) || ',"carrier":' || json_quote(carrier) || ',"service":' || json_quote(service)` +
  ` || ',"from":' || from_address || ',"to":' || to_address || ',"parcel":' || parcel` +
  ` || ',"status":' || json_quote(status) || ',"createdAt":' || json_quote(created_at)` +
  ` || case when reference is null then '' else ',"reference":' || json_quote(reference) end` +
  ` || case when label_id <> '' and tracking_number <> ''` +
  ` then ',"label":{"id":' || json_quote(label_id) || ',"trackingNumber":' || json_quote(tracking_number) || ',"carrier":' || json_quote(carrier) || '}'` +
  ` else '' end || ',"updatedAt":' || json_quote(updated_at) || '}' as json from shipments where id = ? and account_id = ?`;

/** The shipment's JSON composed by SQLite, at once (null: none in this account); undefined where the database has no read connection. */
export function findShipmentJsonNow(db: Db | Tx, accountId: string, id: string): string | null | undefined {
  return sqliteTextNow(db, SHIPMENT_JSON_SQL, [id, accountId]);
}

export async function listShipments(db: Db, accountId: string, page: Page): Promise<ShipmentRow[]> {
  let q = db.selectFrom('shipments').selectAll().where('account_id', '=', accountId);
  if (page.before) q = q.where('id', '<', page.before);
  return q.orderBy('id', 'desc').limit(page.limit + 1).execute();
}

export async function updateShipmentStatus(tx: Tx | Db, id: string, status: string, at: string): Promise<void> {
  await tx.updateTable('shipments').set({ status, updated_at: at }).where('id', '=', id).execute();
}

/** Records (or clears, with null) the shipment's active label. */
export async function setShipmentLabel(tx: Tx | Db, id: string, label: { id: string; trackingNumber: string } | null, at: string): Promise<void> {
  await tx.updateTable('shipments').set({ label_id: label?.id ?? null, tracking_number: label?.trackingNumber ?? null, updated_at: at }).where('id', '=', id).execute();
}

import type { Db, Tx } from '../db/index.ts';
import type { ShipmentsTable } from '../db/schema.ts';
import type { Page } from '../db/page.ts';

export type ShipmentRow = ShipmentsTable;

export async function insertShipment(tx: Tx | Db, row: ShipmentRow): Promise<void> {
  await tx.insertInto('shipments').values(row).execute();
}

export async function findShipment(db: Db | Tx, accountId: string, id: string): Promise<ShipmentRow | undefined> {
  return db.selectFrom('shipments').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
}

export async function findShipmentsByIds(db: Db | Tx, ids: string[]): Promise<ShipmentRow[]> {
  return db.selectFrom('shipments').selectAll().where('id', 'in', ids).execute();
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

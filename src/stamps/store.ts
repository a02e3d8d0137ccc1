import type { Db, DialectName, Tx } from '../db/index.ts';
import { nextCounter } from '../db/index.ts';
import { isoNow } from '../db/ids.ts';
import type { StampsTable } from '../db/schema.ts';

export type StampRow = StampsTable;

export async function insertStamp(tx: Tx | Db, row: StampRow): Promise<void> {
  await tx.insertInto('stamps').values(row).execute();
}

export async function findStamp(db: Db | Tx, accountId: string, id: string): Promise<StampRow | undefined> {
  return db.selectFrom('stamps').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
}

/** Any account's stamp: for the signed download link, which is not account-scoped. */
export async function findStampById(db: Db, id: string): Promise<StampRow | undefined> {
  return db.selectFrom('stamps').selectAll().where('id', '=', id).executeTakeFirst();
}

/** What verification needs to know about a stamp, whichever account it belongs to. */
export async function findStampState(db: Db, id: string): Promise<Pick<StampRow, 'id' | 'serial' | 'shipment_id' | 'status' | 'expires_at'> | undefined> {
  return db.selectFrom('stamps').select(['id', 'serial', 'shipment_id', 'status', 'expires_at']).where('id', '=', id).executeTakeFirst();
}

export async function findActiveStampOfShipment(db: Db | Tx, shipmentId: string): Promise<Pick<StampRow, 'id'> | undefined> {
  return db.selectFrom('stamps').select('id').where('shipment_id', '=', shipmentId).where('status', '=', 'active').executeTakeFirst();
}

/** The next serial number of the account; inside the inserting transaction, so a rollback returns it. */
export async function nextSerialNumber(tx: Tx, accountId: string): Promise<number> {
  return nextCounter(tx, `stamp-serial:${accountId}`);
}

/**
 * The account's issuer code, assigned on its first stamp. Runs outside any stamp transaction: once
 * committed the code is the account's for good, and the counter never hands it out again.
 */
export async function issuerCode(db: Db, accountId: string): Promise<number> {
  const existing = await db.selectFrom('stamp_issuers').select('code').where('account_id', '=', accountId).executeTakeFirst();
  if (existing) return Number(existing.code);
  const code = await nextCounter(db, 'stamp-issuer-codes');
  await db
    .insertInto('stamp_issuers')
    .values({ account_id: accountId, code, created_at: isoNow() })
    .onConflict((oc) => oc.column('account_id').doNothing())
    .execute();
  // Another process may have won the race: its code is the one that counts.
  const row = await db.selectFrom('stamp_issuers').select('code').where('account_id', '=', accountId).executeTakeFirstOrThrow();
  return Number(row.code);
}

/**
 * Invalidates every listed stamp of the account that is still active; returns the ids that exist.
 * PostgreSQL first locks the rows in id order, so overlapping batches wait for each other instead of
 * deadlocking; SQLite writes first, so the transaction takes the write lock before it reads anything.
 */
export async function invalidateStamps(tx: Tx, dialect: DialectName, accountId: string, ids: string[], at: string): Promise<Set<string>> {
  let found: Set<string> | undefined;
  if (dialect === 'postgres') {
    const locked = await tx.selectFrom('stamps').select('id').where('account_id', '=', accountId).where('id', 'in', ids).orderBy('id').forUpdate().execute();
    found = new Set(locked.map((r) => r.id));
  }
  await tx
    .updateTable('stamps')
    .set({ status: 'invalidated', invalidated_at: at })
    .where('account_id', '=', accountId)
    .where('id', 'in', ids)
    .where('status', '=', 'active')
    .execute();
  if (!found) {
    const rows = await tx.selectFrom('stamps').select('id').where('account_id', '=', accountId).where('id', 'in', ids).execute();
    found = new Set(rows.map((r) => r.id));
  }
  return found;
}

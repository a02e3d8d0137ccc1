import { sql } from 'kysely';
import type { DialectName, Db, Tx } from '../db/index.ts';
import type { BatchItemsTable, BatchesTable, PrintFilesTable } from '../db/schema.ts';
import type { Page } from '../db/page.ts';

export type BatchRow = BatchesTable;
export type BatchItemRow = BatchItemsTable;
export type PrintFileRow = PrintFilesTable;

export async function insertBatch(tx: Tx, batch: BatchRow, items: BatchItemRow[]): Promise<void> {
  await tx.insertInto('batches').values(batch).execute();
  // In slices: a statement has at most a few thousand parameters on either database.
  for (let i = 0; i < items.length; i += 100) await tx.insertInto('batch_items').values(items.slice(i, i + 100)).execute();
}

export async function findBatch(db: Db | Tx, accountId: string, id: string): Promise<BatchRow | undefined> {
  return db.selectFrom('batches').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
}

/**
 * The account's newest batch of this name with ids from `afterId` on (ids sort by creation time, so
 * the account's index reads only that stretch), still processing or with a label made, if any.
 */
export async function findBatchNamed(db: Db, accountId: string, name: string, afterId: string): Promise<BatchRow | undefined> {
  return db
    .selectFrom('batches')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '>', afterId)
    .where('name', '=', name)
    .where((eb) => eb.or([eb('status', '=', 'processing'), eb('succeeded', '>', 0)]))
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function listBatches(db: Db, accountId: string, page: Page): Promise<BatchRow[]> {
  let q = db.selectFrom('batches').selectAll().where('account_id', '=', accountId);
  if (page.before) q = q.where('id', '<', page.before);
  return q.orderBy('id', 'desc').limit(page.limit + 1).execute();
}

export async function batchItems(db: Db | Tx, batchId: string): Promise<BatchItemRow[]> {
  return db.selectFrom('batch_items').selectAll().where('batch_id', '=', batchId).orderBy('idx').execute();
}

/** The oldest batch still processing, if any (a cheap look before a transaction). */
/**
 * Up to `limit` batches still processing, in the order they were posted, starting after `after` and
 * going round to the first ones: the turns of a worker that served `after` last.
 */
export async function processingBatches(db: Db, after: string | null, limit: number): Promise<Pick<BatchRow, 'id'>[]> {
  let q = db.selectFrom('batches').select('id').where('status', '=', 'processing');
  // Those after `after` first, then the rest from the start: one statement, in either order by id.
  if (after !== null) q = q.orderBy(sql`case when id > ${after} then 0 else 1 end`);
  return q.orderBy('id').limit(limit).execute();
}

/**
 * The batch, locked on PostgreSQL until the transaction ends, so one worker at a time does its next
 * item; undefined while another worker holds it (SKIP LOCKED), so that worker turns to another batch.
 */
export async function lockBatch(tx: Tx, dialect: DialectName, id: string): Promise<BatchRow | undefined> {
  let q = tx.selectFrom('batches').selectAll().where('id', '=', id);
  if (dialect === 'postgres') q = q.forUpdate().skipLocked();
  return q.executeTakeFirst();
}

export async function findItem(tx: Tx, batchId: string, idx: number): Promise<BatchItemRow | undefined> {
  return tx.selectFrom('batch_items').selectAll().where('batch_id', '=', batchId).where('idx', '=', idx).executeTakeFirst();
}

export async function finishItem(tx: Tx, batchId: string, idx: number, outcome: Pick<BatchItemRow, 'shipment_id' | 'label_id' | 'tracking_number' | 'error'>): Promise<void> {
  await tx.updateTable('batch_items').set(outcome).where('batch_id', '=', batchId).where('idx', '=', idx).execute();
}

export async function advanceBatch(tx: Tx, id: string, changes: Pick<BatchRow, 'next_index' | 'succeeded' | 'failed' | 'status' | 'completed_at'>): Promise<void> {
  await tx.updateTable('batches').set(changes).where('id', '=', id).execute();
}

export async function insertPrintFile(db: Db | Tx, row: PrintFileRow): Promise<void> {
  await db.insertInto('print_files').values(row).execute();
}

/** Any account's print file: only for downloads, whose signed link is the credential. */
export async function findPrintFileForDownload(db: Db, id: string): Promise<PrintFileRow | undefined> {
  return db.selectFrom('print_files').selectAll().where('id', '=', id).executeTakeFirst();
}

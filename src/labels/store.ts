import { sql } from 'kysely';
import { byParts, type Db, type Tx } from '../db/index.ts';
import { allColumns, type LabelsTable } from '../db/schema.ts';
import type { Page } from '../db/page.ts';

export type LabelRow = LabelsTable;

const columns = allColumns<LabelsTable>()(['id', 'account_id', 'shipment_id', 'carrier', 'service', 'tracking_number', 'format', 'size', 'status', 'label_data', 'created_at', 'expires_at', 'invalidated_at', 'manifest_id', 'is_return']);

const recordColumns = ['id', 'account_id', 'shipment_id', 'carrier', 'service', 'tracking_number', 'status', 'created_at'] as const;
export type LabelRecord = Pick<LabelRow, (typeof recordColumns)[number]>;

export async function insertLabel(tx: Tx | Db, row: LabelRow): Promise<void> {
  await tx.insertInto('labels').values(row).execute();
}

/** The label of this account (another account's label is not found). */
export async function findLabel(db: Db | Tx, accountId: string, id: string): Promise<LabelRow | undefined> {
  return db.selectFrom('labels').select(columns).where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
}

/** Any account's label: only for downloads, whose signed link is the credential. */
export async function findLabelForDownload(db: Db, id: string): Promise<LabelRow | undefined> {
  return db.selectFrom('labels').select(columns).where('id', '=', id).executeTakeFirst();
}

export async function findActiveLabel(db: Db | Tx, accountId: string, shipmentId: string): Promise<Pick<LabelRow, 'id'> | undefined> {
  return db
    .selectFrom('labels')
    .select('id')
    .where('shipment_id', '=', shipmentId)
    .where('account_id', '=', accountId)
    // A literal, not a parameter: only then can both databases use the partial index labels_one_active.
    .where('status', '=', sql.lit('active'))
    .executeTakeFirst();
}

/** Marks an active label invalidated; returns the row it changed, or undefined if none was active. */
export async function invalidateLabel(tx: Tx, accountId: string, id: string, at: string): Promise<Pick<LabelRow, 'shipment_id'> | undefined> {
  return tx
    .updateTable('labels')
    .set({ status: 'invalidated', invalidated_at: at })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('status', '=', 'active')
    // A label a manifest claimed at the same moment stays active (the caller answers 409).
    .where('manifest_id', 'is', null)
    .returning('shipment_id')
    .executeTakeFirst();
}

/**
 * The account's labels among these tracking numbers. The account is checked here, not in the WHERE:
 * given `account_id = ?` too, SQLite (with no statistics) walks the account's index instead of the
 * unique tracking numbers, about 1 ms for a batch of five once an account has a few hundred labels.
 */
export async function findLabelsByTrackingNumbers(db: Db | Tx, accountId: string, numbers: string[]): Promise<LabelRecord[]> {
  const rows = await db.selectFrom('labels').select(recordColumns).where('tracking_number', 'in', numbers).execute();
  return rows.filter((row) => row.account_id === accountId);
}

export async function findLabelRecord(db: Db | Tx, accountId: string | null, id: string): Promise<LabelRecord | undefined> {
  let q = db.selectFrom('labels').select(recordColumns).where('id', '=', id);
  if (accountId !== null) q = q.where('account_id', '=', accountId);
  return q.executeTakeFirst();
}

export async function activeLabelsAfter(db: Db, afterId: string, limit: number): Promise<LabelRecord[]> {
  return db.selectFrom('labels').select(recordColumns).where('id', '>', afterId).where('status', '=', 'active').orderBy('id').limit(limit).execute();
}

export interface LabelFilter {
  status?: string;
  carrier?: string;
  /** UTC ISO, exclusive bounds on created_at. */
  createdAfter?: string;
  createdBefore?: string;
}

/** This account's labels, newest first (ids sort by creation time), one page plus one to tell there is more. */
export async function listLabels(db: Db, accountId: string, page: Page, filter: LabelFilter): Promise<LabelRow[]> {
  let q = db.selectFrom('labels').select(columns).where('account_id', '=', accountId);
  if (page.before) q = q.where('id', '<', page.before);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.carrier) q = q.where('carrier', '=', filter.carrier);
  if (filter.createdAfter) q = q.where('created_at', '>', filter.createdAfter);
  if (filter.createdBefore) q = q.where('created_at', '<', filter.createdBefore);
  return q.orderBy('id', 'desc').limit(page.limit + 1).execute();
}

// ---- the account's logo ----

export async function findLogo(db: Db | Tx, accountId: string): Promise<string | undefined> {
  return (await db.selectFrom('account_logos').select('logo').where('account_id', '=', accountId).executeTakeFirst())?.logo;
}

export async function upsertLogo(db: Db, accountId: string, logo: string, at: string): Promise<void> {
  await db
    .insertInto('account_logos')
    .values({ account_id: accountId, logo, updated_at: at })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ logo, updated_at: at }))
    .execute();
}

export async function deleteLogo(db: Db, accountId: string): Promise<void> {
  await db.deleteFrom('account_logos').where('account_id', '=', accountId).execute();
}

export async function findLabelsForPrint(db: Db, accountId: string, ids: string[]): Promise<Pick<LabelRow, 'id' | 'status' | 'label_data'>[]> {
  return byParts(ids, (part) => db.selectFrom('labels').select(['id', 'status', 'label_data']).where('account_id', '=', accountId).where('id', 'in', part).execute());
}

/**
 * This account's active labels among `ids` that can still be downloaded (`expires_at` after `now`)
 * and whose snapshot declares customs, with what their documents' links need. The snapshot is
 * matched in the database, so the others' (which may carry the account's logo) are not read.
 */
export async function findLabelsWithCustoms(db: Db, accountId: string, ids: string[]): Promise<Pick<LabelRow, 'id' | 'label_data' | 'expires_at'>[]> {
  return byParts(ids, (part) =>
    db
      .selectFrom('labels')
      .select(['id', 'label_data', 'expires_at'])
      .where('account_id', '=', accountId)
      .where('id', 'in', part)
      .where('status', '=', 'active')
      .where('label_data', 'like', '%"customsForm"%')
      .execute(),
  );
}

// ---- manifests ----

/** The manifest this account's label is on, if any. */
export async function manifestOf(db: Db | Tx, accountId: string, id: string): Promise<string | null | undefined> {
  return (await db.selectFrom('labels').select('manifest_id').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst())?.manifest_id;
}

/** What a manifest needs of a label: the checks of a named one (§14), and what its document prints. */
const manifestColumns = ['id', 'status', 'carrier', 'manifest_id', 'is_return', 'tracking_number', 'label_data'] as const;
export type ManifestCandidateRow = Pick<LabelRow, (typeof manifestColumns)[number]>;

export async function findLabelsForManifest(db: Db | Tx, accountId: string, ids: string[]): Promise<ManifestCandidateRow[]> {
  return byParts(ids, (part) => db.selectFrom('labels').select(manifestColumns).where('account_id', '=', accountId).where('id', 'in', part).execute());
}

/** The account's labels of the carrier a manifest made now could take (active, on none yet, not a return's), in id order. */
export async function findWaitingForManifest(db: Db | Tx, accountId: string, carrier: string): Promise<ManifestCandidateRow[]> {
  return db
    .selectFrom('labels')
    .select(manifestColumns)
    .where('account_id', '=', accountId)
    .where('carrier', '=', carrier)
    .where('status', '=', 'active')
    .where('manifest_id', 'is', null)
    .where('is_return', '=', 0)
    .orderBy('id')
    .execute();
}

/**
 * Sets the manifest on those of `ids` still active and on none; returns the ids it set it on. In id
 * order, a part at a time (`byParts`), as every writer locks labels: two overlapping lists cannot deadlock.
 */
export async function claimLabels(tx: Tx, accountId: string, ids: string[], manifestId: string): Promise<string[]> {
  const claimed = await byParts([...ids].sort(), (part) =>
    tx
      .updateTable('labels')
      .set({ manifest_id: manifestId })
      .where('account_id', '=', accountId)
      .where('id', 'in', part)
      .where('status', '=', 'active')
      .where('manifest_id', 'is', null)
      .returning('id')
      .execute(),
  );
  return claimed.map((r) => r.id);
}

/** The tracking numbers of a manifest's labels, in label-id order (the order every writer locks tracking states in). */
export async function trackingNumbersOnManifest(db: Db | Tx, manifestId: string): Promise<string[]> {
  return (await db.selectFrom('labels').select('tracking_number').where('manifest_id', '=', manifestId).orderBy('id').execute()).map((r) => r.tracking_number);
}

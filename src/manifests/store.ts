import type { Db, Tx } from '../db/index.ts';
import type { ManifestsTable } from '../db/schema.ts';
import type { Page } from '../db/page.ts';

export type ManifestRow = ManifestsTable;

export async function insertManifest(tx: Tx, row: ManifestRow): Promise<void> {
  await tx.insertInto('manifests').values(row).execute();
}

export async function findManifest(db: Db, accountId: string, id: string): Promise<ManifestRow | undefined> {
  return db.selectFrom('manifests').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
}

/** Any account's manifest: only for downloads, whose signed link is the credential. */
export async function findManifestForDownload(db: Db, id: string): Promise<ManifestRow | undefined> {
  return db.selectFrom('manifests').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listManifests(db: Db, accountId: string, page: Page): Promise<ManifestRow[]> {
  let q = db.selectFrom('manifests').selectAll().where('account_id', '=', accountId);
  if (page.before) q = q.where('id', '<', page.before);
  return q.orderBy('id', 'desc').limit(page.limit + 1).execute();
}

/** Manifests the sandbox carrier has not scanned yet, made before `before`. */
export async function unscanned(db: Db, before: string, limit: number): Promise<Pick<ManifestRow, 'id'>[]> {
  return db.selectFrom('manifests').select('id').where('scanned_at', 'is', null).where('created_at', '<=', before).orderBy('id').limit(limit).execute();
}

/** Marks the manifest scanned unless another worker already has: true when this call did. */
export async function claimScan(tx: Tx, id: string, at: string): Promise<ManifestRow | undefined> {
  return tx.updateTable('manifests').set({ scanned_at: at }).where('id', '=', id).where('scanned_at', 'is', null).returningAll().executeTakeFirst();
}

import type { Kysely } from 'kysely';

// §14: end-of-day manifests. A label on a manifest names it (and can no longer be invalidated);
// the manifest keeps what its document prints.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('labels').addColumn('manifest_id', 'text').execute();
  await db.schema
    .createTable('manifests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('carrier', 'text', (c) => c.notNull())
    .addColumn('number', 'text', (c) => c.notNull().unique())
    // JSON array of the label ids, in tracking-number order.
    .addColumn('label_ids', 'text', (c) => c.notNull())
    // JSON of what the document prints (src/render/layouts/manifest.ts).
    .addColumn('document', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    // When the sandbox carrier scanned it (outside production), or null.
    .addColumn('scanned_at', 'text')
    .execute();
  await db.schema.createIndex('manifests_account_id').on('manifests').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('manifests_unscanned').on('manifests').columns(['scanned_at', 'id']).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

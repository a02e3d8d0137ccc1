import type { Kysely } from 'kysely';

// A shipment's returns, listed on its dashboard page, and a manifest's labels, which the sandbox's scan
// reads in label-id order: each found through an index rather than by reading the whole table.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('shipments_return_of').on('shipments').columns(['return_of', 'id']).execute();
  await db.schema.createIndex('labels_manifest').on('labels').columns(['manifest_id', 'id']).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

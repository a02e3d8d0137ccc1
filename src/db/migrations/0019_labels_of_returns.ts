import { sql, type Kysely } from 'kysely';

// §13/§14: a return's label goes on no manifest (docs/manifests.md). The label says whether it is a
// return's, so the manifest's one conditional UPDATE (and the dashboard's count before it) leave those
// out without reading the shipments; the index serves the carrier's waiting labels of an account.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('labels')
    .addColumn('is_return', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update labels set is_return = 1 where shipment_id in (select id from shipments where return_of is not null)`.execute(db);
  await db.schema.createIndex('labels_waiting_for_manifest').on('labels').columns(['account_id', 'carrier', 'status', 'manifest_id', 'is_return', 'id']).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

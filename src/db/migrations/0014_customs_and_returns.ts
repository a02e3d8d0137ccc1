import type { Kysely } from 'kysely';

// §12 and §13: a shipment's customs declaration (JSON, as sent) and the shipment it returns.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('shipments').addColumn('customs', 'text').execute();
  await db.schema.alterTable('shipments').addColumn('return_of', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

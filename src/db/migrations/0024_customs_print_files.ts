import type { Kysely } from 'kysely';

// A print file holds either its labels or the customs papers of those that cross a border, each
// parcel's papers `copies` times (§11, §12). Print files made before hold labels, once.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('print_files').addColumn('contents', 'text', (c) => c.notNull().defaultTo('labels')).execute();
  await db.schema.alterTable('print_files').addColumn('copies', 'integer', (c) => c.notNull().defaultTo(1)).execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

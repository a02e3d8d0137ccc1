import type { Kysely } from 'kysely';

// A batch may be named (`name` of POST /v1/batches; an uploaded CSV file's name in the dashboard), so
// that a day's batches can be told apart. Batches made before have none (null).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('batches').addColumn('name', 'text').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

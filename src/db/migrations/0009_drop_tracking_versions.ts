import type { Kysely } from 'kysely';

// Tracking lookups are no longer reused by version (docs/benchmarks.md): the counter goes.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('label_tracking').dropColumn('events_version').execute();
}

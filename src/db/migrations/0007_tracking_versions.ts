import type { Kysely } from 'kysely';

// Every transaction that stores events for a label adds one to the label's events_version, so a lookup
// can reuse the answer it built for the same version (src/tracking/responses.ts).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('label_tracking').addColumn('events_version', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

import type { Kysely } from 'kysely';

// The purges delete 5,000 rows a statement (PURGE_CHUNK): each finds its rows by the time they aged
// past, through an index, instead of scanning the table (and the rows earlier statements deleted) again.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('signin_failures_created').on('signin_failures').column('created_at').execute();
  await db.schema.createIndex('oauth_refresh_tokens_expires').on('oauth_refresh_tokens').column('expires_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

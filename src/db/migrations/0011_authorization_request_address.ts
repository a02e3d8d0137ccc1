import type { Kysely } from 'kysely';

// Pending authorization requests remember the client address that opened them, so one address can
// open only so many a minute (each is a row until it expires).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oauth_authorization_requests').addColumn('client_address', 'text').execute();
  await db.schema.createIndex('oauth_authorization_requests_address').on('oauth_authorization_requests').columns(['client_address', 'created_at']).execute();
}

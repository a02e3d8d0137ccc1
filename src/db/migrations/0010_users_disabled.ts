import type { Kysely } from 'kysely';

// An administrator can disable a user: the user can no longer sign in, and the grants they gave end.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('disabled_at', 'text').execute();
}

import type { Kysely } from 'kysely';

// An API key says what it is for (`key create --name`, the dashboard's form), so whoever revokes one
// knows what stops working. Keys made before have none ('').
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('name', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

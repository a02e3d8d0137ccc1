import type { Kysely } from 'kysely';

// §9: an Idempotency-Key's row learns, inside the transaction that does the request's work, that the
// work committed (`src/http/idempotency.ts`). A process that dies after that commit and before the
// answer is stored then leaves a key that refuses a retry instead of one that lets it do the work again.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('idempotency_keys')
    .addColumn('work_committed', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

import type { Kysely } from 'kysely';

// Rate-limit buckets shared by every process on one PostgreSQL (src/http/rate-limit.ts); SQLite keeps
// them in memory, so there the table stays empty.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rate_limit_buckets')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('tokens', 'float8', (c) => c.notNull())
    .addColumn('updated_ms', 'bigint', (c) => c.notNull())
    .addColumn('allowed', 'boolean', (c) => c.notNull())
    .execute();
}

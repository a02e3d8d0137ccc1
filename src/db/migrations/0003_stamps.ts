import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('stamps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('shipment_id', 'text', (c) => c.notNull().references('shipments.id'))
    .addColumn('carrier', 'text', (c) => c.notNull())
    .addColumn('serial', 'text', (c) => c.notNull().unique())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('indicium', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('invalidated_at', 'text')
    .execute();
  await db.schema.createIndex('stamps_account_id').on('stamps').columns(['account_id', 'id']).execute();
  // At most one active stamp per shipment, enforced by the database so two racing requests cannot both win.
  await db.schema.createIndex('stamps_one_active').on('stamps').column('shipment_id').unique().where(sql.ref('status'), '=', 'active').execute();

  // The number in the middle of an account's serials (ST-0007-000123): given out once, never reused.
  await db.schema
    .createTable('stamp_issuers')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('code', 'integer', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

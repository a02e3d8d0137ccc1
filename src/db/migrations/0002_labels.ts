import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('labels')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('shipment_id', 'text', (c) => c.notNull().references('shipments.id'))
    .addColumn('carrier', 'text', (c) => c.notNull())
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('tracking_number', 'text', (c) => c.notNull().unique())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('size', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('label_data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('invalidated_at', 'text')
    .execute();
  await db.schema.createIndex('labels_account_id').on('labels').columns(['account_id', 'id']).execute();
  // At most one active label per shipment, enforced by the database so two racing requests cannot both win.
  await db.schema.createIndex('labels_one_active').on('labels').column('shipment_id').unique().where(sql.ref('status'), '=', 'active').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

import type { Kysely } from 'kysely';

// §10 and §11: a shipment's messages, an account's logo, batches with their items, and print files.
export async function up(db: Kysely<unknown>): Promise<void> {
  // JSON array of 1-3 strings, or null.
  await db.schema.alterTable('shipments').addColumn('messages', 'text').execute();

  await db.schema
    .createTable('account_logos')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('logo', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('size', 'text', (c) => c.notNull())
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('succeeded', 'integer', (c) => c.notNull())
    .addColumn('failed', 'integer', (c) => c.notNull())
    // The index of the next item to do: items below it are done, each exactly once.
    .addColumn('next_index', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .execute();
  await db.schema.createIndex('batches_account_id').on('batches').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('batches_status').on('batches').columns(['status', 'id']).execute();

  await db.schema
    .createTable('batch_items')
    .addColumn('batch_id', 'text', (c) => c.notNull().references('batches.id'))
    .addColumn('idx', 'integer', (c) => c.notNull())
    // JSON: {"shipmentId": …} or {"shipment": <POST /v1/shipments body>}.
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('shipment_id', 'text')
    .addColumn('label_id', 'text')
    .addColumn('tracking_number', 'text')
    // JSON {code, message} when the item failed.
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('batch_items_pk', ['batch_id', 'idx'])
    .execute();

  await db.schema
    .createTable('print_files')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('format', 'text', (c) => c.notNull())
    .addColumn('layout', 'text', (c) => c.notNull())
    .addColumn('start', 'integer', (c) => c.notNull())
    .addColumn('batch_id', 'text')
    // JSON array of label ids, in print order.
    .addColumn('label_ids', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

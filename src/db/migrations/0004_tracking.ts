import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tracking_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('label_id', 'text', (c) => c.notNull().references('labels.id'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('carrier', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('carrier_code', 'text', (c) => c.notNull())
    .addColumn('timestamp', 'text', (c) => c.notNull())
    .addColumn('location', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  // The dedupe key: the same event sent twice is stored once.
  await db.schema
    .createIndex('tracking_events_dedupe')
    .on('tracking_events')
    .columns(['label_id', 'timestamp', 'status', 'location', 'carrier'])
    .unique()
    .execute();
  // Every lookup walks this index in order (ties in time by arrival): its cost depends on the
  // label's events only, never on the size of the table.
  await db.schema.createIndex('tracking_events_label_time').on('tracking_events').columns(['label_id', 'timestamp', 'id']).execute();

  // One row per label that has received events: its current status and delivery estimate.
  await db.schema
    .createTable('label_tracking')
    .addColumn('label_id', 'text', (c) => c.primaryKey().references('labels.id'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('last_event_at', 'text')
    .addColumn('estimated_delivery', 'text')
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  // Labels the sandbox carrier moves along: the step done so far and when the next one is due.
  await db.schema
    .createTable('sandbox_parcels')
    .addColumn('label_id', 'text', (c) => c.primaryKey().references('labels.id'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('step', 'integer', (c) => c.notNull())
    .addColumn('next_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sandbox_parcels_due').on('sandbox_parcels').column('next_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

import { sql, type Kysely } from 'kysely';

// The shipment list's search finds a shipment by part of its recipient's name or company, in any
// case and with or without accents (GET /v1/shipments `q`, the dashboard's search). The folded text is
// a column of its own, written with each new shipment. Those already there (and any a process still
// running older code writes) are filled in the background by the `recipient-search` job, page by
// page, so this migration holds no lock for longer than adding a column and an index of nothing takes;
// the partial index lets the job find the rows left to fill without reading the table.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('shipments')
    .addColumn('recipient_search', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await sql`create index shipments_recipient_search_unfilled on shipments (id) where recipient_search = ''`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

import { sql, type Kysely } from 'kysely';
import { recipientSearch } from '../../shipments/store.ts';

// The shipment list's search finds a shipment by part of its recipient's name or company, in any
// case and with or without accents (docs/dashboard.md, GET /v1/shipments `q`). The folded text is
// a column of its own, written with the shipment; this fills it for the shipments already there.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('shipments')
    .addColumn('recipient_search', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await fillRecipientSearch(db);
}

/** Writes `recipient_search` of every shipment that has none, in pages of 500 by id. */
export async function fillRecipientSearch(db: Kysely<unknown>): Promise<void> {
  let after = '';
  for (;;) {
    const { rows } = await sql<{ id: string; to_address: string }>`select id, to_address from shipments where id > ${after} and recipient_search = '' order by id limit 500`.execute(db);
    if (rows.length === 0) return;
    for (const row of rows) {
      await sql`update shipments set recipient_search = ${recipientSearch(JSON.parse(row.to_address) as { name: string; company?: string })} where id = ${row.id}`.execute(db);
    }
    after = rows[rows.length - 1]!.id;
  }
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only');
}

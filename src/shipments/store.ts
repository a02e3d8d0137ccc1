import { byParts, type Db, type Tx } from '../db/index.ts';
import { allColumns, type ShipmentsTable } from '../db/schema.ts';
import type { Page } from '../db/page.ts';
import { sql } from 'kysely';

export type ShipmentRow = Omit<ShipmentsTable, 'recipient_search'>;

const columns = allColumns<ShipmentRow>()(['id', 'account_id', 'carrier', 'service', 'from_address', 'to_address', 'parcel', 'reference', 'messages', 'customs', 'return_of', 'status', 'label_id', 'tracking_number', 'created_at', 'updated_at']);

/** Letters that keep no accent to drop, as people type them without one. */
const PLAIN: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', ł: 'l', đ: 'd', ð: 'd', þ: 'th', ı: 'i', ς: 'σ', '‘': "'", '’': "'" };

/**
 * Text as the shipment list's search compares it: letters without their accents, in small letters,
 * spaces collapsed (`Müller` and `MULLER` read `muller`; `ΕΛΈΝΗ`, `ελενη`; `Straße`, `strasse`; `Søren`,
 * `soren`). Done here rather than by the database, whose `lower` changes only ASCII on SQLite. A change
 * to it needs a migration that sets `recipient_search` to '' everywhere, so the job writes it anew.
 */
export function searchFold(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[ßæœøłđðþıς‘’]/g, (c) => PLAIN[c]!)
    .replace(/\s+/g, ' ')
    .trim();
}

/** A search word's parts: each Chinese character or kana alone, and the runs of anything else. */
const HAN_OR_KANA = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]+/gu;

/**
 * What a shipment is found by besides its tracking number and reference: its customer's name and
 * company, folded; the customer is the recipient, or for a return the sender. A space when that leaves
 * nothing, so the row counts as filled.
 */
function recipientSearch(row: Pick<ShipmentRow, 'to_address' | 'from_address' | 'return_of'>): string {
  const customer = JSON.parse(row.return_of ? row.from_address : row.to_address) as { name: string; company?: string };
  return searchFold(customer.company ? `${customer.name} ${customer.company}` : customer.name) || ' ';
}

export async function insertShipment(tx: Tx | Db, row: ShipmentRow): Promise<void> {
  await tx.insertInto('shipments').values({ ...row, recipient_search: recipientSearch(row) }).execute();
}

/**
 * Writes `recipient_search` of up to `limit` shipments that have none yet (made before the column, or
 * by a process running older code), oldest first; answers how many.
 */
export async function fillRecipientSearch(db: Db, limit: number): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const rows = await tx.selectFrom('shipments').select(['id', 'to_address', 'from_address', 'return_of']).where('recipient_search', '=', '').orderBy('id').limit(limit).execute();
    for (const row of rows) await tx.updateTable('shipments').set({ recipient_search: recipientSearch(row) }).where('id', '=', row.id).where('recipient_search', '=', '').execute();
    return rows.length;
  });
}

/** A LIKE pattern that finds `text` anywhere, its `\`, `%` and `_` taken as written (with `escape '\'`). */
function containing(text: string) {
  return sql<string>`${`%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`} escape '\\'`;
}

export async function findShipment(db: Db | Tx, accountId: string, id: string): Promise<ShipmentRow | undefined> {
  return db.selectFrom('shipments').select(columns).where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
}

/** The returns of a shipment of this account, oldest first (at most `limit`). */
export async function findReturnsOf(db: Db | Tx, accountId: string, id: string, limit: number): Promise<ShipmentRow[]> {
  return db.selectFrom('shipments').select(columns).where('return_of', '=', id).where('account_id', '=', accountId).orderBy('id').limit(limit).execute();
}

export async function findAccountShipmentsByIds(db: Db | Tx, accountId: string, ids: string[]): Promise<ShipmentRow[]> {
  return byParts(ids, (part) => db.selectFrom('shipments').select(columns).where('id', 'in', part).where('account_id', '=', accountId).execute());
}

export async function findShipmentsByIds(db: Db | Tx, ids: string[]): Promise<ShipmentRow[]> {
  return db.selectFrom('shipments').select(columns).where('id', 'in', ids).execute();
}

export interface ShipmentFilter {
  status?: string;
  carrier?: string;
  /** A tracking number (exactly, any case and spacing), part of a reference (any case), or words of the customer's name or company (any case and order, accents or none). */
  search?: string;
}

export async function listShipments(db: Db, accountId: string, page: Page, filter: ShipmentFilter = {}): Promise<ShipmentRow[]> {
  let q = db.selectFrom('shipments').select(columns).where('account_id', '=', accountId);
  if (page.before) q = q.where('id', '<', page.before);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.carrier) q = q.where('carrier', '=', filter.carrier);
  const search = filter.search;
  if (search) {
    const tracking = search.replace(/\s+/g, '').toUpperCase();
    // Each word of a name, in any order ("Müller, José" finds José Müller); Chinese characters and
    // kana each on their own, since a name in them is written with or without a space (田中太郎, 田中 太郎).
    const words = searchFold(search.replace(/[,;]/g, ' ')).split(' ').flatMap((word) => word.match(HAN_OR_KANA) ?? []);
    q = q.where((eb) =>
      eb.or([
        eb('tracking_number', '=', tracking),
        eb(sql<string>`lower(reference)`, 'like', containing(search.toLowerCase())),
        // A search of accents alone folds to nothing, which would find every customer.
        ...(words.length ? [eb.and(words.map((word) => eb('recipient_search', 'like', containing(word))))] : []),
      ]),
    );
  }
  return q.orderBy('id', 'desc').limit(page.limit + 1).execute();
}

/**
 * Sets each shipment's status (any number of statuses, one statement) and returns the shipments as
 * they now are; only where the shipment's active label is still the one given. On PostgreSQL an
 * UPDATE that waited for another transaction's lock checks its WHERE again on the row as committed,
 * so a label invalidated meanwhile moves nothing.
 */
export async function setShipmentStatuses(tx: Tx | Db, changes: { id: string; labelId: string; status: string }[], at: string): Promise<ShipmentRow[]> {
  return tx
    .updateTable('shipments')
    .set((eb) => {
      let status = eb.case().when('id', '=', changes[0]!.id).then(changes[0]!.status);
      for (const c of changes.slice(1)) status = status.when('id', '=', c.id).then(c.status);
      return { status: status.else(eb.ref('status')).end(), updated_at: at };
    })
    .where('id', 'in', changes.map((c) => c.id))
    // Each label is its own shipment's: among these ids, a label id of the list is that shipment's own.
    .where('label_id', 'in', changes.map((c) => c.labelId))
    .returning(columns)
    .execute();
}

/** The account's newest shipment that is not a return (walked back on its account index). */
export async function findLastOutbound(db: Db, accountId: string): Promise<Pick<ShipmentRow, 'id' | 'reference' | 'from_address'> | undefined> {
  return db.selectFrom('shipments').select(['id', 'reference', 'from_address']).where('account_id', '=', accountId).where('return_of', 'is', null).orderBy('id', 'desc').limit(1).executeTakeFirst();
}

/**
 * Sets the shipment's active label. A new label speaks for the shipment from the start: its status is
 * `created` again, until that label's tracking moves it.
 */
export async function setShipmentLabel(tx: Tx | Db, id: string, label: { id: string; trackingNumber: string }, at: string): Promise<void> {
  await tx.updateTable('shipments').set({ label_id: label.id, tracking_number: label.trackingNumber, status: 'created', updated_at: at }).where('id', '=', id).execute();
}

/**
 * Clears the shipment's active label (invalidation), its status back to `created` (no parcel of it
 * is on its way), unless its status says the carrier has the parcel; returns whether it did.
 * Conditional, so a tracking batch moving the shipment at the same moment decides before or after
 * it, never in between.
 */
export async function clearShipmentLabel(tx: Tx, id: string, unscanned: readonly string[], at: string): Promise<boolean> {
  const row = await tx
    .updateTable('shipments')
    .set({ label_id: null, tracking_number: null, status: 'created', updated_at: at })
    .where('id', '=', id)
    .where('status', 'in', [...unscanned])
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

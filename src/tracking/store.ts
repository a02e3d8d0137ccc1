import type { Db, Tx } from '../db/index.ts';
import { allColumns, type LabelTrackingTable, type SandboxParcelsTable, type TrackingEventsTable } from '../db/schema.ts';

export type TrackingEventRow = TrackingEventsTable;
export type LabelTrackingRow = LabelTrackingTable;
export type SandboxParcelRow = SandboxParcelsTable;

const trackingColumns = allColumns<LabelTrackingTable>()(['label_id', 'account_id', 'status', 'last_event_at', 'estimated_delivery', 'updated_at']);

/**
 * The tracking state of these labels (`initial`, in label-id order), created for those that have none
 * yet and locked until the transaction ends: one upsert, whose no-op update locks an existing row on
 * PostgreSQL (SQLite serialises writers anyway). Rows are taken in the order given, existing or new, so
 * batches over the same labels wait for each other. Locking the existing rows before inserting the
 * missing ones would deadlock: the insert waits for another batch's uncommitted row while holding locks
 * that batch needs.
 */
export async function lockLabelTracking(tx: Tx, initial: LabelTrackingRow[]): Promise<LabelTrackingRow[]> {
  return tx
    .insertInto('label_tracking')
    .values(initial)
    .onConflict((oc) => oc.column('label_id').doUpdateSet((eb) => ({ label_id: eb.ref('label_tracking.label_id') })))
    .returning(trackingColumns)
    .execute();
}

/** Writes the new tracking state of these labels in one statement (their rows exist: `lockLabelTracking`). */
export async function saveLabelTracking(tx: Tx, rows: LabelTrackingRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx
    .insertInto('label_tracking')
    .values(rows)
    .onConflict((oc) =>
      oc.column('label_id').doUpdateSet((eb) => ({
        status: eb.ref('excluded.status'),
        last_event_at: eb.ref('excluded.last_event_at'),
        estimated_delivery: eb.ref('excluded.estimated_delivery'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .execute();
}

/** Inserts the events, skipping those already stored; returns the ids of the new ones. */
export async function insertEvents(tx: Tx, rows: TrackingEventRow[]): Promise<Set<string>> {
  const inserted = await tx
    .insertInto('tracking_events')
    .values(rows)
    .onConflict((oc) => oc.columns(['label_id', 'timestamp', 'status', 'location', 'carrier']).doNothing())
    .returning('id')
    .execute();
  return new Set(inserted.map((r) => r.id));
}

/** The tracking state of a label, if any event or lookup created it. */
export async function findLabelTracking(db: Db | Tx, labelId: string): Promise<LabelTrackingRow | undefined> {
  return db.selectFrom('label_tracking').select(trackingColumns).where('label_id', '=', labelId).executeTakeFirst();
}

export interface EventFilter {
  carrier?: string;
  /** UTC, milliseconds: only events strictly after. */
  since?: string;
  newestFirst: boolean;
  limit: number;
}

/** What a lookup shows of an event. */
export type ListedEvent = Pick<TrackingEventRow, 'timestamp' | 'location' | 'status' | 'carrier' | 'description' | 'carrier_code'>;

/** Filter, then sort (by time; arrival order breaks ties), then limit: one range scan of the label's index entries. */
export async function listEvents(db: Db, labelId: string, filter: EventFilter): Promise<ListedEvent[]> {
  const dir = filter.newestFirst ? 'desc' : 'asc';
  let q = db.selectFrom('tracking_events').select(['timestamp', 'location', 'status', 'carrier', 'description', 'carrier_code']).where('label_id', '=', labelId);
  if (filter.carrier) q = q.where('carrier', '=', filter.carrier);
  if (filter.since) q = q.where('timestamp', '>', filter.since);
  return q.orderBy('timestamp', dir).orderBy('id', dir).limit(filter.limit).execute();
}

// ---- the sandbox carrier ----

/** The `outcome` of a label whose events came through the API before the sandbox took it on: it never will. */
export const TAKEN_OVER = 'taken_over';

/** The highest label id the sandbox has taken on, if any (labels taken over before it did not count). */
export async function newestEnrolled(db: Db): Promise<string | undefined> {
  // Read down the primary key from the end, so the first label not taken over ends the read.
  const row = await db.selectFrom('sandbox_parcels').select('label_id').where('outcome', '!=', TAKEN_OVER).orderBy('label_id', 'desc').limit(1).executeTakeFirst();
  return row?.label_id;
}

/** Which of these labels the sandbox has already taken on. */
export async function enrolledAmong(db: Db, labelIds: string[]): Promise<Set<string>> {
  if (labelIds.length === 0) return new Set();
  const rows = await db.selectFrom('sandbox_parcels').select('label_id').where('label_id', 'in', labelIds).execute();
  return new Set(rows.map((r) => r.label_id));
}

export async function enroll(db: Db, rows: SandboxParcelRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('sandbox_parcels').values(rows).onConflict((oc) => oc.column('label_id').doNothing()).execute();
}

export async function dueParcels(db: Db, now: string, limit: number): Promise<SandboxParcelRow[]> {
  return db.selectFrom('sandbox_parcels').selectAll().where('next_at', '<=', now).orderBy('next_at').limit(limit).execute();
}

/** Takes step `step` of a parcel; false if another worker took it first (or the parcel was stopped). */
export async function claimStep(tx: Tx, labelId: string, step: number, nextAt: string | null): Promise<boolean> {
  const r = await tx
    .updateTable('sandbox_parcels')
    .set({ step: step + 1, next_at: nextAt })
    .where('label_id', '=', labelId)
    .where('step', '=', step)
    .where('next_at', 'is not', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** The sandbox carrier stops moving these labels (the label was invalidated, or its script is done). */
export async function stopSandbox(tx: Tx, labelIds: string[]): Promise<void> {
  await tx.updateTable('sandbox_parcels').set({ next_at: null }).where('label_id', 'in', labelIds).where('next_at', 'is not', null).execute();
}

/**
 * Events for these labels came through the API: the sandbox stops moving those it has taken on, and
 * will never take on the others (a row marked TAKEN_OVER, so its next run skips them however soon it
 * comes), so a test's own `exception` is not overtaken by a sandbox `delivered`.
 */
export async function takeOverFromSandbox(tx: Tx, labels: { id: string; account_id: string }[], now: string): Promise<void> {
  await tx
    .insertInto('sandbox_parcels')
    .values(labels.map((l) => ({ label_id: l.id, account_id: l.account_id, outcome: TAKEN_OVER, step: 0, next_at: null, created_at: now })))
    .onConflict((oc) => oc.column('label_id').doUpdateSet({ next_at: null }).where('sandbox_parcels.next_at', 'is not', null))
    .execute();
}

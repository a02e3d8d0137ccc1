import type { DialectName, Db, Tx } from '../db/index.ts';
import type { LabelsTable, LabelTrackingTable, SandboxParcelsTable, ShipmentsTable, TrackingEventsTable } from '../db/schema.ts';

export type TrackingEventRow = TrackingEventsTable;
export type LabelTrackingRow = LabelTrackingTable;
export type SandboxParcelRow = SandboxParcelsTable;

const labelColumns = ['id', 'account_id', 'shipment_id', 'carrier', 'service', 'tracking_number', 'status', 'created_at'] as const;

/** What tracking reads of a label: the columns above. */
export type TrackedLabel = Pick<LabelsTable, (typeof labelColumns)[number]>;

/** This account's labels with these tracking numbers (another account's numbers are simply absent). */
export async function findLabelsByTrackingNumbers(tx: Tx | Db, accountId: string, numbers: string[]): Promise<TrackedLabel[]> {
  return tx.selectFrom('labels').select(labelColumns).where('tracking_number', 'in', numbers).where('account_id', '=', accountId).execute();
}

/** Creates the tracking state of labels that have none yet. */
export async function ensureLabelTracking(tx: Tx, rows: LabelTrackingRow[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.insertInto('label_tracking').values(rows).onConflict((oc) => oc.column('label_id').doNothing()).execute();
}

/** The tracking state of these labels, locked until the transaction ends on PostgreSQL (SQLite writers are serialised anyway). */
export async function lockLabelTracking(tx: Tx, dialect: DialectName, labelIds: string[]): Promise<LabelTrackingRow[]> {
  let q = tx.selectFrom('label_tracking').selectAll().where('label_id', 'in', labelIds).orderBy('label_id');
  if (dialect === 'postgres') q = q.forUpdate();
  return q.execute();
}

/** The shipments of these labels (ids come from the caller's own labels). */
export async function findShipments(tx: Tx, ids: string[]): Promise<ShipmentsTable[]> {
  return tx.selectFrom('shipments').selectAll().where('id', 'in', [...new Set(ids)]).execute();
}

export async function updateLabelTracking(tx: Tx, labelId: string, set: Pick<LabelTrackingRow, 'status' | 'last_event_at' | 'estimated_delivery' | 'updated_at'>): Promise<void> {
  await tx.updateTable('label_tracking').set(set).where('label_id', '=', labelId).execute();
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

export interface LabelWithTracking extends TrackedLabel {
  tracked: string | null;
  tracking_status: string | null;
  estimated_delivery: string | null;
}

export async function findLabelWithTracking(db: Db, accountId: string, labelId: string): Promise<LabelWithTracking | undefined> {
  return db
    .selectFrom('labels')
    .leftJoin('label_tracking', 'label_tracking.label_id', 'labels.id')
    .select(['labels.id', 'labels.account_id', 'labels.shipment_id', 'labels.carrier', 'labels.service', 'labels.tracking_number', 'labels.status', 'labels.created_at'])
    .select(['label_tracking.label_id as tracked', 'label_tracking.status as tracking_status', 'label_tracking.estimated_delivery'])
    .where('labels.id', '=', labelId)
    .where('labels.account_id', '=', accountId)
    .executeTakeFirst();
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

export interface SandboxCandidate {
  id: string;
  account_id: string;
  reference: string | null;
}

/** Active labels created at or after `sinceId` (a uuidv7 lower bound) that the sandbox has not taken yet. */
export async function unenrolledLabels(db: Db, sinceId: string, limit: number): Promise<SandboxCandidate[]> {
  return db
    .selectFrom('labels')
    .innerJoin('shipments', 'shipments.id', 'labels.shipment_id')
    .select(['labels.id', 'labels.account_id', 'shipments.reference'])
    .where('labels.id', '>=', sinceId)
    .where('labels.status', '=', 'active')
    .where((eb) => eb.not(eb.exists(eb.selectFrom('sandbox_parcels').select('sandbox_parcels.label_id').whereRef('sandbox_parcels.label_id', '=', 'labels.id'))))
    .orderBy('labels.id')
    .limit(limit)
    .execute();
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

/** The sandbox carrier stops moving these labels (events came in from elsewhere, or the label was invalidated). */
export async function stopSandbox(tx: Tx, labelIds: string[]): Promise<void> {
  await tx.updateTable('sandbox_parcels').set({ next_at: null }).where('label_id', 'in', labelIds).where('next_at', 'is not', null).execute();
}

export interface SandboxLabel {
  id: string;
  account_id: string;
  tracking_number: string;
  status: string;
  from_address: string;
  to_address: string;
  last_event_at: string | null;
}

export async function sandboxLabel(tx: Tx, labelId: string): Promise<SandboxLabel | undefined> {
  return tx
    .selectFrom('labels')
    .innerJoin('shipments', 'shipments.id', 'labels.shipment_id')
    .leftJoin('label_tracking', 'label_tracking.label_id', 'labels.id')
    .select(['labels.id', 'labels.account_id', 'labels.tracking_number', 'labels.status', 'shipments.from_address', 'shipments.to_address', 'label_tracking.last_event_at'])
    .where('labels.id', '=', labelId)
    .executeTakeFirst();
}

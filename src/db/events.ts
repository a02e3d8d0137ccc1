// Domain events are written in the same transaction as the change that causes them; the webhook
// worker fans them out later, so an acknowledged change never loses its event.
import type { DialectName, Db, Tx } from './index.ts';
import { isoNow, uuidv7 } from './ids.ts';

export const EVENT_TYPES = ['shipment.created', 'shipment.in_transit', 'shipment.delivered', 'shipment.exception', 'batch.completed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const written = new EventTarget();
/** Events this process wrote inside transactions that have not committed yet (or rolled back). */
let uncommitted = 0;

/**
 * In-process wake-up for the webhook fan-out: `listener` runs whenever an event this process recorded
 * has committed. Returns the unsubscribe function.
 */
export function onDomainEventWritten(listener: () => void): () => void {
  written.addEventListener('written', listener);
  return () => written.removeEventListener('written', listener);
}

/** Wakes this thread's listeners as if an event had been written here (one written on another thread). */
export function announceDomainEventWritten(): void {
  written.dispatchEvent(new Event('written'));
}

/**
 * Called by both drivers after every commit: wakes the listeners if events were written in a
 * transaction since the last wake. Announcing at the commit rather than at the insert means the
 * fan-out never looks before the events are there to see (on PostgreSQL the commit is a round trip
 * later). Another transaction's commit may announce first; the fan-out then finds what has committed
 * and is woken again by the rest. A rolled-back event costs one needless look.
 */
export function afterCommit(): void {
  if (uncommitted === 0) return;
  uncommitted = 0;
  announceDomainEventWritten();
}

export interface NewDomainEvent {
  accountId: string;
  type: EventType;
  subjectId: string;
  data: unknown;
  at?: string;
}

export async function recordDomainEvent(tx: Tx | Db, event: NewDomainEvent): Promise<string> {
  return (await recordDomainEvents(tx, [event]))[0]!;
}

/** Records several events in one statement; their ids (and so their fan-out order) follow the list's order. */
export async function recordDomainEvents(tx: Tx | Db, events: NewDomainEvent[]): Promise<string[]> {
  if (events.length === 0) return [];
  const rows = events.map((e) => ({ id: uuidv7(), account_id: e.accountId, type: e.type, shipment_id: e.subjectId, data: JSON.stringify(e.data), created_at: e.at ?? isoNow(), dispatched_at: null }));
  await tx.insertInto('domain_events').values(rows).execute();
  if (tx.isTransaction) uncommitted += rows.length;
  else announceDomainEventWritten();
  return rows.map((r) => r.id);
}

// ---- the outbox side: what the webhook fan-out reads ----

/** A recorded domain event as the fan-out reads it. */
export interface EventRow {
  id: string;
  account_id: string;
  type: string;
  data: string;
  created_at: string;
}

/** Whether any event waits for its fan-out: a cheap look before opening a write transaction. */
export async function anyUndispatched(db: Db): Promise<boolean> {
  return (await db.selectFrom('domain_events').select('id').where('dispatched_at', 'is', null).limit(1).executeTakeFirst()) !== undefined;
}

/**
 * Takes up to `limit` undispatched domain events, oldest first, marking them dispatched at `at` in the
 * same statement; on PostgreSQL the events another worker is taking are skipped. The mark is part of
 * the caller's transaction, so a fan-out that rolls back leaves them undispatched.
 */
export async function claimEvents(tx: Tx, dialect: DialectName, limit: number, at: string): Promise<EventRow[]> {
  let oldest = tx.selectFrom('domain_events').select('id').where('dispatched_at', 'is', null).orderBy('id').limit(limit);
  if (dialect === 'postgres') oldest = oldest.forUpdate().skipLocked();
  const rows = await tx.updateTable('domain_events').set({ dispatched_at: at }).where('id', 'in', oldest).returning(['id', 'account_id', 'type', 'data', 'created_at']).execute();
  // RETURNING gives no order; ids are UUIDv7, so their text sorts as they were written.
  return rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The events of claimed deliveries: what their bodies are made of. */
export async function eventsByIds(db: Db, ids: string[]): Promise<EventRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('domain_events').select(['id', 'account_id', 'type', 'data', 'created_at']).where('id', 'in', ids).execute();
}

/** What each of these events is about (the shipment, or for `batch.completed` the batch), by event id. */
export async function eventSubjects(db: Db, ids: string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('domain_events').select(['id', 'shipment_id']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.shipment_id]));
}

import type { AppContext } from '../context.ts';
import type { Tx } from '../db/index.ts';
import { isoNow, parseRfc3339, uuidv7 } from '../db/ids.ts';
import { recordDomainEvents, type EventType, type NewDomainEvent } from '../db/events.ts';
import { InvalidInput, NotFound } from '../errors.ts';
import {
  addBusinessDays, carrierStatusCode, estimateDelivery, normalizeTrackingNumber, trackingUrl, type Carrier, type CarrierStatusCode, type TrackingStatus,
} from '../carriers/index.ts';
import { recordShipmentStatuses } from '../shipments/service.ts';
import { labelRecord, labelsByTrackingNumbers, type LabelRecord } from '../labels/service.ts';
import type { EVENT_SORTS, TRACKING_FORMATS } from './schemas.ts';
import * as store from './store.ts';

export interface IncomingEvent {
  trackingNumber: string;
  status: TrackingStatus;
  timestamp: string;
  location: string;
  carrier?: Carrier;
  description?: string;
}

export interface TrackingEvent {
  timestamp: string;
  location: string;
  status: TrackingStatus;
  carrier: Carrier;
  description: string;
}

export interface TrackingQuery {
  format: (typeof TRACKING_FORMATS)[number];
  limit: number;
  carrier?: Carrier;
  events_since?: string;
  sort: (typeof EVENT_SORTS)[number];
}

export interface TrackingInfo {
  trackingNumber: string;
  carrier: Carrier;
  trackingUrl: string;
  status?: TrackingStatus;
  estimatedDelivery?: string | null;
  events?: TrackingEvent[];
  carrierDetails?: {
    carrier: Carrier;
    status: CarrierStatusCode;
    events: { timestamp: string; carrier: Carrier; code: string; description: string }[];
  };
}

/** Where the sandbox carrier's events come from; events from the API take a label over from it. */
export type EventSource = 'api' | 'sandbox';

// ---- delivery estimate ----

/** The next business day (Monday to Friday, UTC) after `ms`, at the delivery hour. */
export function nextBusinessDay(ms: number): string {
  return addBusinessDays(new Date(ms), 1).toISOString();
}

/** Before any event: the service's transit time in business days from label creation. */
export function initialEstimate(label: { carrier: string; service: string; created_at: string }): string | null {
  try {
    return estimateDelivery(label.carrier as Carrier, label.service, new Date(label.created_at)).toISOString();
  } catch {
    return null;
  }
}

/**
 * How a status change revises the estimate: out for delivery → that day; exception → one business
 * day later than before (or than the exception, if the estimate had passed); delivered → the
 * delivery time; returned → none. Other statuses keep it.
 */
export function reviseEstimate(current: string | null, status: TrackingStatus, timestamp: string): string | null {
  const at = Date.parse(timestamp);
  switch (status) {
    case 'delivered':
      return timestamp;
    case 'returned':
      return null;
    case 'exception':
      return nextBusinessDay(Math.max(current === null ? at : Date.parse(current), at));
    case 'out_for_delivery':
      return isoNow(Math.max(addBusinessDays(new Date(at), 0).getTime(), at));
    default:
      return current;
  }
}

// ---- ingestion ----

const DOMAIN_EVENT: Record<TrackingStatus, EventType | null> = {
  pre_transit: null,
  in_transit: 'shipment.in_transit',
  out_for_delivery: 'shipment.in_transit',
  delivered: 'shipment.delivered',
  exception: 'shipment.exception',
  returned: 'shipment.exception',
};

interface PreparedEvent extends IncomingEvent {
  /** The tracking number as sent, for the error message. */
  given?: string;
}

/**
 * How far ahead of this service's clock an event's time may be: a carrier's clock or time zone may be
 * off by hours, never by a day. An event further ahead would stay a label's latest for good (its
 * status follows the latest event), so no real event could move the label on after it.
 */
export const FUTURE_TOLERANCE_MS = 24 * 3600 * 1000;

function prepare(events: IncomingEvent[]): PreparedEvent[] {
  const latest = Date.now() + FUTURE_TOLERANCE_MS;
  return events.map((e, i) => {
    const ms = parseRfc3339(e.timestamp);
    const timestamp = ms === null ? '' : isoNow(ms);
    // Also rejects instants past year 9999 in UTC, whose ISO form would not sort as text.
    if (!/^\d{4}-/.test(timestamp)) {
      throw new InvalidInput(`events[${i}].timestamp must be an RFC 3339 date-time with an offset, like 2026-01-01T10:00:00+02:00`, [
        { field: `events[${i}].timestamp`, message: 'is not an RFC 3339 date-time with an offset' },
      ]);
    }
    if (ms !== null && ms > latest) {
      throw new InvalidInput(`events[${i}].timestamp is more than 24 hours ahead of the service's clock (${isoNow()}); an event is reported once it has happened`, [
        { field: `events[${i}].timestamp`, message: "is more than 24 hours ahead of the service's clock" },
      ]);
    }
    return { ...e, given: e.trackingNumber, trackingNumber: normalizeTrackingNumber(e.trackingNumber), timestamp };
  });
}

function toEvent(row: Pick<store.TrackingEventRow, 'timestamp' | 'location' | 'status' | 'carrier' | 'description'>): TrackingEvent {
  return { timestamp: row.timestamp, location: row.location, status: row.status as TrackingStatus, carrier: row.carrier as Carrier, description: row.description };
}

/**
 * Stores a batch of events, all or none: unknown numbers are 404 and nothing is stored; events
 * already stored are skipped. Each status change of a label updates its shipment and records the
 * matching domain event in the same transaction. Returns how many events were new.
 */
export async function ingestEvents(ctx: AppContext, accountId: string, events: IncomingEvent[], source: EventSource = 'api'): Promise<{ accepted: number }> {
  const prepared = prepare(events);
  const accepted = await ctx.db.transaction().execute((tx) => ingestInTransaction(tx, accountId, prepared, source, { sandboxRunning: ctx.config.sandboxTracking }));
  return { accepted };
}

/**
 * The sandbox carrier's acceptance scan of parcels handed over on a manifest, in the caller's
 * transaction. It moves a parcel that has not moved yet (still `pre_transit`) on. For a parcel that
 * has already moved on, or been delivered, it changes no status: dated before the parcel's latest
 * event it is stored as history, and otherwise not at all (no delivered parcel goes back in transit,
 * not even in its list of events).
 */
export function acceptParcels(tx: Tx, accountId: string, events: IncomingEvent[]): Promise<number> {
  return ingestInTransaction(tx, accountId, prepare(events), 'sandbox', { historyOnceMoving: true });
}

/**
 * The one ingestion path, for the API and the sandbox carrier alike (timestamps already normalised);
 * with `historyOnceMoving`, events of a parcel past `pre_transit` change nothing (`acceptParcels`). Events
 * from the API stop the sandbox moving their labels; where it runs (`sandboxRunning`), also those it
 * has not taken on yet.
 */
export async function ingestInTransaction(
  tx: Tx,
  accountId: string,
  events: PreparedEvent[],
  source: EventSource,
  { historyOnceMoving = false, sandboxRunning = false }: { historyOnceMoving?: boolean; sandboxRunning?: boolean } = {},
): Promise<number> {
  const numbers = [...new Set(events.map((e) => e.trackingNumber))];
  const labels = await labelsByTrackingNumbers(tx, accountId, numbers);
  const byNumber = new Map(labels.map((l) => [l.tracking_number, l]));
  const unknown = events.find((e) => !byNumber.has(e.trackingNumber));
  if (unknown) throw new NotFound('tracking number', unknown.given ?? unknown.trackingNumber);

  const now = isoNow();
  labels.sort((a, b) => (a.id < b.id ? -1 : 1));
  // Locks are taken in one order on every path (sandbox parcels, then tracking states in label-id order, then shipments), so two writers never deadlock.
  if (source === 'api') await (sandboxRunning ? store.takeOverFromSandbox(tx, labels, now) : store.stopSandbox(tx, labels.map((l) => l.id)));
  const initial = labels.map((l) => ({ label_id: l.id, account_id: l.account_id, status: 'pre_transit', last_event_at: null, estimated_delivery: initialEstimate(l), updated_at: now }));
  const states = new Map((await store.lockLabelTracking(tx, initial)).map((s) => [s.label_id, s]));

  const seen = new Set<string>();
  const rows: store.TrackingEventRow[] = [];
  for (const e of events) {
    const label = byNumber.get(e.trackingNumber)!;
    // An acceptance scan no earlier than the latest event of a parcel that has already moved would
    // list it back in transit after, say, its delivery: it is not stored. An earlier one is history.
    const state = states.get(label.id)!;
    if (historyOnceMoving && state.last_event_at !== null && state.status !== 'pre_transit' && e.timestamp >= state.last_event_at) continue;
    const carrier = e.carrier ?? (label.carrier as Carrier);
    const key = [label.id, e.timestamp, e.status, e.location, carrier].join('\u0000');
    if (seen.has(key)) continue;
    seen.add(key);
    const code = carrierStatusCode(carrier, e.status);
    rows.push({
      id: uuidv7(),
      label_id: label.id,
      account_id: label.account_id,
      carrier,
      status: e.status,
      carrier_code: code.code,
      timestamp: e.timestamp,
      location: e.location,
      description: e.description ?? code.description,
      created_at: now,
    });
  }
  const insertedIds = await store.insertEvents(tx, rows);
  const fresh = rows.filter((r) => insertedIds.has(r.id));

  const freshByLabel = new Map<string, store.TrackingEventRow[]>();
  for (const r of fresh) {
    const list = freshByLabel.get(r.label_id);
    if (list) list.push(r);
    else freshByLabel.set(r.label_id, [r]);
  }
  const changed: { label: LabelRecord; changes: store.TrackingEventRow[] }[] = [];
  const saved: store.LabelTrackingRow[] = [];
  for (const label of labels) {
    // Stable: events with the same time keep their order in the batch.
    const mine = freshByLabel.get(label.id)?.sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
    if (!mine) continue;
    const state = states.get(label.id)!;
    if (historyOnceMoving && state.status !== 'pre_transit') continue;
    let status: string | null = state.last_event_at === null ? null : state.status;
    let last = state.last_event_at;
    let estimate = state.estimated_delivery;
    const changes: store.TrackingEventRow[] = [];
    for (const e of mine) {
      // An event older than the latest one is history: stored, but it changes nothing.
      if (last !== null && e.timestamp < last) continue;
      if (e.status !== status) {
        changes.push(e);
        estimate = reviseEstimate(estimate, e.status as TrackingStatus, e.timestamp);
      }
      status = e.status;
      last = e.timestamp;
    }
    if (last === state.last_event_at && changes.length === 0) continue;
    saved.push({ ...state, status: status!, last_event_at: last, estimated_delivery: estimate, updated_at: now });
    // Only the shipment's active label speaks for it; an invalidated label's events are history.
    if (changes.length > 0 && label.status === 'active') changed.push({ label, changes });
  }
  // Every label's new state in one statement, the shipments in one (which returns them for the domain events), every domain event in one.
  await store.saveLabelTracking(tx, saved);
  if (changed.length === 0) return fresh.length;

  const statuses = changed.map(({ label, changes }) => ({ shipmentId: label.shipment_id, labelId: label.id, status: changes.at(-1)!.status }));
  const shipments = new Map((await recordShipmentStatuses(tx, statuses, now)).map((s) => [s.id, s]));
  const domainEvents: NewDomainEvent[] = [];
  for (const { label, changes } of changed) {
    const shipment = shipments.get(label.shipment_id);
    if (!shipment) continue;
    const labelRef = { id: label.id, trackingNumber: label.tracking_number, carrier: label.carrier };
    for (const change of changes) {
      const type = DOMAIN_EVENT[change.status as TrackingStatus];
      if (!type) continue;
      const data = { ...shipment, status: change.status, label: labelRef, event: toEvent(change) };
      domainEvents.push({ accountId: label.account_id, type, subjectId: shipment.id, data, at: now });
    }
  }
  await recordDomainEvents(tx, domainEvents);
  return fresh.length;
}

// ---- lookup ----

/** Normalises `events_since`; throws 400 naming the parameter when it is not RFC 3339 with an offset. */
function sinceOf(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const ms = parseRfc3339(text);
  if (ms === null) {
    throw new InvalidInput(`query parameter events_since must be an RFC 3339 date-time with an offset, like 2026-01-01T10:00:00Z`, [
      { field: 'events_since', message: 'is not an RFC 3339 date-time with an offset' },
    ]);
  }
  return isoNow(ms);
}

/** `GET /v1/labels/{id}/trackingnumber`: basic, detailed or carrier-specific. */
export async function trackingInfo(ctx: AppContext, accountId: string, labelId: string, query: TrackingQuery): Promise<TrackingInfo> {
  const since = sinceOf(query.events_since);
  const label = await labelRecord(ctx.db, accountId, labelId);
  if (!label) throw new NotFound('label', labelId);
  return buildTrackingInfo(ctx, label, since, query);
}

async function buildTrackingInfo(ctx: AppContext, label: LabelRecord, since: string | undefined, query: TrackingQuery): Promise<TrackingInfo> {
  const carrier = label.carrier as Carrier;
  const info: TrackingInfo = { trackingNumber: label.tracking_number, carrier, trackingUrl: trackingUrl(carrier, label.tracking_number) };
  if (query.format === 'basic') return info;

  // A bound past year 9999 (`+010000-…`) would sort before every stored time: nothing is after it.
  const [state, rows] = await Promise.all([
    store.findLabelTracking(ctx.db, label.id),
    since?.startsWith('+') ? [] : store.listEvents(ctx.db, label.id, { carrier: query.carrier, since, newestFirst: query.sort === 'newest_first', limit: query.limit }),
  ]);
  const status = (state?.status ?? 'pre_transit') as TrackingStatus;
  info.status = status;
  info.estimatedDelivery = state ? state.estimated_delivery : initialEstimate(label);
  info.events = rows.map(toEvent);
  if (query.format === 'carrier-specific') {
    info.carrierDetails = {
      carrier,
      status: carrierStatusCode(carrier, status),
      events: rows.map((r) => ({
        timestamp: r.timestamp,
        carrier: r.carrier as Carrier,
        code: r.carrier_code,
        description: carrierStatusCode(r.carrier as Carrier, r.status as TrackingStatus).description,
      })),
    };
  }
  return info;
}

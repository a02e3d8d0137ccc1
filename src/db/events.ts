// Domain events are written in the same transaction as the change that causes them; the webhook
// worker fans them out later, so an acknowledged change never loses its event.
import type { Db, Tx } from './index.ts';
import { isoNow, uuidv7 } from './ids.ts';

export const EVENT_TYPES = ['shipment.created', 'shipment.in_transit', 'shipment.delivered', 'shipment.exception'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const written = new EventTarget();

/**
 * In-process wake-up for the webhook fan-out: `listener` runs whenever this process records a domain
 * event (its transaction may commit a moment later). Returns the unsubscribe function.
 */
export function onDomainEventWritten(listener: () => void): () => void {
  written.addEventListener('written', listener);
  return () => written.removeEventListener('written', listener);
}

/** Wakes this thread's listeners as if an event had been written here (one written on another thread). */
export function announceDomainEventWritten(): void {
  written.dispatchEvent(new Event('written'));
}

export async function recordDomainEvent(tx: Tx | Db, event: { accountId: string; type: EventType; shipmentId: string; data: unknown; at?: string }): Promise<string> {
  const id = uuidv7();
  await tx
    .insertInto('domain_events')
    .values({ id, account_id: event.accountId, type: event.type, shipment_id: event.shipmentId, data: JSON.stringify(event.data), created_at: event.at ?? isoNow(), dispatched_at: null })
    .execute();
  announceDomainEventWritten();
  return id;
}

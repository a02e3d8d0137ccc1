// Labels to track and events to send, through the API like a client would.
import type { TestApp } from '../helpers.ts';
import { createShipment } from '../helpers.ts';

export interface TrackedLabel {
  id: string;
  shipmentId: string;
  trackingNumber: string;
  carrier: string;
  createdAt: string;
}

/** A shipment and its label; `overrides` go to the shipment (carrier, service, reference…). */
export async function createLabel(t: TestApp, overrides: Record<string, unknown> = {}, apiKey?: string): Promise<TrackedLabel> {
  const shipment = await createShipment(t, overrides, apiKey);
  const res = await t.app.inject({ method: 'POST', url: '/v1/labels', headers: { 'x-api-key': apiKey ?? t.apiKey }, payload: { shipmentId: shipment.id } });
  if (res.statusCode !== 201) throw new Error(`label creation failed: ${res.statusCode} ${res.body}`);
  const label = res.json();
  return { id: label.id, shipmentId: shipment.id, trackingNumber: label.trackingNumber, carrier: label.carrier, createdAt: label.createdAt };
}

export function postEvents(t: TestApp, events: unknown[], apiKey?: string) {
  return t.app.inject({ method: 'POST', url: '/v1/tracking/events', headers: { 'x-api-key': apiKey ?? t.apiKey }, payload: { events } });
}

export function lookup(t: TestApp, labelId: string, query = '', apiKey?: string) {
  return t.app.inject({ method: 'GET', url: `/v1/labels/${labelId}/trackingnumber${query ? `?${query}` : ''}`, headers: { 'x-api-key': apiKey ?? t.apiKey } });
}

export async function domainEvents(t: TestApp, shipmentId: string): Promise<{ type: string; data: Record<string, any> }[]> {
  const rows = await t.ctx.db.selectFrom('domain_events').select(['type', 'data']).where('shipment_id', '=', shipmentId).orderBy('id').execute();
  return rows.map((r) => ({ type: r.type, data: JSON.parse(r.data) }));
}

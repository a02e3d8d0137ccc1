import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { plusRestored } from '../db/ids.ts';
import { principalOf } from '../http/auth.ts';
import { errors, idParams } from '../http/schemas.ts';
import { EVENTS_BODY_LIMIT, ingestBody, ingestResponse, trackingEventSchema, trackingInfoSchema, trackingQuery } from './schemas.ts';
import { ingestEvents, trackingInfo, type IncomingEvent, type TrackingQuery } from './service.ts';

export const trackingSchemas = [trackingEventSchema, trackingInfoSchema];

export function trackingRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: { events: IncomingEvent[] } }>('/tracking/events', {
    config: { scope: 'write:tracking' },
    // Every batch the schema allows fits when its text is UTF-8 (1000 events of the longest texts are
    // about 2.2 MB); written with JSON's \u escapes it may need splitting.
    bodyLimit: EVENTS_BODY_LIMIT,
    schema: {
      tags: ['tracking'],
      operationId: 'reportTrackingEvents', summary: 'Report tracking events',
      description:
        'A batch of 1 to 1000 events, stored all or none: an unknown tracking number (or another account\'s) is 404 naming it and nothing is stored. ' +
        'An event already stored (same label, timestamp, status, location and carrier) is skipped. Each status change updates the shipment and emits ' +
        '`shipment.in_transit` (in_transit, out_for_delivery), `shipment.delivered` or `shipment.exception` (exception, returned). ' +
        '`accepted` counts the new events. The body may be up to 4 MiB.',
      body: ingestBody,
      response: { 202: ingestResponse, ...errors(400, 401, 403, 404, 413, 415, 422) },
    },
    handler: async (request, reply) => {
      const result = await ingestEvents(ctx, principalOf(request).accountId, request.body.events);
      return reply.code(202).send(result);
    },
  });

  app.get<{ Params: { id: string }; Querystring: TrackingQuery }>('/labels/:id/trackingnumber', {
    config: { scope: 'read:labels' },
    schema: {
      tags: ['tracking'],
      operationId: 'getLabelTracking', summary: 'Get the tracking number of a label, with its status and events',
      description:
        '`basic` gives trackingNumber, carrier and trackingUrl; `detailed` adds status, estimatedDelivery and events; `carrier-specific` also adds ' +
        "carrierDetails with the carriers' own status codes. Events are filtered (`carrier`, `events_since` strictly after), then sorted, then limited.",
      params: idParams,
      querystring: trackingQuery,
      response: { 200: { description: 'Tracking information in the requested form', $ref: 'TrackingInfo#' }, ...errors(400, 401, 403, 404) },
    },
    // Synchronous (done-style): an async hook costs a promise round trip on every lookup.
    preValidation: (request, _reply, done) => {
      const q = request.query as unknown as Record<string, unknown>;
      // An unencoded `+` in a query string arrives as a space (before the schema checks the date-time).
      if (typeof q.events_since === 'string') q.events_since = plusRestored(q.events_since);
      done();
    },
    handler: async (request) => trackingInfo(ctx, principalOf(request).accountId, request.params.id, request.query),
  });
}

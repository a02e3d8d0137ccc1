import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { principalOf } from '../http/auth.ts';
import { pageOf, paginationQuery, sendPage } from '../http/pagination.ts';
import { errors, idParams, VISIBLE_PATTERN } from '../http/schemas.ts';
import { addressSchema } from '../http/schemas.ts';
import { createShipmentBody, customsSchema, parcelSchema, shipmentSchema, shipmentStatuses } from './schemas.ts';
import { createReturn, createShipment, getShipment, listShipments, type NewReturn, type NewShipment } from './service.ts';
import { CARRIERS, RETURN_SERVICE, homeNetwork, type Carrier } from '../carriers/services.ts';

export const shipmentSchemas = [addressSchema, parcelSchema, customsSchema, shipmentSchema];

export function shipmentRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: NewShipment }>('/shipments', {
    config: { scope: 'write:shipments', creates: 'shipments' },
    schema: {
      tags: ['shipments'],
      operationId: 'createShipment', summary: 'Create a shipment',
      description: 'Creates a shipment and emits `shipment.created`.',
      body: createShipmentBody,
      response: { 201: { $ref: 'Shipment#' }, ...errors(400, 401, 403, 413, 415, 422) },
    },
    handler: async (request, reply) => {
      const shipment = await createShipment(ctx, principalOf(request).accountId, request.body);
      return reply.code(201).send(shipment);
    },
  });

  app.post<{ Params: { id: string }; Body: NewReturn }>('/shipments/:id/returns', {
    config: { scope: 'write:shipments', optionalBody: true, creates: 'shipments' },
    schema: {
      tags: ['shipments'],
      operationId: 'createReturn',
      summary: 'Create the return shipment of a shipment',
      description: "A new shipment from the original's `to` back to its `from`, with the same carrier and parcel and `returnOf` naming the original; `service` is the carrier's return service unless given. Across a customs border the original's customs are copied with `contentsType: returned_goods` unless `customs` is given. Its label (`POST /v1/labels`) carries a RETURN banner. A return of a return is 409, and so is one of a parcel USPS carried abroad (USPS takes no parcels in there); the original is not changed.",
      params: idParams,
      body: {
        type: 'object',
        examples: [{ reference: 'RMA 1001' }],
        additionalProperties: false,
        properties: {
          service: { type: 'string', enum: createShipmentBody.properties.service.enum, description: `The carrier's return service by default: ${Object.entries(RETURN_SERVICE).map(([c, s]) => (s.domestic === s.international ? `${c} ${s.domestic}` : `${c} ${s.domestic} ${homeNetwork(c as Carrier)} and ${s.international} between countries`)).join(', ')}.` },
          reference: { ...createShipmentBody.properties.reference, description: "Printed on the label; the original's by default." },
          customs: { $ref: 'Customs#' },
        },
      },
      response: { 201: { $ref: 'Shipment#' }, ...errors(400, 401, 403, 404, 409, 413, 415, 422) },
    },
    // Every field is optional, so a request without a body asks for the defaults.
    preValidation: (request, _reply, done) => {
      request.body ??= {};
      done();
    },
    handler: async (request, reply) => reply.code(201).send(await createReturn(ctx, principalOf(request).accountId, request.params.id, request.body)),
  });

  app.get<{ Params: { id: string } }>('/shipments/:id', {
    config: { scope: 'read:shipments' },
    schema: {
      tags: ['shipments'],
      operationId: 'getShipment', summary: 'Get a shipment', description: 'The shipment with its status and, once it has one, its active label.',
      params: idParams,
      response: { 200: { $ref: 'Shipment#' }, ...errors(400, 401, 403, 404) },
    },
    handler: async (request) => getShipment(ctx.db, principalOf(request).accountId, request.params.id),
  });

  app.get<{ Querystring: { limit?: number; cursor?: string; status?: string; carrier?: string; q?: string } }>('/shipments', {
    config: { scope: 'read:shipments' },
    schema: {
      tags: ['shipments'],
      operationId: 'listShipments', summary: 'List shipments, newest first',
      description: 'A bare array, filtered as asked; the next page is in the `Link: <…>; rel="next"` header (which keeps the filters).',
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          ...paginationQuery,
          status: { type: 'string', enum: [...shipmentStatuses], description: 'Only shipments in this status.' },
          carrier: { type: 'string', enum: [...CARRIERS], description: 'Only shipments of this carrier.' },
          q: { type: 'string', minLength: 1, maxLength: 100, pattern: VISIBLE_PATTERN, description: "A tracking number (any case, spaces ignored), or part of a reference (any case), or words of the customer's name or company (the recipient's, or a return's sender's), in any case and order, with or without accents: `muller jurgen` finds Jürgen Müller, and `田中太郎` finds 田中 太郎." },
        },
      },
      response: { 200: { type: 'array', items: { $ref: 'Shipment#' } }, ...errors(400, 401, 403) },
    },
    handler: async (request, reply) => {
      const page = pageOf(request.query);
      const { status, carrier } = request.query;
      const search = request.query.q?.trim();
      const rows = await listShipments(ctx, principalOf(request).accountId, page, { ...(status ? { status } : {}), ...(carrier ? { carrier } : {}), ...(search ? { search } : {}) });
      return sendPage(request, reply, ctx.config.publicBaseUrl, page, rows);
    },
  });
}

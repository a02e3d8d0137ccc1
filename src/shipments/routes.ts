import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { principalOf } from '../http/auth.ts';
import { pageOf, paginationQuery, sendPage } from '../http/pagination.ts';
import { errors, idParams } from '../http/schemas.ts';
import { addressSchema, createShipmentBody, parcelSchema, shipmentSchema } from './schemas.ts';
import { createShipment, getShipment, listShipments, type NewShipment } from './service.ts';

export const shipmentSchemas = [addressSchema, parcelSchema, shipmentSchema];

export function shipmentRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: NewShipment }>('/shipments', {
    config: { scope: 'write:shipments' },
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

  app.get<{ Querystring: { limit?: number; cursor?: string } }>('/shipments', {
    config: { scope: 'read:shipments' },
    schema: {
      tags: ['shipments'],
      operationId: 'listShipments', summary: 'List shipments, newest first',
      description: 'A bare array; the next page is in the `Link: <…>; rel="next"` header.',
      querystring: { type: 'object', additionalProperties: false, properties: paginationQuery },
      response: { 200: { type: 'array', items: { $ref: 'Shipment#' } }, ...errors(400, 401, 403) },
    },
    handler: async (request, reply) => {
      const page = pageOf(request.query);
      const rows = await listShipments(ctx, principalOf(request).accountId, page);
      return sendPage(request, reply, ctx.config.publicBaseUrl, page, rows);
    },
  });
}

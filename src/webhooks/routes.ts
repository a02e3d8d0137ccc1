import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { principalOf } from '../http/auth.ts';
import { pageOf, paginationQuery, sendPage } from '../http/pagination.ts';
import { errors, idParams } from '../http/schemas.ts';
import { createWebhookBody, deliveryParams, patchWebhookBody, webhookDeliverySchema, webhookSchema } from './schemas.ts';
import * as service from './service.ts';

export const webhookSchemas = [webhookSchema, webhookDeliverySchema];

export function webhookRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: service.NewWebhook }>('/webhooks', {
    config: { scope: 'write:webhooks', creates: 'webhooks' },
    schema: {
      tags: ['webhooks'],
      operationId: 'createWebhook', summary: 'Subscribe to shipment events',
      description: 'Deliveries follow Standard Webhooks (see docs/webhooks.md). `secret` is write-only.',
      body: createWebhookBody,
      response: { 201: { $ref: 'Webhook#' }, ...errors(400, 401, 403, 413, 415, 422) },
    },
    handler: async (request, reply) => reply.code(201).send(await service.createWebhook(ctx, principalOf(request).accountId, request.body)),
  });

  app.get<{ Querystring: { limit?: number; cursor?: string } }>('/webhooks', {
    config: { scope: 'read:webhooks' },
    schema: {
      tags: ['webhooks'],
      operationId: 'listWebhooks', summary: 'List webhooks, newest first',
      description: 'A bare array; the next page is in the `Link: <…>; rel="next"` header.',
      querystring: { type: 'object', additionalProperties: false, properties: paginationQuery },
      response: { 200: { type: 'array', items: { $ref: 'Webhook#' } }, ...errors(400, 401, 403) },
    },
    handler: async (request, reply) => {
      const page = pageOf(request.query);
      const rows = await service.listWebhooks(ctx, principalOf(request).accountId, page);
      return sendPage(request, reply, ctx.config.publicBaseUrl, page, rows);
    },
  });

  app.get<{ Params: { id: string } }>('/webhooks/:id', {
    config: { scope: 'read:webhooks' },
    schema: { tags: ['webhooks'], operationId: 'getWebhook', summary: 'Get a webhook', description: 'The subscription; its secret is never shown again after it was set.', params: idParams, response: { 200: { $ref: 'Webhook#' }, ...errors(400, 401, 403, 404) } },
    handler: async (request) => service.getWebhook(ctx, principalOf(request).accountId, request.params.id),
  });

  app.patch<{ Params: { id: string }; Body: service.WebhookPatch }>('/webhooks/:id', {
    config: { scope: 'write:webhooks' },
    schema: {
      tags: ['webhooks'],
      operationId: 'updateWebhook', summary: 'Change a webhook',
      description: 'Send only the fields to change. `active: false` pauses pending deliveries; `active: true` resumes them. `secret: null` removes the secret.',
      params: idParams,
      body: patchWebhookBody,
      response: { 200: { $ref: 'Webhook#' }, ...errors(400, 401, 403, 404, 413, 415) },
    },
    handler: async (request) => service.updateWebhook(ctx, principalOf(request).accountId, request.params.id, request.body),
  });

  app.delete<{ Params: { id: string } }>('/webhooks/:id', {
    config: { scope: 'write:webhooks' },
    schema: {
      tags: ['webhooks'],
      operationId: 'deleteWebhook', summary: 'Delete a webhook and its delivery history', description: 'Deletes the subscription and its delivery history; nothing more is sent to it.',
      params: idParams,
      response: { 204: { type: 'null', description: 'Deleted' }, ...errors(400, 401, 403, 404) },
    },
    handler: async (request, reply) => {
      await service.deleteWebhook(ctx, principalOf(request).accountId, request.params.id);
      return reply.code(204).send();
    },
  });

  app.get<{ Params: { id: string }; Querystring: { limit?: number; cursor?: string; status?: service.DeliveryStatus } }>('/webhooks/:id/deliveries', {
    config: { scope: 'read:webhooks' },
    schema: {
      tags: ['webhooks'],
      operationId: 'listWebhookDeliveries', summary: 'List a webhook\'s deliveries, newest first, each with its attempts',
      description: 'A bare array; the next page is in the `Link: <…>; rel="next"` header.',
      params: idParams,
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: { ...paginationQuery, status: { type: 'string', enum: ['pending', 'succeeded', 'failed'], description: 'Only deliveries in this state.' } },
      },
      response: { 200: { type: 'array', items: { $ref: 'WebhookDelivery#' } }, ...errors(400, 401, 403, 404) },
    },
    handler: async (request, reply) => {
      const page = pageOf(request.query);
      const rows = await service.listDeliveries(ctx, principalOf(request).accountId, request.params.id, page, request.query.status);
      return sendPage(request, reply, ctx.config.publicBaseUrl, page, rows);
    },
  });

  app.post<{ Params: { id: string; deliveryId: string } }>('/webhooks/:id/deliveries/:deliveryId/redeliver', {
    config: { scope: 'write:webhooks' },
    schema: {
      tags: ['webhooks'],
      operationId: 'redeliverWebhookDelivery', summary: 'Send a delivery again',
      description: 'Same event, same `webhook-id`, due now, with a fresh run of the retry schedule. 409 while the webhook is inactive.',
      params: deliveryParams,
      response: { 202: { $ref: 'WebhookDelivery#' }, ...errors(400, 401, 403, 404, 409) },
    },
    handler: async (request, reply) => reply.code(202).send(await service.redeliver(ctx, principalOf(request).accountId, request.params.id, request.params.deliveryId)),
  });
}

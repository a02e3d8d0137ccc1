import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { CARRIERS } from '../carriers/services.ts';
import { principalOf } from '../http/auth.ts';
import { downloadHeaders, sendDownload } from '../http/downloads.ts';
import { pageOf, paginationQuery, sendPage } from '../http/pagination.ts';
import { dateTime, errors, idParams, uuid } from '../http/schemas.ts';
import { signedLinkQuery } from '../http/signed-links.ts';
import { createManifest, getManifest, listManifests, openManifestDownload, type NewManifest } from './service.ts';

const manifestSchema = {
  $id: 'Manifest',
  type: 'object',
  required: ['id', 'carrier', 'number', 'labelCount', 'labelIds', 'createdAt', 'url', 'expiresAt'],
  properties: {
    id: uuid,
    carrier: { type: 'string', enum: [...CARRIERS] },
    number: { type: 'string', description: 'The manifest\'s own number, printed on its document and in its barcode (USPS: the 22 digits of the SCAN form, 9475…).' },
    labelCount: { type: 'integer' },
    labelIds: { type: 'array', items: uuid, description: 'In tracking-number order.' },
    createdAt: dateTime,
    url: { type: 'string', format: 'uri', description: 'Signed link to the manifest\'s PDF, valid until expiresAt; needs no other credential.' },
    expiresAt: dateTime,
  },
} as const;

export const manifestSchemas = [manifestSchema];

export function manifestRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: NewManifest }>('/manifests', {
    config: { scope: 'write:labels', creates: 'manifests' },
    schema: {
      tags: ['manifests'],
      operationId: 'createManifest',
      summary: 'Close the day for a carrier',
      description: 'Without `labelIds`: every active label of the carrier in the account on no manifest yet, but returns\' labels, which the customer hands to the carrier (none is 422 `NOTHING_TO_MANIFEST`). With `labelIds`: each must be the account\'s (404), active (409), of the carrier (400), on no other manifest (409 naming it) and not a return\'s (400). Labels on a manifest can no longer be invalidated. Outside production the sandbox carrier scans the manifest one sandbox step later: each label gets `in_transit` "Accepted at origin facility".',
      body: {
        type: 'object',
        examples: [{ carrier: 'USPS' }],
        additionalProperties: false,
        required: ['carrier'],
        properties: {
          carrier: { type: 'string', enum: [...CARRIERS] },
          labelIds: { type: 'array', minItems: 1, maxItems: 10000, uniqueItems: true, items: uuid, description: 'Only these labels.' },
        },
      },
      response: { 201: { $ref: 'Manifest#' }, ...errors(400, 401, 403, 404, 409, 413, 415, 422) },
    },
    handler: async (request, reply) => reply.code(201).send(await createManifest(ctx, principalOf(request).accountId, request.body)),
  });

  app.get<{ Querystring: { limit?: number; cursor?: string } }>('/manifests', {
    config: { scope: 'read:labels' },
    schema: {
      tags: ['manifests'],
      operationId: 'listManifests',
      summary: 'List manifests, newest first',
      description: 'The next page is in the `Link: <…>; rel="next"` header.',
      querystring: { type: 'object', additionalProperties: false, properties: paginationQuery },
      response: { 200: { type: 'array', items: { $ref: 'Manifest#' } }, ...errors(400, 401, 403) },
    },
    handler: async (request, reply) => {
      const page = pageOf(request.query);
      return sendPage(request, reply, ctx.config.publicBaseUrl, page, await listManifests(ctx, principalOf(request).accountId, page));
    },
  });

  app.get<{ Params: { id: string } }>('/manifests/:id', {
    config: { scope: 'read:labels' },
    schema: {
      tags: ['manifests'],
      operationId: 'getManifest',
      summary: 'Get a manifest',
      description: 'The manifest with its labels and a fresh view of its signed link.',
      params: idParams,
      response: { 200: { $ref: 'Manifest#' }, ...errors(400, 401, 403, 404) },
    },
    handler: async (request) => getManifest(ctx, principalOf(request).accountId, request.params.id),
  });

  app.get<{ Params: { id: string }; Querystring: { format: string; expires: string; sig: string } }>('/downloads/manifests/:id', {
    config: { public: true, limitedByAddress: true },
    schema: {
      tags: ['manifests'],
      operationId: 'downloadManifest',
      summary: 'Download a manifest by its signed link',
      description: 'The `url` of a manifest: its PDF (for USPS the SCAN form, PS Form 5630). Needs no other credential. 403 if the link was changed, 410 after expiresAt.',
      params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 100 } } },
      querystring: signedLinkQuery('manifest', 'PDF'),
      response: {
        200: { description: 'The manifest (PDF)', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } }, headers: downloadHeaders },
        304: { description: 'Not modified (If-None-Match)', type: 'null', headers: { etag: downloadHeaders.etag } },
        ...errors(400, 403, 404, 410),
      },
    },
    handler: async (request, reply) => sendDownload(request, reply, await openManifestDownload(ctx, { ...request.query, id: request.params.id })),
  });
}

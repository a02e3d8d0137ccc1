import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { CARRIERS } from '../carriers/services.ts';
import { principalOf } from '../http/auth.ts';
import { downloadHeaders, sendDownload } from '../http/downloads.ts';
import { pageOf, paginationQuery, sendPage } from '../http/pagination.ts';
import { POSTAL_CODE_PATTERN, dateTime, errors, idParams, uuid } from '../http/schemas.ts';
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
      description: 'A manifest stands for the parcels one place hands to the carrier: its labels\' senders share one address, the person aside (street lines, city, state, postal code and country; name, company, phone and e-mail do not count). Without `labelIds`: every active label of the carrier in the account on no manifest yet, but returns\' labels, which the customer hands to the carrier (none is 422 `NOTHING_TO_MANIFEST`); when those come from more than one place, 422 `MIXED_SENDERS` naming each place with its count of labels, and nothing is put on a manifest: close each place\'s day with `fromPostalCode` or `labelIds`. With `labelIds`: each must be the account\'s (404), active (409), of the carrier (400), on no other manifest (409 naming it) and not a return\'s (400), and all sent from the place of `labelIds[0]` (400 naming the first that is not). The manifest\'s shipper is that place\'s sender. Labels on a manifest can no longer be invalidated. Outside production the sandbox carrier scans the manifest one sandbox step later: each label gets `in_transit` "Accepted at origin facility" at the shipper\'s city.',
      body: {
        type: 'object',
        examples: [{ carrier: 'UPS', fromPostalCode: '38118' }],
        additionalProperties: false,
        required: ['carrier'],
        properties: {
          carrier: { type: 'string', enum: [...CARRIERS], description: 'The carrier whose day to close.' },
          labelIds: { type: 'array', minItems: 1, maxItems: 10000, uniqueItems: true, items: uuid, description: 'Only these labels, all sent from one place.' },
          fromPostalCode: {
            type: 'string',
            minLength: 2,
            maxLength: 16,
            pattern: POSTAL_CODE_PATTERN,
            description: "Without `labelIds` (not with them): every waiting label sent from this postal code, however its street is written, compared in the country's spelling (`sw1a2aa` is `SW1A 2AA`; a US ZIP+4 as its ZIP): one place's end of day when the account ships from several. None is 422 `NOTHING_TO_MANIFEST` naming the places that wait; two warehouses sharing a postal code are told apart with `labelIds`.",
          },
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

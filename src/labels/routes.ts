import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { principalOf } from '../http/auth.ts';
import { downloadHeaders, sendDownload } from '../http/downloads.ts';
import { errors, idParams } from '../http/schemas.ts';
import { signedLinkQuery } from '../http/signed-links.ts';
import { LABEL_FORMATS, mediaTypeOf, type LabelFormat } from '../render/index.ts';
import { createLabelBody, labelDownloadParams, labelDownloadQuery, labelFormatQuery, labelSchema } from './schemas.ts';
import { LOGO_MAX_BYTES, LOGO_MEDIA_TYPES } from './logo.ts';
import { createLabel, deleteLogo, openDocumentDownload, setLogo, getLabel, invalidateLabel, listLabels, openDownload, type DownloadRequest, type LabelQuery, type NewLabel } from './service.ts';
import { pageOf, paginationQuery, sendPage } from '../http/pagination.ts';
import { CARRIERS } from '../carriers/services.ts';

export const labelSchemas = [labelSchema];

const binary = { type: 'string', format: 'binary' } as const;
const documentContent = Object.fromEntries([...new Set(LABEL_FORMATS.map(mediaTypeOf))].map((t) => [t, { schema: binary }]));

export function labelRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: NewLabel }>('/labels', {
    config: { scope: 'write:labels', creates: 'labels' },
    schema: {
      tags: ['labels'],
      operationId: 'createLabel', summary: 'Create a label for a shipment',
      description: 'Issues a tracking number and a label valid for download for 24 hours. A shipment has at most one active label: another one is 409 until it is invalidated.',
      body: createLabelBody,
      response: { 201: { $ref: 'Label#' }, ...errors(400, 401, 403, 404, 409, 413, 415, 422) },
    },
    handler: async (request, reply) => {
      const label = await createLabel(ctx, principalOf(request).accountId, request.body);
      return reply.code(201).send(label);
    },
  });

  app.get<{ Querystring: LabelQuery & { limit?: number; cursor?: string } }>('/labels', {
    config: { scope: 'read:labels' },
    schema: {
      tags: ['labels'],
      operationId: 'listLabels',
      summary: 'List labels, newest first',
      description: 'A bare array of labels as `GET /v1/labels/{id}` shows them (format PDF); the next page is in the `Link: <…>; rel="next"` header.',
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          ...paginationQuery,
          status: { type: 'string', enum: ['active', 'invalidated'], description: 'Only labels in this state.' },
          carrier: { type: 'string', enum: [...CARRIERS], description: 'Only labels of this carrier.' },
          created_after: { type: 'string', maxLength: 40, description: 'Only labels created after this instant (RFC 3339 with an offset).' },
          created_before: { type: 'string', maxLength: 40, description: 'Only labels created before this instant (RFC 3339 with an offset).' },
        },
      },
      response: { 200: { type: 'array', items: { $ref: 'Label#' } }, ...errors(400, 401, 403) },
    },
    handler: async (request, reply) => {
      const page = pageOf(request.query);
      const labels = await listLabels(ctx, principalOf(request).accountId, page, request.query);
      return sendPage(request, reply, ctx.config.publicBaseUrl, page, labels);
    },
  });

  app.get<{ Params: { id: string }; Querystring: { format: LabelFormat } }>('/labels/:id', {
    config: { scope: 'read:labels' },
    schema: {
      tags: ['labels'],
      operationId: 'getLabel', summary: 'Get a label in a chosen format',
      description: '`format` (default PDF) sets the format of the returned `url`; expiresAt does not change.',
      params: idParams,
      querystring: labelFormatQuery,
      response: { 200: { $ref: 'Label#' }, ...errors(400, 401, 403, 404) },
    },
    handler: async (request) => getLabel(ctx, principalOf(request).accountId, request.params.id, request.query.format),
  });

  app.put<{ Params: { id: string } }>('/labels/:id/invalidate', {
    config: { scope: 'write:labels' },
    schema: {
      tags: ['labels'],
      operationId: 'invalidateLabel', summary: 'Invalidate a label',
      description: 'The label can no longer be downloaded and the shipment may get a new label. Invalidating again is also 204. A label on a manifest is handed over and can no longer be invalidated: 409 naming the manifest. So is a label whose parcel the carrier has scanned (its shipment\'s status past `pre_transit`): 409 naming that status, as its postage is used.',
      params: idParams,
      response: { 204: { description: 'Invalidated', type: 'null' }, ...errors(400, 401, 403, 404, 409) },
    },
    handler: async (request, reply) => {
      await invalidateLabel(ctx, principalOf(request).accountId, request.params.id);
      return reply.code(204).send();
    },
  });

  // The logo's body is an image, read as bytes in a scope of its own: elsewhere an image stays 415.
  app.register(async (scope) => {
    scope.addContentTypeParser(LOGO_MEDIA_TYPES as unknown as string[], { parseAs: 'buffer', bodyLimit: LOGO_MAX_BYTES }, (_request, body, done) => done(null, body));
    scope.put('/account/logo', {
      config: { scope: 'write:labels', bodyTypes: [...LOGO_MEDIA_TYPES] },
      bodyLimit: LOGO_MAX_BYTES,
      schema: {
        tags: ['labels'],
        operationId: 'setAccountLogo',
        summary: "Set the account's logo",
        description: 'A PNG or JPEG of at most 256 KiB, printed 1-bit in a box of at most 1 x 1 inch on every label of the account created afterwards, in every format (labels already created keep what they had). Another type is 415, a body that does not decode as its type 400.',
        response: { 204: { description: 'Stored', type: 'null' }, ...errors(400, 401, 403, 413, 415) },
      },
      handler: async (request, reply) => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        await setLogo(ctx, principalOf(request).accountId, body, request.headers['content-type'] ?? '');
        return reply.code(204).send();
      },
    });
  });

  app.delete('/account/logo', {
    config: { scope: 'write:labels' },
    schema: {
      tags: ['labels'],
      operationId: 'deleteAccountLogo',
      summary: "Remove the account's logo",
      description: 'Labels created afterwards carry no logo; labels already created keep theirs. Also 204 when there was none.',
      response: { 204: { description: 'Removed', type: 'null' }, ...errors(401, 403) },
    },
    handler: async (request, reply) => {
      await deleteLogo(ctx, principalOf(request).accountId);
      return reply.code(204).send();
    },
  });

  app.get<{ Params: { id: string }; Querystring: Omit<DownloadRequest, 'id' | 'dpi'> }>('/downloads/label-documents/:id', {
    config: { public: true, limitedByAddress: true },
    schema: {
      tags: ['labels'],
      operationId: 'downloadLabelDocument',
      summary: "Download a label's customs document by its signed link",
      description: 'A `documents[].url` of a label: its CN22 or CN23 declaration or commercial invoice, as PDF. Needs no other credential. 403 if the link was changed, 410 after the label\'s expiresAt or its invalidation.',
      params: labelDownloadParams,
      querystring: signedLinkQuery('label', 'the document, cn22, cn23 or commercial_invoice'),
      response: {
        200: { description: 'The document (PDF)', content: { 'application/pdf': { schema: binary } }, headers: downloadHeaders },
        304: { description: 'Not modified (If-None-Match)', type: 'null', headers: { etag: downloadHeaders.etag } },
        ...errors(400, 403, 404, 410),
      },
    },
    handler: async (request, reply) => sendDownload(request, reply, await openDocumentDownload(ctx, { ...request.query, id: request.params.id })),
  });

  // GET /labels/{id}/trackingnumber lives in src/tracking/routes.ts.

  app.get<{ Params: { id: string }; Querystring: Omit<DownloadRequest, 'id'> }>('/downloads/labels/:id', {
    config: { public: true, limitedByAddress: true },
    schema: {
      tags: ['labels'],
      operationId: 'downloadLabel', summary: 'Download a label by its signed link',
      description: 'The `url` of a label. Needs no other credential. 403 if the link was changed, 410 after expiresAt or invalidation.',
      params: labelDownloadParams,
      querystring: labelDownloadQuery,
      response: {
        200: { description: 'The label document in its media type', content: documentContent, headers: downloadHeaders },
        304: { description: 'Not modified (If-None-Match)', type: 'null', headers: { etag: downloadHeaders.etag } },
        ...errors(400, 403, 404, 410),
      },
    },
    handler: async (request, reply) => sendDownload(request, reply, await openDownload(ctx, { ...request.query, id: request.params.id })),
  });
}

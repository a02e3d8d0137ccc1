import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { principalOf } from '../http/auth.ts';
import { downloadHeaders, sendDownload } from '../http/downloads.ts';
import { pageOf, paginationQuery, sendPage } from '../http/pagination.ts';
import { errors, idParams } from '../http/schemas.ts';
import { signedLinkQuery } from '../http/signed-links.ts';
import { batchSchema, batchWithItemsSchema, createBatchBody, createPrintFileBody, printFileSchema } from './schemas.ts';
import { createBatch, createPrintFile, getBatch, listBatches, openPrintFileDownload, type NewBatch, type NewPrintFile } from './service.ts';

export const batchSchemas = [batchSchema, batchWithItemsSchema, printFileSchema];

const binary = { type: 'string', format: 'binary' } as const;

export function batchRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: NewBatch }>('/batches', {
    config: { scope: 'write:labels', creates: 'batches' },
    // 1,000 inline shipments are more than the usual 1 MiB.
    bodyLimit: 8 * 1024 * 1024,
    schema: {
      tags: ['batches'],
      operationId: 'createBatch',
      summary: 'Create many labels at once',
      description: 'Every item is checked first: a malformed one is 400 naming it (`items[7].shipment.to.country`) and nothing is created. Then 202: the worker creates the labels (and the items\' new shipments) in item order; an item that fails for a reason of its own (unknown shipment, shipment with an active label) fails alone. `batch.completed` is sent to subscribed webhooks at the end.',
      body: createBatchBody,
      response: { 202: { $ref: 'Batch#' }, ...errors(400, 401, 403, 413, 415, 422) },
    },
    handler: async (request, reply) => reply.code(202).send(await createBatch(ctx, principalOf(request).accountId, request.body)),
  });

  app.get<{ Querystring: { limit?: number; cursor?: string } }>('/batches', {
    config: { scope: 'read:labels' },
    schema: {
      tags: ['batches'],
      operationId: 'listBatches',
      summary: 'List batches, newest first',
      description: 'Batches without their items; the next page is in the `Link: <…>; rel="next"` header.',
      querystring: { type: 'object', additionalProperties: false, properties: paginationQuery },
      response: { 200: { type: 'array', items: { $ref: 'Batch#' } }, ...errors(400, 401, 403) },
    },
    handler: async (request, reply) => {
      const page = pageOf(request.query);
      return sendPage(request, reply, ctx.config.publicBaseUrl, page, await listBatches(ctx, principalOf(request).accountId, page));
    },
  });

  app.get<{ Params: { id: string } }>('/batches/:id', {
    config: { scope: 'read:labels' },
    schema: {
      tags: ['batches'],
      operationId: 'getBatch',
      summary: 'Get a batch with its items',
      description: 'The batch and every item in order: `labelId` and `trackingNumber` once the item succeeded, `error` `{code, message}` when it failed, all null while it waits.',
      params: idParams,
      response: { 200: { $ref: 'BatchWithItems#' }, ...errors(400, 401, 403, 404) },
    },
    handler: async (request) => getBatch(ctx, principalOf(request).accountId, request.params.id),
  });

  app.post<{ Body: NewPrintFile }>('/print-files', {
    config: { scope: 'read:labels' },
    schema: {
      tags: ['batches'],
      operationId: 'createPrintFile',
      summary: 'Put labels, or their customs papers, into one document to print',
      description: 'The labels of a completed batch (its succeeded labels still active; a batch still processing is 409 naming `batchId`, none is 422 `NOTHING_TO_PRINT`) or of a list (an unknown or foreign id is 404 naming the first, an invalidated label 409 naming them), in order, as one PDF (in a layout, from a start position) or one ZPL stream (one `^XA…^XZ` per label). With `contents: customs`, the customs papers of those of them that have any instead, in the same order, as one PDF of A4 pages, each parcel\'s set `copies` times. The `url` is a signed link valid for 24 hours; the document streams out as it is drawn.',
      body: createPrintFileBody,
      response: { 201: { $ref: 'PrintFile#' }, ...errors(400, 401, 403, 404, 409, 413, 415, 422) },
    },
    handler: async (request, reply) => reply.code(201).send(await createPrintFile(ctx, principalOf(request).accountId, request.body)),
  });

  app.get<{ Params: { id: string }; Querystring: { format: string; expires: string; sig: string } }>('/downloads/print-files/:id', {
    config: { public: true, limitedByAddress: true },
    schema: {
      tags: ['batches'],
      operationId: 'downloadPrintFile',
      summary: 'Download a print file by its signed link',
      description: 'The `url` of a print file. Needs no other credential. 403 if the link was changed, 410 after expiresAt or when one of its labels was invalidated since.',
      params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 100 } } },
      querystring: signedLinkQuery('print file', 'PDF or ZPL'),
      response: {
        200: { description: 'The print file', content: { 'application/pdf': { schema: binary }, 'application/zpl': { schema: binary } }, headers: downloadHeaders },
        304: { description: 'Not modified (If-None-Match)', type: 'null', headers: { etag: downloadHeaders.etag } },
        ...errors(400, 403, 404, 410),
      },
    },
    handler: async (request, reply) => sendDownload(request, reply, await openPrintFileDownload(ctx, { ...request.query, id: request.params.id })),
  });
}

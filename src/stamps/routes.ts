import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { InvalidInput } from '../errors.ts';
import { flaw } from '../http/input.ts';
import { principalOf } from '../http/auth.ts';
import { downloadHeaders, sendDownload } from '../http/downloads.ts';
import { downloadQuery } from '../http/signed-links.ts';
import { errors, idParams } from '../http/schemas.ts';
import { createStampBody, downloadParams, invalidQuery, stampFormatQuery, stampSchema, verificationSchema, verifyBody } from './schemas.ts';
import { createStamp, getStamp, invalidateStamps, openStampDownload, verifyStamp, type DownloadRequest, type NewStamp, type StampFormat } from './service.ts';

export const stampSchemas = [stampSchema];

const binary = { type: 'string', format: 'binary' } as const;
const documentContent = { 'application/pdf': { schema: binary }, 'image/png': { schema: binary }, 'application/zpl': { schema: binary } };

/** A space or control character, such as a scanner sends around a code (CR, LF, tab, GS, NUL). */
const PADDING = /[\s\u0000-\u001f\u007f-\u009f]/;

/**
 * A scanned code without what the scanner put around it. Walked from both ends one character at a
 * time (a regular expression anchored at the end would take quadratic time on a long run of spaces).
 */
function scannedCode(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && PADDING.test(text[start]!)) start++;
  while (end > start && PADDING.test(text[end - 1]!)) end--;
  return text.slice(start, end);
}

export function stampRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Body: NewStamp }>('/stamps', {
    config: { scope: 'write:stamps', creates: 'stamps' },
    schema: {
      tags: ['stamps'],
      operationId: 'createStamp', summary: 'Create a postage stamp for a shipment',
      description: 'Issues a stamp with a serial number and a signed indicium, downloadable for 24 hours. A shipment has at most one active stamp: another one is 409 until it is invalidated.',
      body: createStampBody,
      response: { 201: { $ref: 'Stamp#' }, ...errors(400, 401, 403, 404, 409, 413, 415, 422) },
    },
    handler: async (request, reply) => {
      const stamp = await createStamp(ctx, principalOf(request).accountId, request.body);
      return reply.code(201).send(stamp);
    },
  });

  app.post<{ Body: { indicium: string } }>('/stamps/verify', {
    // A verdict can change (invalidation, expiry), so a repeated key must not replay an old one.
    config: { scope: null, readOnly: true },
    schema: {
      tags: ['stamps'],
      operationId: 'verifyStamp', summary: 'Verify a stamp\'s indicium',
      description: 'Any credential, no scope. Answers whether the indicium is genuine and, if so, only the stamp\'s id and current status. Malformed or forged input is `genuine: false`, not an error.',
      body: verifyBody,
      response: { 200: verificationSchema, ...errors(400, 401, 413, 415, 422) },
    },
    // What a scanner sends: the line end or the GS1 separators it puts around the code are not the
    // indicium's. A control character inside it (refused in any other text the service takes) makes
    // it no indicium of ours: not genuine, 200, as for any malformed text.
    preValidation: async (request) => {
      const body = request.body as { indicium?: unknown } | undefined;
      // Text far over the 4 KB an indicium may have is left as it is, for the schema to refuse.
      if (typeof body?.indicium !== 'string' || body.indicium.length > 2 * verifyBody.properties.indicium.maxLength) return;
      const scanned = scannedCode(body.indicium);
      body.indicium = flaw(scanned) ? '' : scanned;
    },
    handler: async (request) => verifyStamp(ctx, request.body.indicium),
  });

  app.get<{ Params: { id: string }; Querystring: { format?: StampFormat } }>('/stamps/:id', {
    config: { scope: 'read:stamps' },
    schema: {
      tags: ['stamps'],
      operationId: 'getStamp', summary: 'Get a stamp',
      description: '`format` (PDF, PNG or ZPL; by default the format the stamp was created in) sets the format of the returned `url`; expiresAt does not change.',
      params: idParams,
      querystring: stampFormatQuery,
      response: { 200: { $ref: 'Stamp#' }, ...errors(400, 401, 403, 404) },
    },
    handler: async (request) => getStamp(ctx, principalOf(request).accountId, request.params.id, request.query.format),
  });

  app.put<{ Params: { id: string }; Querystring: { ids: string[] } }>('/stamps/:id/invalid', {
    config: { scope: 'write:stamps' },
    schema: {
      tags: ['stamps'],
      operationId: 'invalidateStamps', summary: 'Invalidate stamps',
      description: 'Invalidates the path id together with every id in `ids`, in one transaction: any id unknown to the account is 404 naming it and nothing is invalidated. Stamps already invalidated are fine.',
      params: idParams,
      querystring: invalidQuery,
      response: { 204: { description: 'Invalidated', type: 'null' }, ...errors(400, 401, 403, 404) },
    },
    // Form style without explode, as the spec has it: `ids=a,b,c` arrives as one string. One
    // parameter per value (`ids=a&ids=b`) is the other style, which the spec rules out.
    preValidation: async (request) => {
      const query = request.query as { ids?: unknown };
      if (query.ids === undefined) return;
      if (Array.isArray(query.ids)) throw new InvalidInput('ids must be given once, its values joined by commas (ids=a,b), not one parameter per value', [{ field: 'ids', message: 'must be given once, its values joined by commas' }]);
      const parts = String(query.ids).split(',');
      query.ids = parts.length === 1 && parts[0] === '' ? [] : parts;
    },
    handler: async (request, reply) => {
      await invalidateStamps(ctx, principalOf(request).accountId, [request.params.id, ...request.query.ids]);
      return reply.code(204).send();
    },
  });

  app.get<{ Params: { id: string }; Querystring: Omit<DownloadRequest, 'id'> }>('/downloads/stamps/:id', {
    config: { public: true, limitedByAddress: true },
    schema: {
      tags: ['stamps'],
      operationId: 'downloadStamp', summary: 'Download a stamp by its signed link',
      description: 'The `url` of a stamp. Needs no other credential. 403 if the link was changed, 410 after expiresAt or invalidation. `dpi` (203 or 300) sets the resolution of PNG and ZPL.',
      params: downloadParams,
      querystring: downloadQuery,
      response: {
        200: { description: 'The stamp in its media type', content: documentContent, headers: downloadHeaders },
        304: { description: 'Not modified (If-None-Match)', type: 'null', headers: { etag: downloadHeaders.etag } },
        ...errors(400, 403, 404, 410),
      },
    },
    handler: async (request, reply) => sendDownload(request, reply, await openStampDownload(ctx, { ...request.query, id: request.params.id })),
  });
}

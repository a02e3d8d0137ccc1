import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import type { RenderedDocument } from '../render/index.ts';

/** A document behind a signed link, checked and ready to be rendered (labels, stamps). */
export interface Download {
  /** Strong ETag of the document, known before it is rendered. */
  etag: string;
  /** The Cache-Control header: labels may be kept until the link expires, stamps are never stored. */
  cacheControl: string;
  filename: string;
  /** The document, kept or rendered (or a stream of it); called only when the client's copy (If-None-Match) is stale. */
  render(): Promise<Omit<RenderedDocument, 'body'> & { body: Buffer | Readable }>;
}

/** Answers a download: 304 when `If-None-Match` names its ETag, else the document with its media type and filename. */
export async function sendDownload(request: FastifyRequest, reply: FastifyReply, download: Download): Promise<FastifyReply> {
  reply
    .header('cache-control', download.cacheControl)
    .header('etag', download.etag)
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox");
  const ifNoneMatch = request.headers['if-none-match'];
  // Weak comparison (RFC 9110 §13.1.2); `*` matches any current representation, and this one exists.
  if (typeof ifNoneMatch === 'string' && (ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((t) => t.trim().replace(/^W\//, '') === download.etag))) {
    return reply.code(304).send();
  }
  const doc = await download.render();
  return reply.type(doc.mediaType).header('content-disposition', `inline; filename="${download.filename}.${doc.extension}"`).send(doc.body);
}

/** The headers of a download, for the OpenAPI document (what `sendDownload` sets). */
export const downloadHeaders = {
  etag: { type: 'string', description: 'Strong entity tag of the document (it names what the document is drawn from); send it back in `If-None-Match` for a 304.' },
  'cache-control': { type: 'string', description: 'Labels: `private, max-age=<seconds until the link expires>`; stamps: `no-store`.' },
  'content-disposition': { type: 'string', description: '`inline` with the file name, e.g. `label-1Z….pdf`.' },
};

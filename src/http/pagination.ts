// Cursor pagination for lists that are bare JSON arrays with an RFC 8288 `Link: <…>; rel="next"`.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InvalidInput } from '../errors.ts';
import { isUuid } from '../db/ids.ts';
import type { Page } from '../db/page.ts';

export const paginationQuery = {
  limit: { type: 'integer', minimum: 1, maximum: 100, default: 20, description: 'Page size, 1 to 100.' },
  cursor: { type: 'string', maxLength: 200, description: 'Opaque cursor from the previous page\'s Link header.' },
} as const;

export function pageOf(query: { limit?: number; cursor?: string }): Page {
  const limit = query.limit ?? 20;
  if (query.cursor === undefined) return { limit };
  const before = Buffer.from(query.cursor, 'base64url').toString('utf8');
  if (!isUuid(before)) throw new InvalidInput('cursor is not one this service issued', [{ field: 'cursor', message: 'is invalid' }]);
  return { limit, before };
}

/** The cursor of the page after `rows` (up to limit + 1 items, the extra one only telling that there is more), or null on the last page. */
export function cursorAfter(page: Page, rows: { id: string }[]): string | null {
  return rows.length > page.limit ? Buffer.from(rows[page.limit - 1]!.id).toString('base64url') : null;
}

/** Sends a page: `rows` holds up to limit + 1 items, the extra one only telling that there is more. */
export function sendPage<T extends { id: string }>(request: FastifyRequest, reply: FastifyReply, publicBaseUrl: string, page: Page, rows: T[]): T[] {
  const cursor = cursorAfter(page, rows);
  if (cursor === null) return rows;
  const items = rows.slice(0, page.limit);
  const url = new URL(request.url, publicBaseUrl);
  url.searchParams.set('limit', String(page.limit));
  url.searchParams.set('cursor', cursor);
  reply.header('link', `<${url.toString()}>; rel="next"`);
  return items;
}

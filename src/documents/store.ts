// Rendered documents kept in the database, so every process on it reuses what one has drawn.
import { sql } from 'kysely';
import type { AppContext } from '../context.ts';
import type { Db } from '../db/index.ts';
import { isoNow } from '../db/ids.ts';
import type { DocumentStore } from '../render/renderer.ts';

/** A download link lives 24 hours, so a document older than that is of no more use. */
export const DOCUMENT_TTL_MS = 25 * 3600 * 1000;

export function documentStore(db: Db): DocumentStore {
  return {
    async get(key) {
      const row = await db.selectFrom('rendered_documents').select('body').where('key', '=', key).executeTakeFirst();
      return row ? new Uint8Array(row.body.buffer, row.body.byteOffset, row.body.byteLength) : undefined;
    },
    async put(key, body) {
      await db
        .insertInto('rendered_documents')
        .values({ key, body, bytes: body.byteLength, created_at: isoNow() })
        .onConflict((oc) => oc.column('key').doNothing())
        .execute();
    },
  };
}

/** Removes documents past their use, then the oldest while they hold more than `maxBytes`. */
export async function purgeRenderedDocuments(ctx: AppContext): Promise<number> {
  const cutoff = new Date(Date.now() - DOCUMENT_TTL_MS).toISOString();
  const old = await ctx.db.deleteFrom('rendered_documents').where('created_at', '<', cutoff).executeTakeFirst();
  const over = await ctx.db
    .deleteFrom('rendered_documents')
    .where('key', 'in', (eb) =>
      eb
        .selectFrom(
          eb
            .selectFrom('rendered_documents')
            .select(['key', sql<number>`sum(bytes) over (order by created_at desc, key desc)`.as('newer_bytes')])
            .as('kept'),
        )
        .select('kept.key')
        .where('kept.newer_bytes', '>', ctx.config.renderStoreBytes),
    )
    .executeTakeFirst();
  return Number(old.numDeletedRows) + Number(over.numDeletedRows);
}

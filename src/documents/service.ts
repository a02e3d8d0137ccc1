// Rendered documents kept in the database, so every process on it reuses what one has drawn.
import type { AppContext } from '../context.ts';
import type { Db } from '../db/index.ts';
import type { DocumentStore } from '../render/renderer.ts';
import * as store from './store.ts';

/** A download link lives 24 hours, so a document older than that is of no more use. */
export const DOCUMENT_TTL_MS = 25 * 3600 * 1000;

/** The renderer's second level: documents any process on this database has drawn. */
export function documentStore(db: Db): DocumentStore {
  return {
    get: (key) => store.findDocument(db, key),
    put: (key, body) => store.insertDocument(db, key, body),
  };
}

/** Worker job: removes documents past their use, then the oldest while they hold more than RENDER_STORE_MB. */
export async function purgeRenderedDocuments(ctx: AppContext): Promise<number> {
  return store.deleteDocuments(ctx.db, new Date(Date.now() - DOCUMENT_TTL_MS).toISOString(), ctx.config.renderStoreBytes);
}

// Queries of rendered_documents.
import { sql } from 'kysely';
import { PURGE_CHUNK, type Db } from '../db/index.ts';
import { isoNow } from '../db/ids.ts';

export async function findDocument(db: Db, key: string): Promise<Uint8Array | undefined> {
  const row = await db.selectFrom('rendered_documents').select('body').where('key', '=', key).executeTakeFirst();
  return row ? new Uint8Array(row.body.buffer, row.body.byteOffset, row.body.byteLength) : undefined;
}

/** Keeps a document under its key; a document already kept under it stays (rendering is deterministic). */
export async function insertDocument(db: Db, key: string, body: Uint8Array): Promise<void> {
  await db
    .insertInto('rendered_documents')
    .values({ key, body, bytes: body.byteLength, created_at: isoNow() })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
}

/** Deletes documents created before `cutoff`, then the oldest while all together hold more than `maxBytes`. */
export async function deleteDocuments(db: Db, cutoff: string, maxBytes: number): Promise<number> {
  // Each at most PURGE_CHUNK rows a statement; the job runs again while either deleted something.
  const old = await db.deleteFrom('rendered_documents').where('key', 'in', (eb) => eb.selectFrom('rendered_documents').select('key').where('created_at', '<', cutoff).limit(PURGE_CHUNK)).executeTakeFirst();
  const over = await db
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
        .where('kept.newer_bytes', '>', maxBytes)
        // The oldest first, so a part deletes what the whole would have.
        .orderBy('kept.newer_bytes', 'desc')
        .limit(PURGE_CHUNK),
    )
    .executeTakeFirst();
  return Number(old.numDeletedRows) + Number(over.numDeletedRows);
}

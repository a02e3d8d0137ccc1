import { sql, type Kysely } from 'kysely';

// Rendered documents kept for reuse by every process (src/documents/). The key names what the
// document was drawn from and the renderer's version; rows are removed by age and total size.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('rendered_documents')
    .addColumn('key', 'text', (c) => c.primaryKey())
    // bytea is PostgreSQL's binary type; SQLite takes the name and stores the bytes as a blob.
    .addColumn('body', sql`bytea`, (c) => c.notNull())
    .addColumn('bytes', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rendered_documents_created_at').on('rendered_documents').column('created_at').execute();
}

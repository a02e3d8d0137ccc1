import type { Compilable } from 'kysely';
import type { Db, Tx } from './index.ts';

/** Begins the text of a statement whose answer nobody reads (src/db/postgres.ts holds it; SQL ignores the comment). */
export const ANSWER_NOT_READ = '/* answer not read */ ';

/**
 * Runs a write whose answer the caller never reads. Inside a transaction on PostgreSQL it goes out
 * with the transaction's next statement or its COMMIT, in one write: a round trip less. If it fails,
 * that next statement (or the commit) fails with its error, so the transaction still commits all or
 * nothing; the caller's code between the two must not depend on it having run. Elsewhere it simply
 * runs.
 */
export async function writeUnanswered(db: Db | Tx, query: Compilable): Promise<void> {
  const compiled = query.compile();
  await db.executeQuery({ ...compiled, sql: ANSWER_NOT_READ + compiled.sql });
}

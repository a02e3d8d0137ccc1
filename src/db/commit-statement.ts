// A statement that every transaction committed in an async context runs just before its COMMIT, so
// that what it records commits with the work or not at all. The Idempotency-Key hooks use it to mark
// their key's row "work committed" inside the request's own transaction (src/http/idempotency.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CompiledQuery, DatabaseConnection } from 'kysely';

export interface CommitStatement {
  query: CompiledQuery;
  /** Thrown, so that the transaction rolls back, when the statement changes no row. */
  refusal: Error;
}

const statement = new AsyncLocalStorage<CommitStatement>();

/** Runs `fn` (and everything it starts) with the statement added to the end of each transaction it commits. */
export function withCommitStatement<T>(commit: CommitStatement, fn: () => T): T {
  return statement.run(commit, fn);
}

/** Both drivers call this right before `COMMIT`, on the transaction's connection; a refusal makes Kysely roll back. */
export async function runCommitStatement(connection: DatabaseConnection): Promise<void> {
  const commit = statement.getStore();
  if (!commit) return;
  const { numAffectedRows } = await connection.executeQuery(commit.query);
  if (numAffectedRows === 0n) throw commit.refusal;
}

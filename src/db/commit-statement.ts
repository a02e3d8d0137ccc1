// A statement that every transaction committed in an async context runs just before its COMMIT, so
// that what it records commits with the work or not at all. The Idempotency-Key hooks use it to mark
// their key's row "work committed" inside the request's own transaction (src/http/idempotency.ts).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CompiledQuery, DatabaseConnection } from 'kysely';

const statement = new AsyncLocalStorage<CompiledQuery>();

/** Runs `fn` (and everything it starts) with `query` added to the end of each transaction it commits. */
export function withCommitStatement<T>(query: CompiledQuery, fn: () => T): T {
  return statement.run(query, fn);
}

/** Both drivers call this right before `COMMIT`, on the transaction's connection. */
export async function runCommitStatement(connection: DatabaseConnection): Promise<void> {
  const query = statement.getStore();
  if (query) await connection.executeQuery(query);
}

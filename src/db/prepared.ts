// Hot read paths (the API-key lookup on every request, single-row reads) skip Kysely's per-call query
// building, which costs several times the SQLite lookup itself: the typed builder runs once per
// database and its SQL is reused with new parameters (docs/decisions.md, bench/api.bench.ts).
import { CompiledQuery, type Compilable } from 'kysely';
import type { Db, Tx } from './index.ts';

/**
 * Wraps a query builder whose compiled parameters are exactly its arguments, in order (checked on
 * first use). Inside a transaction the builder runs each time, so the SQL always matches the dialect.
 */
export function preparedQuery<A extends unknown[], R>(build: (db: Db | Tx, ...args: A) => Compilable<R>): (db: Db | Tx, ...args: A) => Promise<R[]> {
  const sqlByDb = new WeakMap<Db | Tx, string>();
  return async (db, ...args) => {
    let text = sqlByDb.get(db);
    if (text === undefined) {
      const compiled = build(db, ...args).compile();
      if (compiled.parameters.length !== args.length || compiled.parameters.some((p, i) => p !== args[i])) {
        throw new Error(`preparedQuery: the parameters of "${compiled.sql}" are not exactly the arguments in order`);
      }
      if (db.isTransaction) return (await db.executeQuery(compiled)).rows;
      text = compiled.sql;
      sqlByDb.set(db, text);
    }
    return (await db.executeQuery<R>(CompiledQuery.raw(text, args))).rows;
  };
}

// Hot read paths (the API-key lookup on every request, single-row reads, a label's events) skip
// Kysely's per-call query building and, on a SQLite file, Kysely itself: the typed builder runs once
// per database, and its SQL is reused with new parameters. On SQLite the statement then runs
// synchronously on the storage's read connection (SqliteReader); on PostgreSQL through Kysely's pool
// (docs/decisions.md, bench/api.bench.ts).
import { CompiledQuery, type Compilable } from 'kysely';
import type { Db, Tx } from './index.ts';
import type { SqliteReader } from './sqlite.ts';

const readers = new WeakMap<Db, SqliteReader>();

/** Prepared queries given `db` itself (not a transaction) run on `reader`. */
export function useReader(db: Db, reader: SqliteReader): void {
  readers.set(db, reader);
}

/** A query whose SQL is built once per database; called, it answers the rows as a promise. */
export type PreparedQuery<A extends unknown[], R> = (db: Db | Tx, ...args: A) => Promise<R[]>;

/**
 * Wraps a query builder whose compiled parameters are exactly its arguments, in order (checked on
 * first use). Inside a transaction the builder runs each time through the transaction, so the SQL
 * always matches the dialect and the read sees the transaction's own writes.
 */
export function preparedQuery<A extends unknown[], R>(build: (db: Db | Tx, ...args: A) => Compilable<R>): PreparedQuery<A, R> {
  const sqlByDb = new WeakMap<Db | Tx, string>();
  const compile = (db: Db | Tx, args: A): CompiledQuery<R> => {
    const compiled = build(db, ...args).compile();
    if (compiled.parameters.length !== args.length || compiled.parameters.some((p, i) => p !== args[i])) {
      throw new Error(`preparedQuery: the parameters of "${compiled.sql}" are not exactly the arguments in order`);
    }
    return compiled;
  };
  const sqlOf = (db: Db, args: A): string => {
    let text = sqlByDb.get(db);
    if (text === undefined) sqlByDb.set(db, (text = compile(db, args).sql));
    return text;
  };
  const query = async (db: Db | Tx, ...args: A): Promise<R[]> => {
    if (db.isTransaction) return (await db.executeQuery(compile(db, args))).rows;
    const text = sqlOf(db as Db, args);
    const reader = readers.get(db as Db);
    if (reader) return reader.all<R>(text, args);
    return (await db.executeQuery<R>(CompiledQuery.raw(text, args))).rows;
  };
  return query;
}

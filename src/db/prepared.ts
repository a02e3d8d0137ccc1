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
 * A read written in SQLite's own SQL whose answer is one text column of at most one row (null: no
 * row), run on the read connection of `db` and reused until anything commits to the database, in any
 * process. It is answered to `done` at the end of this turn of the event loop, together with the
 * other reads asked for during it (AnswerCache.getAtEndOfTurn, src/db/answers.ts). False where `db`
 * has no read connection (PostgreSQL, a transaction, an in-memory database): the caller reads another
 * way. The parameters must be strings.
 */
export function sqliteTextAtEndOfTurn(db: Db | Tx, sql: string, args: readonly string[], done: (err: Error | null, answer: string | null) => void): boolean {
  const reader = readers.get(db as Db);
  if (!reader) return false;
  reader.answers.getAtEndOfTurn(answerKey(sql, args), firstText(reader, sql, args), done);
  return true;
}

/**
 * An answer of the caller's own making (`load`, which may read several queries through a promise),
 * reused and answered at the end of the turn like sqliteTextAtEndOfTurn's. `key` names the answer with
 * every parameter it depends on (the account first). False where `db` has no read connection.
 */
export function answerAtEndOfTurn(db: Db | Tx, key: readonly string[], load: () => Promise<string>, done: (err: Error | null, answer: string | null) => void): boolean {
  const reader = readers.get(db as Db);
  if (!reader) return false;
  // `k` keeps these keys apart from answerKey's, which begin with a digit.
  reader.answers.getAtEndOfTurn(`k${JSON.stringify(key)}`, load, done);
  return true;
}

function firstText(reader: SqliteReader, sql: string, args: readonly string[]): () => string | null {
  return () => {
    const row = reader.all<Record<string, unknown>>(sql, args)[0];
    return row === undefined ? null : (Object.values(row)[0] as string);
  };
}

/** Numbers the statements whose answers are kept, so that a key need not hold the whole SQL. */
const statementNumbers = new Map<string, number>();

function answerKey(sql: string, args: readonly string[]): string {
  let n = statementNumbers.get(sql);
  if (n === undefined) statementNumbers.set(sql, (n = statementNumbers.size));
  // JSON keeps the parameters apart whatever they hold.
  return `${n}${JSON.stringify(args)}`;
}

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

// node:sqlite under Kysely: Kysely's SQLite query compiler, adapter and introspector, with a driver of
// our own over Node's built-in DatabaseSync (no native addon to compile on install).
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { mkdirSync } from 'node:fs';
import { createCache } from '../cache.ts';
import { afterCommit } from './events.ts';
import { runCommitStatement } from './commit-statement.ts';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { CompiledQuery, SelectQueryNode, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, type DatabaseConnection, type Dialect, type Driver, type QueryResult } from 'kysely';
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';

type Bindable = null | number | bigint | string | Uint8Array;

function bindable(value: unknown): Bindable {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string' || value instanceof Uint8Array) return value;
  return JSON.stringify(value);
}

/** One node:sqlite connection running Kysely's compiled queries. */
class SqliteConnection implements DatabaseConnection {
  readonly #db: DatabaseSync;
  // Prepared statements are reused: Kysely compiles the same SQL for the same query shape.
  readonly #statements = createCache<string, { stmt: StatementSync; reader: boolean }>({ max: 1000 });
  constructor(db: DatabaseSync) {
    this.#db = db;
  }
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    let prepared = this.#statements.get(query.sql);
    if (!prepared) {
      const stmt = this.#db.prepare(query.sql);
      // A statement with result columns (a select, or RETURNING) answers rows.
      prepared = { stmt, reader: stmt.columns().length > 0 };
      this.#statements.set(query.sql, prepared);
    }
    const parameters = query.parameters.map(bindable);
    if (prepared.reader) return { rows: prepared.stmt.all(...parameters) as R[] };
    const { changes, lastInsertRowid } = prepared.stmt.run(...parameters);
    return { numAffectedRows: BigInt(changes), insertId: lastInsertRowid == null ? undefined : BigInt(lastInsertRowid), rows: [] };
  }
  // biome-ignore lint/correctness/useYield: never streams
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not used');
  }
  close(): void {
    this.#statements.clear();
    if (this.#db.isOpen) this.#db.close();
  }
}

/** How long a statement waits for another connection's write lock before it fails with SQLITE_BUSY. */
export const BUSY_WAIT_MS = 5000;
/** The longest pause between two tries; a write lock is usually held for a millisecond or two. */
const MAX_RETRY_PAUSE_MS = 4;

/** SQLITE_BUSY: another connection (a thread or a process) holds the write lock. */
function isBusy(err: unknown): boolean {
  return (err as { errcode?: number } | null)?.errcode === 5;
}

/**
 * A connection that waits for another connection's write lock without blocking its thread. SQLite's
 * own busy handler sleeps inside the call, which on the event loop stops every request (measured: a
 * lock held 1.5 ms by the jobs thread stopped the API's loop for a median 3.2 ms, at most 8 ms, since
 * the handler's sleeps overshoot). So the connections run with busy_timeout = 0 and a statement that
 * meets a lock is tried again after an asynchronous pause, for up to BUSY_WAIT_MS. A statement that
 * failed with SQLITE_BUSY changed nothing, inside a transaction or not.
 */
class WaitingConnection implements DatabaseConnection {
  readonly #inner: DatabaseConnection;
  constructor(inner: DatabaseConnection) {
    this.#inner = inner;
  }
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const deadline = Date.now() + BUSY_WAIT_MS;
    for (let pause = 1; ; pause = Math.min(pause * 2, MAX_RETRY_PAUSE_MS)) {
      try {
        return await this.#inner.executeQuery<R>(query);
      } catch (err) {
        if (!isBusy(err) || Date.now() + pause > deadline) throw err;
        await sleep(pause);
      }
    }
  }
  streamQuery<R>(query: CompiledQuery, chunkSize: number): AsyncIterableIterator<QueryResult<R>> {
    return this.#inner.streamQuery<R>(query, chunkSize);
  }
}

/** First come, first served: `acquire` resolves with the function that lets the next one in. */
class Turn {
  #last: Promise<void> = Promise.resolve();
  #waiting = 0;
  /** Whether anyone waits for their turn. */
  get wanted(): boolean {
    return this.#waiting > 0;
  }
  acquire(): Promise<() => void> {
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    this.#waiting++;
    const granted = this.#last.then(() => {
      this.#waiting--;
      return release;
    });
    this.#last = mine;
    return granted;
  }
}

/**
 * What Kysely gets for each query or transaction. It reads on the reader connection until it first
 * writes (a write, `BEGIN` or raw SQL); from then on it holds the writer connection, in turn with
 * every other session, until Kysely releases it (after the commit, or after the single statement).
 */
class Session implements DatabaseConnection {
  readonly #driver: TwoConnectionDriver;
  #writer: Promise<() => void> | undefined;
  constructor(driver: TwoConnectionDriver) {
    this.#driver = driver;
  }
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const reader = this.#driver.reader;
    if (!this.#writer && reader && SelectQueryNode.is(query.query)) return reader.executeQuery<R>(query);
    this.#writer ??= this.#driver.turn.acquire();
    await this.#writer;
    // node:sqlite answers at once, so a whole transaction would otherwise run in one turn of the event
    // loop while every request that arrived meanwhile waits. In a process that serves requests, each
    // statement on the writer (BEGIN and COMMIT too) first waits a turn, so those go first (a read on
    // the read connection answers within its turn), unless another session waits for the writer:
    // then they run back to back, since each turn taken holds SQLite's write lock a little longer.
    if (this.#driver.servesRequests && !this.#driver.turn.wanted) await nextTurn();
    return this.#driver.writer.executeQuery<R>(query);
  }
  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not used');
  }
  async release(): Promise<void> {
    const writer = this.#writer;
    this.#writer = undefined;
    if (writer) (await writer)();
  }
}

/**
 * Two connections to one SQLite file: reads outside a transaction go to a read-only connection and
 * never wait for a transaction (WAL lets a reader see the last commit while a writer works), and
 * writes and transactions take turns on the other. A transaction waiting for another thread's or
 * process's write lock (WaitingConnection) therefore holds up only writes; with one connection,
 * every read waited behind it. Transactions begin with `BEGIN IMMEDIATE`, taking the write lock at
 * once: a deferred transaction that reads and then writes fails with "database is locked" when
 * another process wrote in between, while this waits its turn. An in-memory database has no second
 * connection, so there reads take turns too.
 */
class TwoConnectionDriver implements Driver {
  readonly writer: WaitingConnection;
  readonly reader: WaitingConnection | undefined;
  readonly turn = new Turn();
  /** Whether this process answers requests, so a statement on the writer first waits a turn of the event loop (Session). */
  readonly servesRequests: boolean;
  readonly #connections: SqliteConnection[];
  constructor(writer: DatabaseSync, reader: DatabaseSync | undefined, servesRequests: boolean) {
    this.servesRequests = servesRequests;
    const w = new SqliteConnection(writer);
    const r = reader && new SqliteConnection(reader);
    this.writer = new WaitingConnection(w);
    this.reader = r && new WaitingConnection(r);
    this.#connections = r ? [r, w] : [w];
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    return new Session(this);
  }
  async beginTransaction(session: DatabaseConnection): Promise<void> {
    await session.executeQuery(CompiledQuery.raw('begin immediate'));
  }
  async commitTransaction(session: DatabaseConnection): Promise<void> {
    await runCommitStatement(session);
    await session.executeQuery(CompiledQuery.raw('commit'));
    afterCommit();
  }
  async rollbackTransaction(session: DatabaseConnection): Promise<void> {
    await session.executeQuery(CompiledQuery.raw('rollback'));
  }
  async releaseConnection(session: DatabaseConnection): Promise<void> {
    await (session as Session).release();
  }
  async destroy(): Promise<void> {
    for (const connection of this.#connections) connection.close();
  }
}

/** Kysely's SQLite adapter, told that the driver serialises what needs serialising (TwoConnectionDriver). */
class TwoConnectionAdapter extends SqliteAdapter {
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

/** How often the checkpointer thread copies the WAL into the database file (PASSIVE checkpoint). */
export const CHECKPOINT_INTERVAL_MS = 200;

export interface SqliteStorage {
  dialect: Dialect;
  /** Stops the checkpointer thread, after the dialect's connection is closed (Kysely's destroy). */
  close(): Promise<void>;
}

/** The checkpointer thread's name, as the operating system lists it (`top -H`, the comm file of /proc). */
export const CHECKPOINTER_THREAD_NAME = 'checkpointer';

/**
 * Checkpoints the WAL of `path` from a worker thread with its own connection (src/db/sqlite-checkpointer.ts),
 * and turns off the automatic checkpoint of `db`, which would otherwise run inside a COMMIT on the
 * event loop. Should the thread fail, the automatic checkpoint is turned back on.
 */
function startCheckpointer(db: DatabaseSync, path: string): () => Promise<void> {
  const worker = new Worker(new URL('./sqlite-checkpointer.ts', import.meta.url), {
    workerData: { path, tickMs: CHECKPOINT_INTERVAL_MS },
    name: CHECKPOINTER_THREAD_NAME,
    // Its heap holds one prepared statement; keep the thread small.
    resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 },
  });
  // Never keeps a process alive: the WAL left by a process that exits without closing is recovered on the next open.
  worker.unref();
  let stopping = false;
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      if (!stopping && db.isOpen) db.exec('PRAGMA wal_autocheckpoint = 1000');
      resolve();
    });
  });
  worker.on('error', () => {});
  db.exec('PRAGMA wal_autocheckpoint = 0');
  return async () => {
    stopping = true;
    worker.ref();
    worker.postMessage('stop');
    await exited;
  };
}

/** `sqlite:./data/shipping.db` or `sqlite::memory:`. */
export function sqliteStorage(url: string, { servesRequests = false, synchronous = 'normal' }: { servesRequests?: boolean; synchronous?: 'normal' | 'full' } = {}): SqliteStorage {
  const path = url.slice('sqlite:'.length);
  const memory = path === ':memory:' || path === '';
  if (!memory) mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(memory ? ':memory:' : path);
  // Opening may wait for another process (switching to WAL); from then on, statements wait without blocking (WaitingConnection).
  db.exec(`PRAGMA busy_timeout = ${BUSY_WAIT_MS}`);
  if (!memory) db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA foreign_keys = ON');
  // NORMAL syncs the write-ahead log at checkpoints only: a process that dies loses nothing committed,
  // a machine that does may lose the last commits. FULL syncs it at every commit (SQLITE_SYNCHRONOUS).
  db.exec(`PRAGMA synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  db.exec('PRAGMA busy_timeout = 0');
  const stopCheckpointer = memory ? async () => {} : startCheckpointer(db, path);
  let reader: DatabaseSync | undefined;
  if (!memory) {
    reader = new DatabaseSync(path, { readOnly: true });
    reader.exec('PRAGMA busy_timeout = 0');
  }
  return {
    dialect: {
      createDriver: () => new TwoConnectionDriver(db, reader, servesRequests),
      createQueryCompiler: () => new SqliteQueryCompiler(),
      createAdapter: () => new TwoConnectionAdapter(),
      createIntrospector: (kysely) => new SqliteIntrospector(kysely),
    },
    close: stopCheckpointer,
  };
}

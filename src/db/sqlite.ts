// Kysely's SQLite dialect speaks the better-sqlite3 interface; this adapts node:sqlite to it.
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { mkdirSync } from 'node:fs';
import { createCache } from '../cache.ts';
import { afterCommit } from './events.ts';
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Dialect, type QueryResult } from 'kysely';
import { withDriver } from './dialect.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

type Bindable = null | number | bigint | string | Uint8Array;

function bindable(value: unknown): Bindable {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'string' || value instanceof Uint8Array) return value;
  return JSON.stringify(value);
}

class Statement implements SqliteStatement {
  readonly reader: boolean;
  readonly #stmt: StatementSync;
  constructor(stmt: StatementSync) {
    this.#stmt = stmt;
    this.reader = stmt.columns().length > 0;
  }
  all(parameters: ReadonlyArray<unknown>): unknown[] {
    return this.#stmt.all(...parameters.map(bindable));
  }
  run(parameters: ReadonlyArray<unknown>) {
    const r = this.#stmt.run(...parameters.map(bindable));
    return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
  }
  iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    return this.#stmt.iterate(...parameters.map(bindable)) as IterableIterator<unknown>;
  }
}

class NodeSqlite implements SqliteDatabase {
  readonly #db: DatabaseSync;
  // Prepared statements are reused: Kysely compiles the same SQL for the same query shape.
  readonly #cache = createCache<string, Statement>({ max: 1000 });
  constructor(db: DatabaseSync) {
    this.#db = db;
  }
  prepare(sql: string): SqliteStatement {
    let stmt = this.#cache.get(sql);
    if (!stmt) {
      stmt = new Statement(this.#db.prepare(sql));
      this.#cache.set(sql, stmt);
    }
    return stmt;
  }
  close(): void {
    this.#cache.clear();
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

/**
 * Kysely's SQLite driver, with transactions that take the write lock when they begin: a deferred
 * transaction that reads and then writes fails at once with "database is locked" when another process
 * wrote in between, while `BEGIN IMMEDIATE` waits its turn instead (without blocking: WaitingConnection).
 */
class ImmediateTransactionDriver extends SqliteDriver {
  #connection: WaitingConnection | undefined;
  override async acquireConnection(): Promise<DatabaseConnection> {
    this.#connection ??= new WaitingConnection(await super.acquireConnection());
    return this.#connection;
  }
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await super.commitTransaction(connection);
    afterCommit();
  }
}

/** How often the checkpointer thread copies the WAL into the database file (PASSIVE checkpoint). */
export const CHECKPOINT_INTERVAL_MS = 200;

export interface SqliteStorage {
  dialect: Dialect;
  /** Stops the checkpointer thread, after the dialect's connection is closed (Kysely's destroy). */
  close(): Promise<void>;
}

/**
 * Checkpoints the WAL of `path` from a worker thread with its own connection (src/db/sqlite-checkpointer.ts),
 * and turns off the automatic checkpoint of `db`, which would otherwise run inside a COMMIT on the
 * event loop. Should the thread fail, the automatic checkpoint is turned back on.
 */
function startCheckpointer(db: DatabaseSync, path: string): () => Promise<void> {
  const worker = new Worker(new URL('./sqlite-checkpointer.ts', import.meta.url), {
    workerData: { path, tickMs: CHECKPOINT_INTERVAL_MS },
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
export function sqliteStorage(url: string): SqliteStorage {
  const path = url.slice('sqlite:'.length);
  const memory = path === ':memory:' || path === '';
  if (!memory) mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(memory ? ':memory:' : path);
  // Opening may wait for another process (switching to WAL); from then on, statements wait without blocking (WaitingConnection).
  db.exec(`PRAGMA busy_timeout = ${BUSY_WAIT_MS}`);
  if (!memory) db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA foreign_keys = ON');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA busy_timeout = 0');
  const stopCheckpointer = memory ? async () => {} : startCheckpointer(db, path);
  const config = { database: new NodeSqlite(db) };
  return {
    dialect: withDriver(new SqliteDialect(config), () => new ImmediateTransactionDriver(config)),
    close: stopCheckpointer,
  };
}

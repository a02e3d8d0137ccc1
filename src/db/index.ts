import { Kysely, sql, type Transaction } from 'kysely';
import { readdir } from 'node:fs/promises';
import type { Database } from './schema.ts';
import { sqliteStorage } from './sqlite.ts';
import { postgresDialect, postgresPool } from './postgres.ts';
import { querySpans } from '../tracing.ts';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
export type DialectName = 'sqlite' | 'postgres';

export interface Storage {
  db: Db;
  dialect: DialectName;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** PostgreSQL only: work inside this schema (created if missing). Tests use one schema each. */
  schema?: string;
  /** PostgreSQL only: connections the pool opens at most (DATABASE_POOL_SIZE; default DEFAULT_POOL_SIZE). */
  poolSize?: number;
  /**
   * PostgreSQL only: a statement's longest run and a connection's longest wait (DATABASE_TIMEOUT_MS)
   * where the process serves requests. Background work (jobs, workers, the admin command) gets
   * BACKGROUND_TIMEOUT_FACTOR times as long (its statements are short: purges go PURGE_CHUNK rows
   * at a time), so a server gone silent fails its statements (logged, retried) rather than holding
   * the jobs for ever.
   */
  timeoutMs?: number;
  /**
   * SQLite only: this process answers requests, so its writes give way to them between statements
   * (`Session` in src/db/sqlite.ts). Not for background jobs, workers or the admin command, which
   * would only hold the write lock longer.
   */
  servesRequests?: boolean;
  /** SQLite only: when commits reach the disk (SQLITE_SYNCHRONOUS); `normal` unless told. */
  synchronous?: 'normal' | 'full';
}

/**
 * Rows a purge deletes in one statement: however far it has fallen behind, each statement stays short
 * (well within background work's limit), and the job runs again at once while there is more.
 */
export const PURGE_CHUNK = 5000;

/** How many times DATABASE_TIMEOUT_MS background work's statements may take (5 minutes by default). */
export const BACKGROUND_TIMEOUT_FACTOR = 10;

export async function openStorage(url: string, options: OpenOptions = {}): Promise<Storage> {
  if (url.startsWith('sqlite:')) {
    const sqlite = sqliteStorage(url, { servesRequests: options.servesRequests, synchronous: options.synchronous });
    const db = new Kysely<Database>({ dialect: sqlite.dialect, log: querySpans('sqlite') });
    return {
      db,
      dialect: 'sqlite',
      close: async () => {
        // The service's connection first: the checkpointer's is then the last, and its close checkpoints and removes the WAL.
        await db.destroy();
        await sqlite.close();
      },
    };
  }
  if (options.schema) {
    if (!/^[a-z_][a-z0-9_]*$/.test(options.schema)) throw new Error(`bad schema name ${options.schema}`);
    const admin = postgresPool(url);
    try {
      await admin.query(`CREATE SCHEMA IF NOT EXISTS ${options.schema}`);
    } catch (err) {
      // Two processes creating the same schema at once: the loser's error is harmless.
      if ((err as { code?: string }).code !== '23505' && (err as { code?: string }).code !== '42P06') throw err;
    } finally {
      await admin.end();
    }
  }
  const timeoutMs = options.timeoutMs === undefined || options.servesRequests ? options.timeoutMs : options.timeoutMs * BACKGROUND_TIMEOUT_FACTOR;
  const pool = postgresPool(url, options.schema, options.poolSize, timeoutMs);
  const db = new Kysely<Database>({ dialect: postgresDialect(pool), log: querySpans('postgresql') });
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

const migrationsDir = new URL('./migrations/', import.meta.url);

interface Migration {
  // Each migration sees the schema as it was when it was written, not today's Database type.
  up(db: Kysely<unknown>): Promise<void>;
}

async function folderMigrations(): Promise<[string, Migration][]> {
  const files = (await readdir(migrationsDir)).filter((f) => /^\d{4}_[a-z0-9_]+\.ts$/.test(f)).sort();
  const out: [string, Migration][] = [];
  for (const file of files) out.push([file.replace(/\.ts$/, ''), (await import(new URL(file, migrationsDir).href)) as Migration]);
  return out;
}

// Any constant works; it only has to be the same in every process of this service.
export const MIGRATION_LOCK_KEY = 727_001;

/**
 * Brings the schema up to date: the pending files of migrations/, in order, in one transaction that
 * holds a lock, so several processes starting at once on one database run each migration once.
 * (Kysely's Migrator is not used: it looks for its bookkeeping tables in every schema of the
 * database, which both mistakes another schema's tables for ours and trips over schemas being dropped.)
 */
export async function migrate(storage: Storage): Promise<void> {
  // Imported before the lock is taken: loading the files is the slow part of a cold start, and other
  // processes starting at the same time wait for the lock (SQLite gives up after busy_timeout).
  const migrations = await folderMigrations();
  await storage.db.connection().execute(async (conn) => {
    // SQLite: take the write lock up front, so a second process waits (busy_timeout) instead of failing.
    await sql.raw(storage.dialect === 'sqlite' ? 'begin immediate' : 'begin').execute(conn);
    let current = '';
    try {
      if (storage.dialect === 'postgres') {
        // Migrations run as long as they need (an index on a large table), and wait as long as another
        // process's take, whatever statement_timeout the role or server sets (the caller gives them a
        // connection without a client-side limit: src/bootstrap.ts).
        await sql`set local statement_timeout = 0`.execute(conn);
        await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`.execute(conn);
      }
      await sql`create table if not exists kysely_migration (name varchar(255) not null primary key, timestamp varchar(255) not null)`.execute(conn);
      const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(conn);
      const done = new Set(rows.map((r) => r.name));
      for (const [name, migration] of migrations) {
        if (done.has(name)) continue;
        current = name;
        await migration.up(conn as unknown as Kysely<unknown>);
        await sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(conn);
      }
      await sql`commit`.execute(conn);
    } catch (err) {
      await sql`rollback`.execute(conn).catch(() => {});
      throw new Error(`migration ${current} failed: ${(err as Error).message}`, { cause: err });
    }
  });
}

/**
 * Whether the database holds the service's tables: its migrations' record exists and names at least
 * one. A database recreated empty under a running service (restored, dropped by mistake) answers
 * `select 1` but no request: the health check asks this instead. Throws when the database does not answer.
 */
export async function schemaPresent(db: Db): Promise<boolean> {
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration limit 1`.execute(db);
    return rows.length > 0;
  } catch (err) {
    // No such table (PostgreSQL 42P01; SQLite "no such table"): the database is there, the schema is not.
    if ((err as { code?: string }).code === '42P01' || /no such table/.test((err as Error).message)) return false;
    throw err;
  }
}

/** Ids a statement's `IN (…)` takes at a time: far below PostgreSQL's 65,535 parameters a statement. */
export const IDS_PER_STATEMENT = 500;

/** `query` over `ids` a part at a time (`IDS_PER_STATEMENT`), one after another, the rows of every part together. */
export async function byParts<T>(ids: readonly string[], query: (part: string[]) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += IDS_PER_STATEMENT) out.push(...(await query(ids.slice(i, i + IDS_PER_STATEMENT))));
  return out;
}

/** Adds one to a named counter and returns the new value, atomically in both dialects. */
export async function nextCounter(db: Db | Tx, name: string): Promise<number> {
  const row = await db
    .insertInto('counters')
    .values({ name, value: 1 })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value: sql`counters.value + 1` }))
    .returning('value')
    .executeTakeFirstOrThrow();
  return Number(row.value);
}

/**
 * Whether `err` says the database could not be reached or did not answer in time, rather than that
 * the request was wrong: a request that meets one is answered 503 (src/http/errors.ts) and may simply
 * be sent again. PostgreSQL: a refused or broken connection, no connection free within
 * DATABASE_TIMEOUT_MS, a statement cancelled by its timeout, a server shutting down or out of
 * connections. SQLite: another connection held the write lock for longer than the wait.
 */
export function isUnavailable(err: unknown): boolean {
  const e = err as { code?: string | number; errcode?: number; message?: string; syscall?: string; routine?: string };
  if (typeof e?.code === 'string' && UNAVAILABLE_CODES.has(e.code)) return true;
  // 55000 is any "object not in prerequisite state"; only the one raised where a new session checks
  // its database is the server refusing to serve. Told by the server function that raised it, which
  // unlike the message does not change with the server's language (lc_messages).
  if (e?.code === '55000' && e.routine === 'CheckMyDatabase') return true;
  if (e?.code === 'ENOENT' && e.syscall === 'connect') return true; // no server at the Unix socket
  // Connection exceptions, but not 08P01 (protocol violation), which a malformed statement of ours also gets.
  if (typeof e?.code === 'string' && e.code.startsWith('08') && e.code !== '08P01') return true;
  if (e?.errcode === 5) return true; // SQLITE_BUSY after the wait (src/db/sqlite.ts)
  return /^(timeout exceeded when trying to connect|Query read timeout|Connection terminated( unexpectedly| due to connection timeout)|Client has encountered a connection error and is not queryable)/.test(e?.message ?? '');
}

const UNAVAILABLE_CODES = new Set([
  // Node's, from the socket to the server
  'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH',
  // PostgreSQL's: statement timeout (query_canceled), too many connections, shutting down, starting up,
  // the database gone or not accepting connections (ALTER DATABASE … ALLOW_CONNECTIONS false: 55000)
  '57014', '53300', '57P01', '57P02', '57P03', '3D000',
]);

export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string | number; errcode?: number; message?: string };
  return e?.code === '23505' || e?.errcode === 2067 || e?.errcode === 1555 || /UNIQUE constraint failed/.test(e?.message ?? '');
}

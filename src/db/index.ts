import { Kysely, sql, type Transaction } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import { readdir } from 'node:fs/promises';
import type pg from 'pg';
import type { Database } from './schema.ts';
import { sqliteDialect } from './sqlite.ts';
import { postgresDialect, postgresPool } from './postgres.ts';

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
}

export async function openStorage(url: string, options: OpenOptions = {}): Promise<Storage> {
  if (url.startsWith('sqlite:')) {
    const db = new Kysely<Database>({ dialect: sqliteDialect(url) });
    return { db, dialect: 'sqlite', close: () => db.destroy() };
  }
  let pool: pg.Pool;
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
  pool = postgresPool(url, options.schema);
  const db = new Kysely<Database>({ dialect: postgresDialect(pool) });
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

const migrationsDir = new URL('./migrations/', import.meta.url);

class FolderMigrations implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(migrationsDir)).filter((f) => /^\d{4}_[a-z0-9_]+\.ts$/.test(f)).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      migrations[file.replace(/\.ts$/, '')] = (await import(new URL(file, migrationsDir).href)) as Migration;
    }
    return migrations;
  }
}

// Any constant works; it only has to be the same in every process of this service.
const MIGRATION_LOCK_KEY = 727_001;

/** Brings the schema up to date. Safe when several processes start at once on one PostgreSQL. */
export async function migrate(storage: Storage): Promise<void> {
  const run = async (db: Db, migrationTableSchema?: string) => {
    const migrator = new Migrator({ db, provider: new FolderMigrations(), migrationTableSchema });
    const { error, results } = await migrator.migrateToLatest();
    if (error) {
      const failed = results?.find((r) => r.status === 'Error');
      throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? error}`, { cause: error });
    }
  };
  if (storage.dialect === 'sqlite') return run(storage.db);
  // Kysely's own lock needs its lock table to exist first; creating that table races between two
  // fresh processes, so a session advisory lock serialises the whole migration instead.
  await storage.db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`.execute(conn);
    try {
      // Named explicitly: without a schema Kysely takes its tables in any other schema of the
      // database (another app, another test) for its own, and then fails to find them.
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(conn);
      await run(conn, rows[0]!.schema);
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`.execute(conn);
    }
  });
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

export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string | number; errcode?: number; message?: string };
  return e?.code === '23505' || e?.errcode === 2067 || e?.errcode === 1555 || /UNIQUE constraint failed/.test(e?.message ?? '');
}

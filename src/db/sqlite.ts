// Kysely's SQLite dialect speaks the better-sqlite3 interface; this adapts node:sqlite to it.
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { SqliteDialect } from 'kysely';
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
  readonly #cache = new Map<string, Statement>();
  constructor(db: DatabaseSync) {
    this.#db = db;
  }
  prepare(sql: string): SqliteStatement {
    // A deferred transaction that reads and then writes fails at once with "database is locked" when
    // another process wrote in between; taking the write lock up front waits out busy_timeout instead.
    if (sql === 'begin') sql = 'begin immediate';
    let stmt = this.#cache.get(sql);
    if (!stmt) {
      stmt = new Statement(this.#db.prepare(sql));
      if (this.#cache.size > 1000) this.#cache.clear();
      this.#cache.set(sql, stmt);
    }
    return stmt;
  }
  close(): void {
    this.#cache.clear();
    if (this.#db.isOpen) this.#db.close();
  }
}

/** `sqlite:./data/shipping.db` or `sqlite::memory:`. */
export function sqliteDialect(url: string): SqliteDialect {
  const path = url.slice('sqlite:'.length);
  const memory = path === ':memory:' || path === '';
  if (!memory) mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(memory ? ':memory:' : path);
  db.exec('PRAGMA busy_timeout = 5000');
  if (!memory) db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA foreign_keys = ON');
  db.exec('PRAGMA synchronous = NORMAL');
  return new SqliteDialect({ database: new NodeSqlite(db) });
}

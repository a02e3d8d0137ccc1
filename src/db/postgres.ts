import pg from 'pg';
import { PostgresDialect, PostgresDriver, type DatabaseConnection, type Dialect, type Driver } from 'kysely';
import { afterCommit } from './events.ts';
import { runCommitStatement } from './commit-statement.ts';

// int8 and numeric come back as strings by default; our counters fit in a double.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

/** Statement names by SQL text, the same on every connection; '' for a text sent unnamed. */
const statementNames = new Map<string, string>();
/** Distinct texts remembered at most; beyond that they are sent unnamed (parsed each time). */
const MAX_PREPARED = 2000;
/** `*` in a select list or RETURNING: its columns are fixed when the statement is prepared. */
const STAR = /(^|[\s,.(])\*(\s|,|$)/;

/**
 * A pg client that sends each parameterised statement as a named (prepared) one, named after its
 * text: PostgreSQL then parses and plans it once per connection instead of on every execution. Not
 * a statement that selects or returns `*`: once another process's migration adds a column, such a
 * prepared statement fails with "cached plan must not change result type" on every connection that
 * prepared it, while an unnamed one simply returns the new column.
 */
class PreparingClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: pg.Client's constructor takes its config untyped
  constructor(config?: any) {
    super(config);
    // A connection that breaks while a request holds it (the server restarted, the network cut)
    // fails that request's statement, and pg then emits 'error' on the client too: with no listener
    // (the pool listens only while the client is idle) that would end the process. The statement's
    // error is what counts; the pool drops the broken client when it is given back.
    this.on('error', () => {});
  }

  /** The read timeout this client met: every later statement fails with it (see #watched). */
  #timedOut: Error | undefined;

  // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; this passes each through
  override query(config: any, values?: any, callback?: any): any {
    if (this.#timedOut) {
      const cb = typeof values === 'function' ? values : callback;
      if (typeof cb === 'function') return void process.nextTick(cb, this.#timedOut);
      return Promise.reject(this.#timedOut);
    }
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0) {
      const name = statementName(config);
      if (name) return this.#watched(super.query({ text: config, values, name }, callback));
    }
    return this.#watched(super.query(config, values, callback));
  }

  /**
   * A statement the server has not answered within the read timeout leaves its connection waiting
   * for an answer that may never come: the connection is ended at once, before the statement's
   * caller gives it back, so the pool drops it instead of handing it to the next request. Until
   * then every statement on it (a transaction's ROLLBACK) fails with the same error, so the request
   * learns the cause (503), not "Client was closed".
   */
  #watched<T>(result: T): T {
    if (result instanceof Promise) {
      result.catch((err: unknown) => {
        if ((err as Error | undefined)?.message !== READ_TIMEOUT) return;
        this.#timedOut ??= err as Error;
        this.end().catch(() => {}); // marks the client as ending, which the pool checks when it is given back
        (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy(); // a silent server would never see the end
      });
    }
    return result;
  }
}

/** node-postgres's error for a statement its server did not answer within `query_timeout`. */
const READ_TIMEOUT = 'Query read timeout';

/**
 * Beyond the statement timeout, how long a statement's answer may take to arrive: the server cancels
 * a slow statement itself and says so; a server that says nothing at all (gone without closing the
 * connection) is given up on this much later.
 */
const READ_TIMEOUT_MARGIN_MS = 2000;

function statementName(text: string): string | undefined {
  let name = statementNames.get(text);
  if (name === undefined) {
    if (statementNames.size >= MAX_PREPARED) return undefined;
    name = STAR.test(text) ? '' : `s${statementNames.size}`;
    statementNames.set(text, name);
  }
  return name || undefined;
}

/** Connections a pool opens at most unless told otherwise (DATABASE_POOL_SIZE). */
export const DEFAULT_POOL_SIZE = 10;

/** A statement's longest run and a connection's longest wait unless told otherwise (DATABASE_TIMEOUT_MS). */
export const DEFAULT_DATABASE_TIMEOUT_MS = 30_000;

/** A pool of `size` connections; with `timeoutMs`, no statement or wait for a connection lasts longer. */
export function postgresPool(url: string, schema?: string, size = DEFAULT_POOL_SIZE, timeoutMs?: number): pg.Pool {
  const limits =
    timeoutMs === undefined
      ? {}
      : {
          // Waiting for a free connection, or for a new one to open, fails after this…
          connectionTimeoutMillis: timeoutMs,
          // …the server cancels a statement that runs (or waits for a lock) longer…
          statement_timeout: timeoutMs,
          // …and a server that says nothing at all is given up on a little later.
          query_timeout: timeoutMs + READ_TIMEOUT_MARGIN_MS,
        };
  const pool = new pg.Pool({
    Client: PreparingClient,
    connectionString: url,
    max: size,
    ...limits,
    // A connection whose server went away without a word is found out by TCP's probes (from 10 s
    // idle, then at the system's interval), not only when a statement times out.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    types: types as pg.CustomTypesConfig,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle client losing its connection must not crash the process.
  pool.on('error', () => {});
  return pool;
}

/** Kysely's driver, running the context's commit statement and telling the webhook fan-out after each commit (`afterCommit`). */
class AnnouncingDriver extends PostgresDriver {
  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await runCommitStatement(connection);
    await super.commitTransaction(connection);
    afterCommit();
  }
}

/** Kysely's PostgreSQL dialect with the announcing driver. */
class AnnouncingDialect extends PostgresDialect {
  readonly #pool: pg.Pool;
  constructor(pool: pg.Pool) {
    super({ pool });
    this.#pool = pool;
  }
  override createDriver(): Driver {
    return new AnnouncingDriver({ pool: this.#pool });
  }
}

export function postgresDialect(pool: pg.Pool): Dialect {
  return new AnnouncingDialect(pool);
}

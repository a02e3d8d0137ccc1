import pg from 'pg';
import { PostgresDialect, PostgresDriver, type DatabaseConnection, type Dialect, type Driver } from 'kysely';
import { afterCommit } from './events.ts';

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

/** What a held BEGIN answers at once (Kysely reads nothing of it). */
const BEGUN = Object.freeze({ command: 'BEGIN', rowCount: null, oid: 0, rows: [], fields: [] });

/**
 * A pg client that spares round trips.
 *
 * Each parameterised statement is sent as a named (prepared) one, named after its text: PostgreSQL
 * then parses and plans it once per connection instead of on every execution. Not a statement that
 * selects or returns `*`: once another process's migration adds a column, such a prepared statement
 * fails with "cached plan must not change result type" on every connection that prepared it, while
 * an unnamed one simply returns the new column.
 *
 * A transaction's `begin` is held and written together with the transaction's first statement, in
 * one write, and the client runs in pg's pipeline mode, so the statement is sent without waiting for
 * BEGIN's answer: a transaction costs one round trip less. Each goes with its own Sync, so a failed
 * BEGIN would not stop the statement; but BEGIN fails only on a broken connection or in a session
 * whose transaction is already aborted, and the statement then fails the same way. Either's error
 * rejects the statement, BEGIN's first.
 */
class PreparingClient extends pg.Client {
  #beginHeld = false;

  constructor(config?: pg.ClientConfig) {
    super({ ...config, pipeline: true });
  }

  // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; this passes each through
  override query(config: any, values?: any, callback?: any): any {
    if (config === 'begin' && callback === undefined && (values === undefined || (Array.isArray(values) && values.length === 0))) {
      this.#beginHeld = true;
      return Promise.resolve(BEGUN);
    }
    if (!this.#beginHeld) return this.#send(config, values, callback);
    this.#beginHeld = false;
    const stream = this.connection.stream;
    stream.cork();
    let begun: Promise<unknown>;
    let answer: unknown;
    try {
      begun = super.query('begin');
      answer = this.#send(config, values, callback);
    } finally {
      stream.uncork();
    }
    if (!(answer instanceof Promise)) {
      // A callback query: its callback has the statement's answer; BEGIN's failure then shows there too.
      begun.catch(() => {});
      return answer;
    }
    return Promise.all([begun, answer]).then(([, result]) => result);
  }

  // biome-ignore lint/suspicious/noExplicitAny: as above
  #send(config: any, values?: any, callback?: any): any {
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0) {
      const name = statementName(config);
      if (name) return super.query({ text: config, values, name }, callback);
    }
    return super.query(config, values, callback);
  }
}

function statementName(text: string): string | undefined {
  let name = statementNames.get(text);
  if (name === undefined) {
    if (statementNames.size >= MAX_PREPARED) return undefined;
    name = STAR.test(text) ? '' : `s${statementNames.size}`;
    statementNames.set(text, name);
  }
  return name || undefined;
}

export function postgresPool(url: string, schema?: string): pg.Pool {
  const pool = new pg.Pool({
    Client: PreparingClient,
    connectionString: url,
    max: 10,
    types: types as pg.CustomTypesConfig,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // An idle client losing its connection must not crash the process.
  pool.on('error', () => {});
  return pool;
}

/** Kysely's driver, telling the webhook fan-out after each commit (`afterCommit`). */
class AnnouncingDriver extends PostgresDriver {
  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
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

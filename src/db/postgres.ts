import pg from 'pg';
import { PostgresDialect, PostgresDriver, type DatabaseConnection, type Dialect, type Driver } from 'kysely';
import { afterCommit } from './events.ts';
import { ANSWER_NOT_READ } from './unanswered.ts';

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

/** What a held statement answers at once: nothing its caller reads. */
const HELD = Object.freeze({ command: 'HELD', rowCount: null, oid: 0, rows: [], fields: [] });

interface Held {
  text: string;
  values?: unknown[];
}

/**
 * A pg client that spares round trips.
 *
 * Each parameterised statement is sent as a named (prepared) one, named after its text: PostgreSQL
 * then parses and plans it once per connection instead of on every execution. Not a statement that
 * selects or returns `*`: once another process's migration adds a column, such a prepared statement
 * fails with "cached plan must not change result type" on every connection that prepared it, while
 * an unnamed one simply returns the new column.
 *
 * Inside a transaction, what nobody waits on is held and written with the next statement that is
 * waited on, in one write: the transaction's `begin`, and writes marked `ANSWER_NOT_READ`
 * (`writeUnanswered`). The client runs in pg's pipeline mode, so the statements behind them go out
 * without waiting for their answers. Each goes with its own Sync, so a failed held write leaves the
 * transaction aborted and the statements behind it fail; the first error (in the order sent) rejects
 * the statement that was waited on. BEGIN fails only on a broken connection or in a session whose
 * transaction is already aborted, and the statements behind it then fail the same way. A transaction
 * whose `begin` is still held when it ends sent nothing, so its COMMIT or ROLLBACK is answered here;
 * on ROLLBACK held writes are dropped, as the server would undo them.
 */
class PreparingClient extends pg.Client {
  #held: Held[] = [];
  #inTransaction = false;

  constructor(config?: pg.ClientConfig) {
    super({ ...config, pipeline: true });
  }

  // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; this passes each through
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config === 'string' && callback === undefined) {
      if (config === 'begin' && (values === undefined || (Array.isArray(values) && values.length === 0))) {
        this.#inTransaction = true;
        this.#held.push({ text: config });
        return Promise.resolve(HELD);
      }
      if (this.#inTransaction && config.startsWith(ANSWER_NOT_READ)) {
        this.#held.push({ text: config, values });
        return Promise.resolve(HELD);
      }
      if (config === 'commit' || config === 'rollback') {
        this.#inTransaction = false;
        const nothingSent = this.#held[0]?.text === 'begin';
        if (config === 'rollback') this.#held = [];
        if (nothingSent && this.#held.length <= 1) {
          this.#held = [];
          return Promise.resolve({ ...HELD, command: config.toUpperCase() });
        }
      }
    }
    if (this.#held.length === 0) return this.#send(config, values, callback);
    const held = this.#held;
    this.#held = [];
    const stream = this.connection.stream;
    stream.cork();
    const sent: Promise<unknown>[] = [];
    let answer: unknown;
    try {
      for (const h of held) sent.push(this.#send(h.text, h.values));
      answer = this.#send(config, values, callback);
    } finally {
      stream.uncork();
    }
    if (!(answer instanceof Promise)) {
      // A callback query: its callback has its own answer; a held statement's failure then shows there too.
      for (const p of sent) p.catch(() => {});
      return answer;
    }
    return Promise.all([...sent, answer]).then((answers) => answers[answers.length - 1]);
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

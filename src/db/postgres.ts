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

/**
 * A pg client that sends each parameterised statement as a named (prepared) one, named after its
 * text: PostgreSQL then parses and plans it once per connection instead of on every execution. Not
 * a statement that selects or returns `*`: once another process's migration adds a column, such a
 * prepared statement fails with "cached plan must not change result type" on every connection that
 * prepared it, while an unnamed one simply returns the new column.
 */
class PreparingClient extends pg.Client {
  // biome-ignore lint/suspicious/noExplicitAny: pg's query has a dozen overloads; this passes each through
  override query(config: any, values?: any, callback?: any): any {
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

/** Connections a pool opens at most unless told otherwise (DATABASE_POOL_SIZE). */
export const DEFAULT_POOL_SIZE = 10;

export function postgresPool(url: string, schema?: string, size = DEFAULT_POOL_SIZE): pg.Pool {
  const pool = new pg.Pool({
    Client: PreparingClient,
    connectionString: url,
    max: size,
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

import pg from 'pg';
import { PostgresDialect, PostgresDriver, type DatabaseConnection, type Dialect } from 'kysely';
import { withDriver } from './dialect.ts';
import { afterCommit } from './events.ts';

// int8 and numeric come back as strings by default; our counters fit in a double.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20 || oid === 1700) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

export function postgresPool(url: string, schema?: string): pg.Pool {
  const pool = new pg.Pool({
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

export function postgresDialect(pool: pg.Pool): Dialect {
  return withDriver(new PostgresDialect({ pool }), () => new AnnouncingDriver({ pool }));
}

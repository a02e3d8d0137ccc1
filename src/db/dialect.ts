// Kysely's dialects build their own driver; ours subclass the driver (to wait on SQLite's lock without
// blocking, to announce domain events after each commit), so this puts a driver of ours in a dialect.
import type { Dialect, DialectAdapter, Driver } from 'kysely';

/** `dialect`, with `createDriver` making our driver instead of Kysely's (and `createAdapter` our adapter, if given). */
export function withDriver(dialect: Dialect, createDriver: () => Driver, createAdapter: () => DialectAdapter = () => dialect.createAdapter()): Dialect {
  return {
    createDriver,
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter,
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}

// Kysely's dialects build their own driver; ours subclass the driver (to wait on SQLite's lock without
// blocking, to announce domain events after each commit), so this puts a driver of ours in a dialect.
import type { Dialect, Driver } from 'kysely';

/** `dialect`, with `createDriver` making our driver instead of Kysely's. */
export function withDriver(dialect: Dialect, createDriver: () => Driver): Dialect {
  return {
    createDriver,
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}

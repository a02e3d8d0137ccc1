// Everything between "settings are read" and "the app can be built": database, migrations, keys,
// and the BOOTSTRAP_* credentials.
import { startTracing } from './tracing.ts';
import type { Logger } from 'pino';
import { shownDatabaseUrl, type Config } from './config.ts';
import type { AppContext } from './context.ts';
import { isUnavailable, migrate, openStorage, type OpenOptions, type Storage } from './db/index.ts';
import { KeyRing, serviceSecret } from './auth/keyring.ts';
import { createApiKey, ensureAccount, ensureApiKey, ensureClient, hasApiKey } from './auth/credentials.ts';
import { ALL_SCOPES } from './auth/scopes.ts';
import { Renderer } from './render/renderer.ts';
import { setCachesEnabled } from './cache.ts';
import { documentStore } from './documents/service.ts';

/** Stops what the context holds: the render threads (after documents being stored), then the database. */
export async function closeContext(ctx: AppContext): Promise<void> {
  await ctx.renderer.close();
  await ctx.storage.close();
}

/**
 * Migrations as long as they need: on PostgreSQL over a connection of their own, since a process that
 * serves requests gives up on a statement after DATABASE_TIMEOUT_MS (an index on a large table, or
 * waiting for another process's migrations, may take longer).
 */
async function migrateUnlimited(config: Config, storage: Storage, options: OpenOptions): Promise<void> {
  if (storage.dialect !== 'postgres') return migrate(storage);
  const own = await openStorage(config.databaseUrl, { ...(options.schema ? { schema: options.schema } : {}), poolSize: 1 });
  try {
    await migrate(own);
  } finally {
    await own.close();
  }
}

export async function openContext(config: Config, log: Logger, options: OpenOptions = {}): Promise<AppContext> {
  setCachesEnabled(config.caches);
  // Before the database opens: with tracing on, its queries are spans (Kysely's log, src/tracing.ts).
  await startTracing(config.tracing);
  const storage = await openStorage(config.databaseUrl, { poolSize: config.databasePoolSize, timeoutMs: config.databaseTimeoutMs, synchronous: config.sqliteSynchronous, ...options });
  try {
    await migrateUnlimited(config, storage, options);
    const keys = new KeyRing(storage.db);
    await keys.init();
    const urlKey = await serviceSecret(storage.db, 'download_url_hmac');
    const requestKey = await serviceSecret(storage.db, 'idempotency_request_hmac');
    const renderer = new Renderer({
      threads: config.renderThreads,
      memoryBytes: config.renderCacheBytes,
      ...(config.renderStoreBytes > 0 ? { store: documentStore(storage.db) } : {}),
      onStoreError: (err) => log.warn({ err }, 'a rendered document could not be stored; it will be rendered again when asked for'),
    });
    return { config, storage, db: storage.db, keys, urlKey, requestKey, renderer, log };
  } catch (err) {
    await storage.close();
    throw err;
  }
}

/**
 * Ensures the BOOTSTRAP_* credentials. In development with no key configured, creates one the very
 * first time (when the default account has no key at all) and returns it so it can be printed once;
 * a process that prints nothing (a worker) passes `firstRunKey: false` and leaves that to the API.
 */
export async function ensureBootstrapCredentials(ctx: AppContext, { firstRunKey = true }: { firstRunKey?: boolean } = {}): Promise<{ createdKey?: string }> {
  const { config, db } = ctx;
  const needDefault = config.bootstrapApiKey || config.bootstrapClientId || config.env === 'development';
  if (!needDefault) return {};
  const accountId = await ensureAccount(db, 'default');
  if (config.bootstrapApiKey) await ensureApiKey(db, accountId, config.bootstrapApiKey);
  if (config.bootstrapClientId && config.bootstrapClientSecret) await ensureClient(db, accountId, config.bootstrapClientId, config.bootstrapClientSecret);
  if (!config.bootstrapApiKey && config.env === 'development' && firstRunKey) {
    if (!(await hasApiKey(db, accountId))) return { createdKey: (await createApiKey(db, accountId, ALL_SCOPES, false, { name: 'made at the first start' })).key };
  }
  return {};
}

// What DATABASE_URL is to blame for when the database cannot be opened: a host with no address, no
// such database, a user or password refused; for SQLite a file it cannot open, that is no database,
// or is read-only.
const MISCONFIGURED = new Set(['ENOTFOUND', '3D000', '28000', '28P01']);
// TLS asked for (`sslmode=require`, `verify-full`) where the server has none, or a certificate nobody
// vouches for: the setting's to change. A certificate expired or not yet valid is the server's to mend: 69.
const TLS_MISCONFIGURED = new Set(['SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'ERR_TLS_CERT_ALTNAME_INVALID']);
const TLS_UNAVAILABLE = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
const NO_TLS = /server does not support SSL/;
const SQLITE_MISCONFIGURED = new Set([8, 14, 23, 26]); // READONLY, CANTOPEN, AUTH, NOTADB

/**
 * Why the database could not be opened or used, as one line naming DATABASE_URL (its password
 * hidden), with the exit code for it: 78 when the setting is to blame, 69 (EX_UNAVAILABLE, which a
 * supervisor may retry) when the database is out of reach or busy, as a request would get 503; null
 * when the error is something else. The service's start and the admin command line both answer so.
 */
export function databaseProblem(err: unknown, databaseUrl: string): { exitCode: 78 | 69; message: string } | null {
  const e = err as { code?: unknown; errcode?: unknown; syscall?: unknown; cause?: unknown };
  const code = String(e.code ?? '');
  const misconfigured =
    MISCONFIGURED.has(code) ||
    TLS_MISCONFIGURED.has(code) ||
    (err instanceof Error && NO_TLS.test(err.message)) ||
    (typeof e.errcode === 'number' && SQLITE_MISCONFIGURED.has(e.errcode & 0xff)) ||
    ((code === 'ENOENT' || code === 'EACCES') && e.syscall !== 'connect');
  const unreachable = !misconfigured && (isUnavailable(err) || isUnavailable(e.cause) || TLS_UNAVAILABLE.has(code));
  if (!misconfigured && !unreachable) return null;
  const reason = (err instanceof Error ? err.message.split('\n')[0] : String(err)) || code;
  const where = shownDatabaseUrl(databaseUrl);
  return misconfigured
    ? { exitCode: 78, message: `configuration error: DATABASE_URL ${where} cannot be opened: ${reason}` }
    : { exitCode: 69, message: `database unavailable: DATABASE_URL ${where} cannot be used now: ${reason}` };
}

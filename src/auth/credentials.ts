// Accounts, API keys and OAuth clients: creation, lookup and revocation.
import type { Db } from '../db/index.ts';
import { isoNow, uuidv7 } from '../db/ids.ts';
import { NotFound, InvalidInput } from '../errors.ts';
import { createCache, type Cache } from '../cache.ts';
import { ALL_SCOPES, parseScopes, scopeString, type Scope } from './scopes.ts';
import { constantTimeEqual, randomToken, sha256Hex } from './secrets.ts';

export interface Principal {
  accountId: string;
  scopes: ReadonlySet<string>;
  /** How the request authenticated, for logs: `api_key:<prefix>` or `client:<client_id>`. */
  subject: string;
}

export function resolveScopes(text: string | undefined): Scope[] {
  if (text === undefined) return [...ALL_SCOPES];
  const { scopes, unknown } = parseScopes(text);
  if (unknown.length) throw new InvalidInput(`unknown scope ${unknown.join(', ')}; known scopes: ${ALL_SCOPES.join(' ')}`);
  return scopes;
}

export async function createAccount(db: Db, name: string): Promise<{ id: string; name: string }> {
  const id = uuidv7();
  await db.insertInto('accounts').values({ id, name, created_at: isoNow() }).execute();
  return { id, name };
}

export async function ensureAccount(db: Db, name: string): Promise<string> {
  await db.insertInto('accounts').values({ id: uuidv7(), name, created_at: isoNow() }).onConflict((oc) => oc.column('name').doNothing()).execute();
  const row = await db.selectFrom('accounts').select('id').where('name', '=', name).executeTakeFirstOrThrow();
  return row.id;
}

export async function findAccount(db: Db, idOrName: string): Promise<{ id: string; name: string }> {
  const row = await db.selectFrom('accounts').select(['id', 'name']).where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)])).executeTakeFirst();
  if (!row) throw new NotFound('account', idOrName);
  return row;
}

/** Every account, oldest first. */
export async function listAccounts(db: Db): Promise<{ id: string; name: string; createdAt: string }[]> {
  const rows = await db.selectFrom('accounts').select(['id', 'name', 'created_at']).orderBy('created_at').execute();
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: r.created_at }));
}

/** Whether the account has any API key, revoked or not. */
export async function hasApiKey(db: Db, accountId: string): Promise<boolean> {
  return (await db.selectFrom('api_keys').select('id').where('account_id', '=', accountId).executeTakeFirst()) !== undefined;
}

export function apiKeyPrefix(live: boolean): string {
  return live ? 'sk_live_' : 'sk_test_';
}

const DISPLAY_PREFIX_LENGTH = 16;

/** The longest name of an API key. */
export const API_KEY_NAME_MAX = 100;

/** What is wrong with a key's name as given (already trimmed), if anything. */
export function apiKeyNameProblem(name: string): string | undefined {
  if ([...name].length > API_KEY_NAME_MAX) return `must be at most ${API_KEY_NAME_MAX} characters`;
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) return 'must not contain control characters (a line break, a tab)';
  return undefined;
}

/**
 * What is wrong with a new key's name (already trimmed) for this account, if anything: its form, or
 * the name of another of its unrevoked keys in any case, since two keys of one name could not be told
 * apart in the list or when one is revoked. (Two keys made at the same moment may still share one.)
 */
export async function keyNameProblem(db: Db, accountId: string, name: string): Promise<string | undefined> {
  const problem = apiKeyNameProblem(name);
  if (problem || !name) return problem;
  const rows = await db.selectFrom('api_keys').select(['prefix', 'name']).where('account_id', '=', accountId).where('revoked_at', 'is', null).execute();
  const wanted = keyNameAsTyped(name).toLowerCase();
  const taken = rows.find((r) => keyNameAsTyped(r.name).toLowerCase() === wanted);
  return taken ? `is already the name of key ${taken.prefix}…: give this one another name, or revoke that one first` : undefined;
}

/**
 * A key's name as typed: its runs of spaces made one, as a page shows them, and trimmed. A tab or a
 * line break inside is kept, for `apiKeyNameProblem` to refuse.
 */
export function keyNameAsTyped(given: string): string {
  return given.replace(/[^\S\t\n\v\f\r]+/g, ' ').trim();
}

/** A key's name as given (`--name`), as typed (`keyNameAsTyped`), or 400 naming `name`. */
export function apiKeyName(given: unknown): string {
  const name = typeof given === 'string' ? keyNameAsTyped(given) : '';
  const problem = apiKeyNameProblem(name);
  if (problem) throw new InvalidInput(`name ${problem}`, [{ field: 'name', message: problem }]);
  return name;
}

/**
 * Creates a key and returns it whole: this is the only time it is ever visible. `name` says what it
 * is for (trimmed; at most API_KEY_NAME_MAX characters, checked by the callers that take it from people).
 */
export async function createApiKey(db: Db, accountId: string, scopes: readonly Scope[], live: boolean, options: { name?: string; exactKey?: string } = {}): Promise<{ id: string; key: string; prefix: string }> {
  const key = options.exactKey ?? apiKeyPrefix(live) + randomToken(32);
  const id = uuidv7();
  const prefix = key.slice(0, DISPLAY_PREFIX_LENGTH);
  const name = (options.name ?? '').trim();
  await db.insertInto('api_keys').values({ id, account_id: accountId, prefix, hash: sha256Hex(key), scopes: scopeString(scopes), name, created_at: isoNow(), revoked_at: null }).execute();
  return { id, key, prefix };
}

/** Ensures that exactly this key exists (BOOTSTRAP_API_KEY); a revoked one stays revoked. */
export async function ensureApiKey(db: Db, accountId: string, key: string): Promise<void> {
  const hash = sha256Hex(key);
  const existing = await db.selectFrom('api_keys').select('id').where('hash', '=', hash).executeTakeFirst();
  if (existing) return;
  try {
    await createApiKey(db, accountId, ALL_SCOPES, key.startsWith('sk_live_'), { exactKey: key, name: 'BOOTSTRAP_API_KEY' });
  } catch (err) {
    // Another process inserted it in the meantime.
    if (!(await db.selectFrom('api_keys').select('id').where('hash', '=', hash).executeTakeFirst())) throw err;
  }
}

/**
 * Keys that passed the database check recently, per database handle, by the key as the client sent
 * it: a client sends the same key on every request, and the lookup is a third of such a request's
 * CPU (hashing the key to find it would be a tenth). An entry lives at most API_KEY_CACHE_MS and is
 * then dropped, by a timer while the process is idle, so the cache holds no key longer than
 * API_KEY_CACHE_MS past its last check (the string itself goes with the next garbage collection,
 * like the request headers it came in). `revokeApiKey` through the same handle empties the cache (and
 * a lookup that raced with it is not stored), so a revocation is immediate in this process and holds
 * in every other process within API_KEY_CACHE_MS (docs/decisions.md). Unknown or revoked keys are
 * never remembered, so a new key works at once everywhere and unknown keys cannot fill the cache.
 * OAuth clients found active are remembered the same way, for the access tokens they hold.
 */
export const API_KEY_CACHE_MS = 1000;
const API_KEY_CACHE_MAX = 10_000;
interface RecentChecks<T> {
  /** Expired entries are dropped by a timer, so an idle process keeps nothing past its second. */
  entries: Cache<string, T>;
  /** Bumped by every revocation; a lookup started before one must not fill the cache. */
  generation: number;
}
const keyChecks = new WeakMap<Db, RecentChecks<Principal>>();
const clientChecks = new WeakMap<Db, RecentChecks<true>>();

function recentChecks<T extends {}>(checks: WeakMap<Db, RecentChecks<T>>, db: Db): RecentChecks<T> {
  const known = checks.get(db);
  if (known) return known;
  const recent: RecentChecks<T> = { entries: createCache<string, T>({ max: API_KEY_CACHE_MAX, ttlMs: API_KEY_CACHE_MS, purgeExpired: true }), generation: 0 };
  checks.set(db, recent);
  return recent;
}

/** Forgets every check of this kind remembered for this database handle (after a revocation). */
function forget<T extends {}>(checks: WeakMap<Db, RecentChecks<T>>, db: Db): void {
  const recent = recentChecks(checks, db);
  recent.generation++;
  recent.entries.clear();
}

/** How many key checks `db` remembers now (tests and diagnostics). */
export function rememberedApiKeys(db: Db): number {
  return keyChecks.get(db)?.entries.size ?? 0;
}

/** The principal of a key checked against the database within the last API_KEY_CACHE_MS, without I/O. */
export function cachedPrincipalForApiKey(db: Db, key: string): Principal | undefined {
  return keyChecks.get(db)?.entries.get(key);
}

export async function principalForApiKey(db: Db, key: string): Promise<Principal | null> {
  const hash = sha256Hex(key);
  const recent = recentChecks(keyChecks, db);
  const generation = recent.generation;
  const row = await db.selectFrom('api_keys').select(['account_id', 'hash', 'scopes', 'prefix', 'revoked_at']).where('hash', '=', hash).executeTakeFirst();
  if (!row || row.revoked_at !== null || !constantTimeEqual(row.hash, hash)) return null;
  const principal: Principal = { accountId: row.account_id, scopes: new Set(row.scopes.split(' ').filter(Boolean)), subject: `api_key:${row.prefix}` };
  if (recent.generation === generation) recent.entries.set(key, principal);
  return principal;
}

/** Whether the OAuth client was found active within the last API_KEY_CACHE_MS, without I/O. */
export function clientRecentlyActive(db: Db, clientId: string): boolean {
  return clientChecks.get(db)?.entries.get(clientId) === true;
}

/** Whether the OAuth client exists and is not revoked: every access token it holds depends on it. */
export async function isClientActive(db: Db, clientId: string): Promise<boolean> {
  const recent = recentChecks(clientChecks, db);
  const generation = recent.generation;
  const row = await db.selectFrom('oauth_clients').select('revoked_at').where('client_id', '=', clientId).executeTakeFirst();
  if (!row || row.revoked_at !== null) return false;
  if (recent.generation === generation) recent.entries.set(clientId, true);
  return true;
}

export async function listApiKeys(db: Db, accountId?: string) {
  let q = db.selectFrom('api_keys').innerJoin('accounts', 'accounts.id', 'api_keys.account_id').select(['api_keys.id', 'api_keys.prefix', 'api_keys.name', 'api_keys.scopes', 'api_keys.created_at', 'api_keys.revoked_at', 'accounts.name as account']);
  if (accountId) q = q.where('api_keys.account_id', '=', accountId);
  return q.orderBy('api_keys.created_at').execute();
}

/** Revokes every key whose display prefix starts with `prefix` (at least 12 characters, to be unambiguous). */
export async function revokeApiKey(db: Db, prefix: string): Promise<{ prefix: string; name: string }> {
  if (prefix.length < 12) throw new InvalidInput('give at least the first 12 characters of the key, as `key list` shows them');
  const rows = await db.selectFrom('api_keys').select(['id', 'prefix', 'name']).where('revoked_at', 'is', null).execute();
  const found = rows.filter((r) => r.prefix.startsWith(prefix) || prefix.startsWith(r.prefix));
  if (found.length === 0) throw new NotFound('api key', prefix);
  if (found.length > 1) throw new InvalidInput(`${found.length} keys start with ${prefix}; give more characters`);
  await revokeKeys(db, [found[0]!.id]);
  return { prefix: found[0]!.prefix, name: found[0]!.name };
}

/**
 * Revokes one key of the account (the dashboard): another account's key, or an unknown id, is
 * NotFound. Revoking a revoked key changes nothing. Answers the key's display prefix.
 */
export async function revokeAccountApiKey(db: Db, accountId: string, id: string): Promise<{ prefix: string; name: string }> {
  const row = await db.selectFrom('api_keys').select(['id', 'prefix', 'name', 'revoked_at']).where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  if (!row) throw new NotFound('api key', id);
  if (row.revoked_at === null) await revokeKeys(db, [row.id]);
  return { prefix: row.prefix, name: row.name };
}

/** Marks keys revoked, with no remembered check of them outliving the update in this process. */
async function revokeKeys(db: Db, ids: string[]): Promise<void> {
  forget(keyChecks, db);
  try {
    await db.updateTable('api_keys').set({ revoked_at: isoNow() }).where('id', 'in', ids).execute();
  } finally {
    // Lookups that ran during the update may have read the key as still valid: they must not be kept.
    forget(keyChecks, db);
  }
}

export interface OAuthClient {
  clientId: string;
  accountId: string;
  name: string;
  scopes: Scope[];
  redirectUris: string[];
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * A redirect URI a client may register: an absolute https URL without a fragment, or plain http to a
 * loopback address (a native app's local listener, RFC 8252 §7.3); plain http elsewhere only when
 * `allowPlainHttp` (development). `javascript:`, `data:` and every other scheme are refused.
 */
export function checkRedirectUri(uri: string, allowPlainHttp: boolean): void {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    throw new InvalidInput(`redirect URI ${uri} is not an absolute URL`, [{ field: 'redirect_uri', message: 'is not an absolute URL' }]);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') {
    throw new InvalidInput(`redirect URI ${uri} must be https (or http to a loopback address), not ${u.protocol}`, [{ field: 'redirect_uri', message: 'must be https' }]);
  }
  if (u.protocol === 'http:' && !LOOPBACK_HOSTS.has(u.hostname) && !allowPlainHttp) {
    throw new InvalidInput(`redirect URI ${uri} must be https: plain http is for loopback addresses (and any host in development)`, [{ field: 'redirect_uri', message: 'must be https' }]);
  }
  if (u.hash) throw new InvalidInput(`redirect URI ${uri} must not have a fragment`, [{ field: 'redirect_uri', message: 'must not have a fragment' }]);
  if (u.username || u.password) throw new InvalidInput(`redirect URI ${uri} must not carry credentials`, [{ field: 'redirect_uri', message: 'must not carry credentials' }]);
}

export async function createClient(
  db: Db,
  accountId: string,
  options: { scopes: readonly Scope[]; redirectUris?: string[]; name?: string; clientId?: string; clientSecret?: string; allowPlainHttp?: boolean },
): Promise<{ clientId: string; clientSecret: string }> {
  const clientId = options.clientId ?? `cl_${randomToken(20)}`;
  const clientSecret = options.clientSecret ?? `cs_${randomToken(40)}`;
  for (const uri of options.redirectUris ?? []) checkRedirectUri(uri, options.allowPlainHttp ?? false);
  await db
    .insertInto('oauth_clients')
    .values({
      id: uuidv7(),
      client_id: clientId,
      account_id: accountId,
      name: options.name ?? clientId,
      // Client secrets are 238-bit random values we generate, so SHA-256 suffices (docs/decisions.md).
      secret_hash: sha256Hex(clientSecret),
      scopes: scopeString(options.scopes),
      redirect_uris: JSON.stringify(options.redirectUris ?? []),
      created_at: isoNow(),
      revoked_at: null,
    })
    .execute();
  return { clientId, clientSecret };
}

/** The OAuth clients (of one account), oldest first; never their secrets. */
export async function listClients(db: Db, accountId?: string): Promise<{ clientId: string; name: string; scopes: string; redirectUris: string[]; createdAt: string; revokedAt: string | null }[]> {
  let q = db.selectFrom('oauth_clients').select(['client_id', 'name', 'scopes', 'redirect_uris', 'created_at', 'revoked_at']);
  if (accountId) q = q.where('account_id', '=', accountId);
  const rows = await q.orderBy('created_at').execute();
  return rows.map((r) => ({ clientId: r.client_id, name: r.name, scopes: r.scopes, redirectUris: JSON.parse(r.redirect_uris) as string[], createdAt: r.created_at, revokedAt: r.revoked_at }));
}

/**
 * Revokes a client (idempotent): the token endpoint refuses it from then on, and the access tokens it
 * holds are refused on their next request in this process, within API_KEY_CACHE_MS in every other.
 */
export async function revokeClient(db: Db, clientId: string): Promise<void> {
  const row = await db.selectFrom('oauth_clients').select('id').where('client_id', '=', clientId).executeTakeFirst();
  if (!row) throw new NotFound('client', clientId);
  forget(clientChecks, db);
  try {
    await db.updateTable('oauth_clients').set({ revoked_at: isoNow() }).where('id', '=', row.id).where('revoked_at', 'is', null).execute();
  } finally {
    // As for keys: a check that overlapped the update must not be kept.
    forget(clientChecks, db);
  }
}

/** Gives an active client a new secret, returned once; the old one stops working at once. */
export async function rotateClientSecret(db: Db, clientId: string): Promise<string> {
  const secret = `cs_${randomToken(40)}`;
  const r = await db.updateTable('oauth_clients').set({ secret_hash: sha256Hex(secret) }).where('client_id', '=', clientId).where('revoked_at', 'is', null).executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) throw new NotFound('client', clientId);
  return secret;
}

export async function ensureClient(db: Db, accountId: string, clientId: string, clientSecret: string): Promise<void> {
  const existing = await db.selectFrom('oauth_clients').select('id').where('client_id', '=', clientId).executeTakeFirst();
  if (existing) {
    await db.updateTable('oauth_clients').set({ secret_hash: sha256Hex(clientSecret) }).where('client_id', '=', clientId).execute();
    return;
  }
  try {
    await createClient(db, accountId, { scopes: ALL_SCOPES, clientId, clientSecret, name: 'bootstrap client' });
  } catch (err) {
    if (!(await db.selectFrom('oauth_clients').select('id').where('client_id', '=', clientId).executeTakeFirst())) throw err;
  }
}

export async function findClient(db: Db, clientId: string): Promise<(OAuthClient & { secretHash: string }) | null> {
  const row = await db.selectFrom('oauth_clients').selectAll().where('client_id', '=', clientId).where('revoked_at', 'is', null).executeTakeFirst();
  if (!row) return null;
  return {
    clientId: row.client_id,
    accountId: row.account_id,
    name: row.name,
    scopes: row.scopes.split(' ').filter(Boolean) as Scope[],
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    secretHash: row.secret_hash,
  };
}

/** The client when the secret matches, else null; the comparison takes the same time either way. */
export async function authenticateClient(db: Db, clientId: string, clientSecret: string): Promise<OAuthClient | null> {
  const client = await findClient(db, clientId);
  const given = sha256Hex(clientSecret);
  const ok = constantTimeEqual(client?.secretHash ?? '0'.repeat(64), given);
  return client && ok ? client : null;
}

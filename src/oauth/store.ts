// Queries of the authorization-code flow: pending requests, codes, token families, refresh tokens
// and failed sign-ins. Single use is enforced by conditional updates, so racing processes agree.
import { PURGE_CHUNK, type Db, type Tx } from '../db/index.ts';
import { isoNow, uuidv7 } from '../db/ids.ts';
import type { OAuthAuthorizationRequestsTable } from '../db/schema.ts';

export type PendingRequest = OAuthAuthorizationRequestsTable;

export async function insertPendingRequest(db: Db, row: PendingRequest): Promise<void> {
  await db.insertInto('oauth_authorization_requests').values(row).execute();
}

/** Pending requests one client address opened since `since`. */
export async function countRequestsFrom(db: Db, clientAddress: string, since: string): Promise<number> {
  const row = await db
    .selectFrom('oauth_authorization_requests')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('client_address', '=', clientAddress)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findPendingRequest(db: Db, id: string): Promise<PendingRequest | null> {
  return (await db.selectFrom('oauth_authorization_requests').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
}

export async function markSignedIn(db: Db, id: string, userId: string, csrfToken: string): Promise<void> {
  await db.updateTable('oauth_authorization_requests').set({ user_id: userId, csrf_token: csrfToken }).where('id', '=', id).where('completed_at', 'is', null).execute();
}

/** Marks the request answered; false when another submission got there first. */
export async function completePendingRequest(db: Db | Tx, id: string): Promise<boolean> {
  const r = await db.updateTable('oauth_authorization_requests').set({ completed_at: isoNow() }).where('id', '=', id).where('completed_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export interface NewCode {
  codeHash: string;
  clientId: string;
  accountId: string;
  userId: string;
  scope: string;
  redirectUri: string;
  redirectUriExplicit: boolean;
  codeChallenge: string;
  ttlMs: number;
}

/** The code and the token family it will start, written together. */
export async function insertCode(db: Db | Tx, code: NewCode): Promise<string> {
  const nowMs = Date.now();
  const now = isoNow(nowMs);
  const familyId = uuidv7(nowMs);
  await db
    .insertInto('oauth_token_families')
    .values({ id: familyId, client_id: code.clientId, account_id: code.accountId, user_id: code.userId, scope: code.scope, created_at: now, last_used_at: now, revoked_at: null, revoked_reason: null })
    .execute();
  await db
    .insertInto('oauth_authorization_codes')
    .values({
      code_hash: code.codeHash,
      family_id: familyId,
      client_id: code.clientId,
      redirect_uri: code.redirectUri,
      redirect_uri_explicit: code.redirectUriExplicit ? 1 : 0,
      code_challenge: code.codeChallenge,
      created_at: now,
      expires_at: isoNow(nowMs + code.ttlMs),
      used_at: null,
    })
    .execute();
  return familyId;
}

export async function findCode(db: Db, codeHash: string) {
  return db
    .selectFrom('oauth_authorization_codes as c')
    .innerJoin('oauth_token_families as f', 'f.id', 'c.family_id')
    .innerJoin('users as u', 'u.id', 'f.user_id')
    .select(['c.code_hash', 'c.family_id', 'c.client_id', 'c.redirect_uri', 'c.redirect_uri_explicit', 'c.code_challenge', 'c.expires_at', 'c.used_at', 'f.account_id', 'f.user_id', 'f.scope', 'f.revoked_at', 'u.disabled_at'])
    .where('c.code_hash', '=', codeHash)
    .executeTakeFirst();
}

/** Uses the code up; false when it had been used already. */
export async function claimCode(db: Db | Tx, codeHash: string): Promise<boolean> {
  const r = await db.updateTable('oauth_authorization_codes').set({ used_at: isoNow() }).where('code_hash', '=', codeHash).where('used_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function insertRefreshToken(db: Db | Tx, tokenHash: string, familyId: string, expiresAt: string): Promise<void> {
  await db.insertInto('oauth_refresh_tokens').values({ token_hash: tokenHash, family_id: familyId, created_at: isoNow(), expires_at: expiresAt, used_at: null }).execute();
  await db.updateTable('oauth_token_families').set({ last_used_at: isoNow() }).where('id', '=', familyId).execute();
}

export async function findRefreshToken(db: Db, tokenHash: string) {
  return db
    .selectFrom('oauth_refresh_tokens as r')
    .innerJoin('oauth_token_families as f', 'f.id', 'r.family_id')
    .innerJoin('users as u', 'u.id', 'f.user_id')
    .select(['r.token_hash', 'r.family_id', 'r.expires_at', 'r.used_at', 'f.client_id', 'f.account_id', 'f.user_id', 'f.scope', 'f.revoked_at', 'u.disabled_at'])
    .where('r.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Uses the refresh token up; false when it had been used already (rotation). */
export async function claimRefreshToken(db: Db | Tx, tokenHash: string): Promise<boolean> {
  const r = await db.updateTable('oauth_refresh_tokens').set({ used_at: isoNow() }).where('token_hash', '=', tokenHash).where('used_at', 'is', null).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function revokeFamily(db: Db | Tx, familyId: string, reason: string): Promise<void> {
  await db.updateTable('oauth_token_families').set({ revoked_at: isoNow(), revoked_reason: reason }).where('id', '=', familyId).where('revoked_at', 'is', null).execute();
}

/** Revokes every grant a user gave, or every grant of a client. Returns how many. */
export async function revokeFamiliesOf(db: Db, who: { userId?: string; clientId?: string }, reason: string): Promise<number> {
  if (!who.userId && !who.clientId) throw new Error('revokeFamiliesOf needs a user or a client');
  let q = db.updateTable('oauth_token_families').set({ revoked_at: isoNow(), revoked_reason: reason }).where('revoked_at', 'is', null);
  if (who.userId) q = q.where('user_id', '=', who.userId);
  if (who.clientId) q = q.where('client_id', '=', who.clientId);
  return Number((await q.executeTakeFirst()).numUpdatedRows);
}

/** Checked for access tokens that carry a `fam` claim (authorization-code tokens only). */
export async function isFamilyRevoked(db: Db, familyId: string): Promise<boolean> {
  const row = await db.selectFrom('oauth_token_families').select('revoked_at').where('id', '=', familyId).executeTakeFirst();
  return !row || row.revoked_at !== null;
}

/**
 * Records a sign-in attempt under each key before its password is checked; returns the rows' ids. An
 * attempt that succeeds (or is refused unchecked) is taken back with `forgetSignInAttempt`; one that
 * fails stays, as a failure. Counting after recording makes the limit hold under concurrency: the
 * n-th attempt to be recorded sees at least n.
 */
export async function recordSignInAttempt(db: Db, keys: string[]): Promise<string[]> {
  const now = isoNow();
  const rows = keys.map((key) => ({ id: uuidv7(), key, created_at: now }));
  await db.insertInto('signin_failures').values(rows).execute();
  return rows.map((r) => r.id);
}

export async function forgetSignInAttempt(db: Db, ids: string[]): Promise<void> {
  if (ids.length) await db.deleteFrom('signin_failures').where('id', 'in', ids).execute();
}

/** Failures of one key since `since`, and the oldest of them (which leaves the window first). */
export async function countSignInFailures(db: Db, key: string, since: string): Promise<{ count: number; oldest: string | null }> {
  const row = await db
    .selectFrom('signin_failures')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('key', '=', key)
    .where('created_at', '>', since)
    .executeTakeFirstOrThrow();
  return { count: Number(row.n), oldest: (row.oldest as string | null) ?? null };
}

export async function clearSignInFailures(db: Db, key: string): Promise<void> {
  await db.deleteFrom('signin_failures').where('key', '=', key).execute();
}

/**
 * Deletes what can no longer matter: old failures, expired pending requests, codes a day past their
 * expiry (kept that long so a replay still revokes), expired refresh tokens, and families with none
 * left that have been idle longer than any access token lives.
 */
export async function purgeAuthorizationState(db: Db, now = Date.now(), failureWindowMs: number, accessTokenTtlMs: number): Promise<number> {
  const at = (ms: number) => new Date(now - ms).toISOString();
  let n = 0;
  const count = (r: { numDeletedRows: bigint }) => (n += Number(r.numDeletedRows));
  // Each at most PURGE_CHUNK rows a statement; the job runs again while any deleted something.
  count(await db.deleteFrom('signin_failures').where('id', 'in', (eb) => eb.selectFrom('signin_failures').select('id').where('created_at', '<=', at(failureWindowMs)).limit(PURGE_CHUNK)).executeTakeFirst());
  count(await db.deleteFrom('oauth_authorization_requests').where('id', 'in', (eb) => eb.selectFrom('oauth_authorization_requests').select('id').where('expires_at', '<', at(0)).limit(PURGE_CHUNK)).executeTakeFirst());
  count(await db.deleteFrom('oauth_authorization_codes').where('code_hash', 'in', (eb) => eb.selectFrom('oauth_authorization_codes').select('code_hash').where('expires_at', '<', at(86_400_000)).limit(PURGE_CHUNK)).executeTakeFirst());
  count(await db.deleteFrom('oauth_refresh_tokens').where('token_hash', 'in', (eb) => eb.selectFrom('oauth_refresh_tokens').select('token_hash').where('expires_at', '<', at(0)).limit(PURGE_CHUNK)).executeTakeFirst());
  count(
    await db
      .deleteFrom('oauth_token_families')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('oauth_token_families as f')
          .select('f.id')
          .where('f.last_used_at', '<', at(Math.max(accessTokenTtlMs, 86_400_000)))
          .where((w) => w.not(w.exists(w.selectFrom('oauth_refresh_tokens').select('token_hash').whereRef('oauth_refresh_tokens.family_id', '=', 'f.id'))))
          .where((w) => w.not(w.exists(w.selectFrom('oauth_authorization_codes').select('code_hash').whereRef('oauth_authorization_codes.family_id', '=', 'f.id'))))
          .limit(PURGE_CHUNK),
      )
      .executeTakeFirst(),
  );
  return n;
}

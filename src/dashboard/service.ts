// Sign-in sessions of the dashboard (§15). A session is a random token in an HttpOnly cookie; the
// database keeps its SHA-256, the user and the account, and an absolute expiry. Sign-in goes through
// the account's users and the limits the consent page uses (oauth/service.ts); a disabled user's
// sessions end at their next request.
import type { AppContext } from '../context.ts';
import { isoNow } from '../db/ids.ts';
import { randomToken, sha256Hex } from '../auth/secrets.ts';
import { activeUser, checkSignIn, type SignInCheck } from '../oauth/service.ts';
import * as store from './store.ts';

/** A session lasts a working day and a half, then its user signs in again. */
export const SESSION_TTL_MS = 12 * 3600 * 1000;

export interface SessionUser {
  /** The stored id (the token's hash): what CSRF tokens are bound to. */
  sessionId: string;
  userId: string;
  email: string;
  accountId: string;
  accountName: string;
}

/** Checks the email and password (with the sign-in limits) and opens a session: its token goes in the cookie. */
export async function signIn(ctx: AppContext, email: string, password: string, clientAddress: string): Promise<Exclude<SignInCheck, { ok: true }> | { ok: true; token: string }> {
  const checked = await checkSignIn(ctx, email, password, clientAddress);
  if (!checked.ok) return checked;
  const token = randomToken(43);
  const now = Date.now();
  await store.insertSession(ctx.db, {
    id: sha256Hex(token),
    user_id: checked.user.id,
    account_id: checked.user.accountId,
    created_at: isoNow(now),
    expires_at: isoNow(now + SESSION_TTL_MS),
  });
  ctx.log.info({ user: checked.user.id }, 'dashboard sign-in');
  return { ok: true, token };
}

/** The signed-in user of a session cookie, or null (no such session, expired, or the user disabled). */
export async function sessionUser(ctx: AppContext, token: string | undefined): Promise<SessionUser | null> {
  if (!token || token.length > 100) return null;
  const id = sha256Hex(token);
  const row = await store.findSession(ctx.db, id, isoNow());
  if (!row) return null;
  const user = await activeUser(ctx, row.user_id);
  if (!user) {
    await store.deleteSession(ctx.db, id);
    return null;
  }
  return { sessionId: id, userId: user.id, email: user.email, accountId: user.accountId, accountName: user.accountName };
}

export async function signOut(ctx: AppContext, sessionId: string): Promise<void> {
  await store.deleteSession(ctx.db, sessionId);
}

/** Worker job: forgets expired sessions. */
export async function purgeSessions(ctx: AppContext): Promise<number> {
  return store.deleteExpiredSessions(ctx.db, isoNow());
}

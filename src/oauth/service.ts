// What other capabilities ask of the account's users: a sign-in checked against the limits of §15
// (the consent page and the dashboard share them), and whether a user may still be signed in.
import type { AppContext } from '../context.ts';
import { isoNow } from '../db/ids.ts';
import { authenticateUser, findUser, normalizeEmail, type User } from './users.ts';
import * as store from './store.ts';

export const SIGNIN_WINDOW_MS = 15 * 60 * 1000;
/** Failed sign-ins allowed per window: per email address, and per client address. */
export const MAX_FAILURES_PER_EMAIL = 5;
export const MAX_FAILURES_PER_ADDRESS = 20;
/**
 * Failures from one address after which every attempt from there is refused unchecked, whatever the
 * email: the bound on one password tried against many accounts. Ten times the per-address limit, so
 * an office or a proxy (set TRUST_PROXY) is not locked out by a few people's typos.
 */
export const MAX_FAILURES_PER_ADDRESS_ANY_EMAIL = 10 * MAX_FAILURES_PER_ADDRESS;

export const WRONG_CREDENTIALS = 'The email address or password is not correct.';

export type SignInCheck =
  | { ok: true; user: User }
  | { ok: false; status: 400 | 429; error: string; retryAfter?: number };

function retryAfterSeconds(oldest: string | null, now: number): number {
  const leaves = oldest ? Date.parse(oldest) + SIGNIN_WINDOW_MS : now + SIGNIN_WINDOW_MS;
  return Math.max(1, Math.ceil((leaves - now) / 1000));
}

/** The user with this email and password, unless too many attempts failed lately (429) or they do not match (400). */
export async function checkSignIn(ctx: AppContext, email: string, password: string, clientAddress: string): Promise<SignInCheck> {
  if (!email.trim() || !password) return { ok: false, status: 400, error: 'Enter your email address and your password.' };
  const now = Date.now();
  const since = isoNow(now - SIGNIN_WINDOW_MS);
  const emailKey = `email:${normalizeEmail(email)}`;
  const addressKey = `ip:${clientAddress}`;
  // Recorded first, counted after: concurrent attempts cannot all pass the count (see recordSignInAttempt).
  const attempt = await store.recordSignInAttempt(ctx.db, [emailKey, addressKey]);
  const byEmail = await store.countSignInFailures(ctx.db, emailKey, since);
  const byAddress = await store.countSignInFailures(ctx.db, addressKey, since);
  // This attempt is one of the counted, so MAX attempts pass and the next is refused.
  const emailLimited = byEmail.count > MAX_FAILURES_PER_EMAIL;
  // Behind a shared address (a proxy, an office), the address limit does not stop a user who has not
  // failed; past the much higher bound for any email, nothing from that address is checked any more.
  const addressLimited = (byAddress.count > MAX_FAILURES_PER_ADDRESS && byEmail.count > 1) || byAddress.count > MAX_FAILURES_PER_ADDRESS_ANY_EMAIL;
  const limited = [emailLimited ? byEmail : null, addressLimited ? byAddress : null].filter((x) => x !== null);
  if (limited.length) {
    await store.forgetSignInAttempt(ctx.db, attempt);
    const retryAfter = Math.max(...limited.map((l) => retryAfterSeconds(l.oldest, now)));
    const minutes = Math.ceil(retryAfter / 60);
    return { ok: false, status: 429, retryAfter, error: `Too many failed sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.` };
  }
  const user = await authenticateUser(ctx.db, email, password);
  if (!user) return { ok: false, status: 400, error: WRONG_CREDENTIALS };
  await store.forgetSignInAttempt(ctx.db, attempt);
  await store.clearSignInFailures(ctx.db, emailKey);
  return { ok: true, user };
}

/** The user with this id, with their account's name, while they are not disabled; else null. */
export async function activeUser(ctx: AppContext, id: string): Promise<(User & { accountName: string }) | null> {
  const user = await findUser(ctx.db, id);
  return user && !user.disabled ? user : null;
}

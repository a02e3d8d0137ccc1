// GET {auth_url}/oauth/authorize and the sign-in and consent steps behind it (RFC 6749 §4.1, RFC 7636
// S256 only). Each step returns what the browser should see: a page, or a redirect to the client.
import { createHash } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { isoNow, isUuid, uuidv7 } from '../db/ids.ts';
import { findClient, findAccount, type OAuthClient } from '../auth/credentials.ts';
import { parseScopes, scopeString, type Scope } from '../auth/scopes.ts';
import { constantTimeEqual, randomToken, sha256Hex } from '../auth/secrets.ts';
import { errorDescription } from './errors.ts';
import { findUser } from './users.ts';
import { checkSignIn, SIGNIN_WINDOW_MS, WRONG_CREDENTIALS } from './service.ts';
import * as store from './store.ts';

/** A pending request lives this long between the first page and the consent answer. */
export const REQUEST_TTL_MS = 10 * 60 * 1000;
/** Authorization pages one client address may open a minute: each is a row until it expires. */
export const MAX_REQUESTS_PER_ADDRESS_PER_MINUTE = 30;
export const CODE_TTL_MS = 60 * 1000;
const MAX_STATE_LENGTH = 1024;

export type Query = Record<string, string | string[] | undefined>;

export interface PageView {
  client: OAuthClient;
  pending: store.PendingRequest;
  scopes: Scope[];
}

export type Outcome =
  /** Something is wrong and the client cannot be trusted with a redirect: show an error page. */
  | { kind: 'error'; status: number; title: string; message: string; retryAfter?: number }
  | { kind: 'redirect'; location: string }
  | { kind: 'signin'; view: PageView; status: number; error?: string; email?: string; retryAfter?: number; setBrowserCookie?: string }
  | { kind: 'consent'; view: PageView; user: { email: string; accountName: string } };

function errorPage(status: number, title: string, message: string): Outcome {
  return { kind: 'error', status, title, message };
}

/**
 * The redirect URI with the response parameters added (its own query is kept, RFC 6749 §3.1.2);
 * `error_description` keeps to the characters §4.1.2.1 allows.
 */
export function redirectTo(ctx: AppContext, redirectUri: string, params: Record<string, string | null | undefined>): Outcome {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) url.searchParams.append(k, k === 'error_description' ? errorDescription(v) : v);
  // RFC 9207: tells the client which server answered, against mix-up attacks.
  url.searchParams.append('iss', ctx.config.authBaseUrl);
  return { kind: 'redirect', location: url.toString() };
}

/** One query parameter: empty means absent (RFC 6749 §3.1); repeated is an error. */
function param(query: Query, name: string): { value?: string; repeated: boolean } {
  const v = query[name];
  if (Array.isArray(v)) return { repeated: v.length > 1, value: v.length === 1 ? v[0] || undefined : undefined };
  return { value: v === '' ? undefined : v, repeated: false };
}

export function browserHash(cookieValue: string): string {
  return sha256Hex(`oauth-browser:${cookieValue}`);
}

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/** Validates every parameter before anything else happens, then starts a pending request. */
export async function startAuthorization(ctx: AppContext, query: Query, browserCookie: string | undefined, clientAddress: string): Promise<Outcome> {
  const clientId = param(query, 'client_id');
  if (clientId.repeated) return errorPage(400, 'Invalid request', 'The client_id parameter is repeated.');
  if (!clientId.value) return errorPage(400, 'Invalid request', 'The request names no client (client_id is missing).');
  const client = await findClient(ctx.db, clientId.value);
  if (!client) return errorPage(400, 'Unknown application', 'The application that sent you here is not registered with this service.');

  const redirect = param(query, 'redirect_uri');
  if (redirect.repeated) return errorPage(400, 'Invalid request', 'The redirect_uri parameter is repeated.');
  let redirectUri: string;
  if (redirect.value === undefined) {
    if (client.redirectUris.length !== 1) return errorPage(400, 'Invalid request', 'The request does not say where to return to (redirect_uri is missing).');
    redirectUri = client.redirectUris[0]!;
  } else if (client.redirectUris.includes(redirect.value)) {
    redirectUri = redirect.value;
  } else {
    return errorPage(400, 'Unregistered redirect address', `The address to return to is not registered for ${client.name}, so you are not being sent there.`);
  }

  // From here on the redirect URI is trusted: errors go back to the client (RFC 6749 §4.1.2.1).
  const state = param(query, 'state');
  const fail = (error: string, description: string) => redirectTo(ctx, redirectUri, { error, error_description: description, state: state.repeated ? undefined : state.value });
  for (const name of ['response_type', 'scope', 'state', 'code_challenge', 'code_challenge_method']) {
    if (param(query, name).repeated) return fail('invalid_request', `parameter ${name} is repeated`);
  }
  if (state.value !== undefined && state.value.length > MAX_STATE_LENGTH) return fail('invalid_request', `state is longer than ${MAX_STATE_LENGTH} characters`);
  const responseType = param(query, 'response_type').value;
  if (!responseType) return fail('invalid_request', 'response_type is required');
  if (responseType !== 'code') return fail('unsupported_response_type', 'only response_type=code is supported');
  const method = param(query, 'code_challenge_method').value;
  const challenge = param(query, 'code_challenge').value;
  if (!challenge) return fail('invalid_request', 'code_challenge is required (PKCE with S256)');
  if (method === undefined) return fail('invalid_request', 'code_challenge_method is required and must be S256');
  if (method !== 'S256') return fail('invalid_request', `code_challenge_method ${method} is not supported; use S256`);
  if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) return fail('invalid_request', 'code_challenge must be the base64url SHA-256 of the code_verifier (43 characters)');

  const scopeText = param(query, 'scope').value;
  let scopes: Scope[];
  if (scopeText === undefined) {
    scopes = [...client.scopes];
  } else {
    const parsed = parseScopes(scopeText);
    if (parsed.unknown.length) return fail('invalid_scope', `unknown scope ${parsed.unknown.join(' ')}`);
    const beyond = parsed.scopes.filter((s) => !client.scopes.includes(s));
    if (beyond.length) return fail('invalid_scope', `the client may not have ${beyond.join(' ')}`);
    scopes = parsed.scopes;
  }
  if (scopes.length === 0) return fail('invalid_scope', 'no scope requested');

  const now = Date.now();
  if ((await store.countRequestsFrom(ctx.db, clientAddress, isoNow(now - 60_000))) >= MAX_REQUESTS_PER_ADDRESS_PER_MINUTE) {
    return errorPage(429, 'Too many requests', 'Too many sign-in pages were opened from your address. Wait a minute, then go back to the application and start again.');
  }
  const cookie = browserCookie && /^[A-Za-z0-9]{32,64}$/.test(browserCookie) ? browserCookie : randomToken(43);
  const pending: store.PendingRequest = {
    id: uuidv7(now),
    client_id: client.clientId,
    redirect_uri: redirectUri,
    redirect_uri_explicit: redirect.value === undefined ? 0 : 1,
    scope: scopeString(scopes),
    state: state.value ?? null,
    code_challenge: challenge,
    browser_hash: browserHash(cookie),
    csrf_token: randomToken(43),
    user_id: null,
    created_at: isoNow(now),
    expires_at: isoNow(now + REQUEST_TTL_MS),
    completed_at: null,
    client_address: clientAddress,
  };
  await store.insertPendingRequest(ctx.db, pending);
  return { kind: 'signin', view: { client, pending, scopes }, status: 200, setBrowserCookie: cookie === browserCookie ? undefined : cookie };
}

const FORM_EXPIRED = 'This sign-in page has expired or was already used. Go back to the application and start again.';
const FORM_UNVERIFIED = 'This form could not be verified, so nothing was done. Go back to the application and start again (cookies must be enabled for this site).';

/** The pending request a POST belongs to, checked against the browser cookie and the CSRF token. */
async function pendingFor(ctx: AppContext, form: Record<string, string>, browserCookie: string | undefined): Promise<{ view: PageView } | { outcome: Outcome }> {
  const id = form.request;
  if (!id || !isUuid(id)) return { outcome: errorPage(400, 'Sign-in expired', FORM_EXPIRED) };
  const pending = await store.findPendingRequest(ctx.db, id);
  if (!pending) return { outcome: errorPage(400, 'Sign-in expired', FORM_EXPIRED) };
  // CSRF: the form must carry this request's token and come from the browser that started it.
  const sameBrowser = browserCookie !== undefined && constantTimeEqual(browserHash(browserCookie), pending.browser_hash);
  const token = form.csrf_token;
  if (!sameBrowser || !token || !constantTimeEqual(token, pending.csrf_token)) return { outcome: errorPage(403, 'Form not verified', FORM_UNVERIFIED) };
  if (pending.completed_at !== null || Date.parse(pending.expires_at) <= Date.now()) return { outcome: errorPage(400, 'Sign-in expired', FORM_EXPIRED) };
  const client = await findClient(ctx.db, pending.client_id);
  if (!client) return { outcome: errorPage(400, 'Unknown application', 'The application that sent you here is no longer registered with this service.') };
  return { view: { client, pending, scopes: pending.scope.split(' ').filter(Boolean) as Scope[] } };
}


export async function signIn(ctx: AppContext, form: Record<string, string>, browserCookie: string | undefined, clientAddress: string): Promise<Outcome> {
  const found = await pendingFor(ctx, form, browserCookie);
  if ('outcome' in found) return found.outcome;
  const { view } = found;
  const email = form.email ?? '';
  const checked = await checkSignIn(ctx, email, form.password ?? '', clientAddress);
  if (!checked.ok) {
    if (checked.status === 400 && checked.error === WRONG_CREDENTIALS) ctx.log.info({ client: view.client.clientId }, 'oauth sign-in failed');
    return { kind: 'signin', view, status: checked.status, email, error: checked.error, ...(checked.retryAfter ? { retryAfter: checked.retryAfter } : {}) };
  }
  const { user } = checked;
  const account = await findAccount(ctx.db, user.accountId);
  // A fresh CSRF token after sign-in, so a token seen before it cannot answer the consent form.
  const csrf = randomToken(43);
  await store.markSignedIn(ctx.db, view.pending.id, user.id, csrf);
  return { kind: 'consent', view: { ...view, pending: { ...view.pending, user_id: user.id, csrf_token: csrf } }, user: { email: user.email, accountName: account.name } };
}

export async function decide(ctx: AppContext, form: Record<string, string>, browserCookie: string | undefined): Promise<Outcome> {
  const found = await pendingFor(ctx, form, browserCookie);
  if ('outcome' in found) return found.outcome;
  const { pending } = found.view;
  if (!pending.user_id) return errorPage(400, 'Not signed in', 'Sign in before answering. Go back to the application and start again.');
  const decision = form.decision;
  if (decision !== 'approve' && decision !== 'deny') return errorPage(400, 'Invalid answer', 'Choose Allow or Deny.');
  const user = await findUser(ctx.db, pending.user_id);
  if (!user) return errorPage(400, 'Sign-in expired', FORM_EXPIRED);
  const state = pending.state;

  if (decision === 'deny') {
    if (!(await store.completePendingRequest(ctx.db, pending.id))) return errorPage(400, 'Sign-in expired', FORM_EXPIRED);
    return redirectTo(ctx, pending.redirect_uri, { error: 'access_denied', error_description: 'the user denied the request', state });
  }
  // Disabled since signing in: Deny still goes back to the client (above), Allow grants nothing (a code
  // made in the moment of disabling is refused at the token endpoint).
  if (user.disabled) return errorPage(403, 'User disabled', 'This user can no longer sign in or allow access. Ask the account\'s administrator.');
  // Prefixed, like every credential the service hands out, so one found where it should not be (a log, a request id) is known for what it is.
  const code = `ac_${randomToken(43)}`;
  const answered = await ctx.db.transaction().execute(async (tx) => {
    if (!(await store.completePendingRequest(tx, pending.id))) return false;
    await store.insertCode(tx, {
      codeHash: sha256Hex(code),
      clientId: pending.client_id,
      accountId: user.accountId,
      userId: user.id,
      scope: pending.scope,
      redirectUri: pending.redirect_uri,
      redirectUriExplicit: pending.redirect_uri_explicit === 1,
      codeChallenge: pending.code_challenge,
      ttlMs: CODE_TTL_MS,
    });
    return true;
  });
  if (!answered) return errorPage(400, 'Sign-in expired', FORM_EXPIRED);
  ctx.log.info({ client: pending.client_id, user: user.id }, 'oauth authorization granted');
  return redirectTo(ctx, pending.redirect_uri, { code, state });
}

/** Ends every grant a user gave or a client holds (their refresh tokens and code-flow access tokens stop working). */
export function revokeGrants(ctx: AppContext, who: { userId?: string; clientId?: string }, reason: string): Promise<number> {
  return store.revokeFamiliesOf(ctx.db, who, reason);
}

/** Whether the grant (token family) an access token came from has been revoked since it was issued. */
export function isGrantRevoked(ctx: AppContext, familyId: string): Promise<boolean> {
  return store.isFamilyRevoked(ctx.db, familyId);
}

/** Worker job: forgets expired requests, codes, refresh tokens, idle grants and old failed sign-ins. */
export async function purgeAuthorizationState(ctx: AppContext): Promise<number> {
  return store.purgeAuthorizationState(ctx.db, Date.now(), SIGNIN_WINDOW_MS, ctx.config.accessTokenTtlSeconds * 1000);
}

// The grants of the token endpoint, in one list: `client_credentials` (RFC 6749 §4.4),
// `authorization_code` (RFC 6749 §4.1.3 with PKCE, RFC 7636 §4.6) and `refresh_token` (RFC 6749 §6,
// rotated on every use).
import type { AppContext } from '../context.ts';
import { isoNow } from '../db/ids.ts';
import { OAuthError } from '../errors.ts';
import type { OAuthClient } from '../auth/credentials.ts';
import { parseScopes, type Scope } from '../auth/scopes.ts';
import { constantTimeEqual, randomToken, sha256Hex } from '../auth/secrets.ts';
import { issueAccessToken, tokenSettings } from '../auth/tokens.ts';
import { s256 } from './authorize.ts';
import * as store from './store.ts';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
  refresh_token?: string;
}

export type Form = Record<string, string>;
export type GrantHandler = (ctx: AppContext, client: OAuthClient, form: Form) => Promise<TokenResponse>;

/**
 * The scopes granted for a request: all the client may have when omitted (`scope=` is omitted too,
 * RFC 6749 §3.2), else exactly those asked.
 */
export function grantedScopes(allowed: readonly Scope[], requested: string | undefined): Scope[] {
  if (requested === undefined) return [...allowed];
  const { scopes, unknown } = parseScopes(requested);
  if (unknown.length) throw new OAuthError('invalid_scope', `unknown scope ${unknown.join(' ')}`);
  if (!scopes.length) throw new OAuthError('invalid_scope', 'scope names no scope');
  const beyond = scopes.filter((s) => !allowed.includes(s));
  if (beyond.length) throw new OAuthError('invalid_scope', `the client may not have ${beyond.join(' ')}`);
  return scopes;
}

export async function tokenFor(ctx: AppContext, client: OAuthClient, subject: string, scopes: readonly Scope[]): Promise<TokenResponse> {
  const t = await issueAccessToken(ctx.keys, tokenSettings(ctx), { accountId: client.accountId, subject, clientId: client.clientId, scopes });
  return { access_token: t.accessToken, token_type: 'Bearer', expires_in: t.expiresIn, scope: t.scope };
}

/** Refresh tokens expire this long after they are issued; each use issues a new one. */
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 3600 * 1000;
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/**
 * A new refresh token: prefixed, like every credential the service hands out, so one found where it
 * should not be (a log line, a request id) is recognised and redacted. Tokens issued before the
 * prefix are still looked up by their hash until they are used or expire.
 */
function newRefreshToken(): string {
  return `rt_${randomToken(64)}`;
}

interface Grant {
  familyId: string;
  clientId: string;
  accountId: string;
  userId: string;
}

function required(form: Form, name: string): string {
  const v = form[name];
  if (v === undefined || v === '') throw new OAuthError('invalid_request', `${name} is required`);
  return v;
}

async function issueTokens(ctx: AppContext, grant: Grant, scopes: readonly Scope[], refreshToken: string): Promise<TokenResponse> {
  const t = await issueAccessToken(ctx.keys, tokenSettings(ctx), { accountId: grant.accountId, subject: grant.userId, clientId: grant.clientId, scopes, family: grant.familyId });
  return { access_token: t.accessToken, token_type: 'Bearer', expires_in: t.expiresIn, scope: t.scope, refresh_token: refreshToken };
}

async function authorizationCodeGrant(ctx: AppContext, client: OAuthClient, form: Form): Promise<TokenResponse> {
  const code = required(form, 'code');
  const verifier = required(form, 'code_verifier');
  const codeHash = sha256Hex(code);
  const row = await store.findCode(ctx.db, codeHash);
  // A code issued to another client is answered exactly like an unknown one.
  if (!row || row.client_id !== client.clientId) throw new OAuthError('invalid_grant', 'the authorization code is invalid');
  // PKCE comes before the reuse check, so only the holder of the verifier can trigger a revocation.
  if (!VERIFIER.test(verifier) || !constantTimeEqual(s256(verifier), row.code_challenge)) {
    throw new OAuthError('invalid_grant', 'PKCE verification failed: code_verifier does not match the code_challenge');
  }
  // RFC 6749 §4.1.3: required when the authorization request had one; a missing parameter is invalid_request.
  if (row.redirect_uri_explicit === 1 && (form.redirect_uri === undefined || form.redirect_uri === '')) {
    throw new OAuthError('invalid_request', 'redirect_uri is required: the authorization request gave one');
  }
  if (form.redirect_uri !== row.redirect_uri && (row.redirect_uri_explicit === 1 || form.redirect_uri !== undefined)) {
    throw new OAuthError('invalid_grant', 'redirect_uri does not match the one of the authorization request');
  }
  if (row.used_at !== null) {
    await store.revokeFamily(ctx.db, row.family_id, 'authorization code reused');
    throw new OAuthError('invalid_grant', 'the authorization code was already used; the tokens issued for it are revoked');
  }
  if (Date.parse(row.expires_at) <= Date.now()) throw new OAuthError('invalid_grant', 'the authorization code has expired');
  // Its grant ended before the exchange: the user was disabled (also after consenting) or the grant revoked.
  if (row.revoked_at !== null || row.disabled_at !== null) throw new OAuthError('invalid_grant', 'the grant of this authorization code has been revoked');
  // The client's allowed scopes may have shrunk since consent: grant only what both allow.
  const scopes = (row.scope.split(' ').filter(Boolean) as Scope[]).filter((s) => client.scopes.includes(s));
  if (!scopes.length) throw new OAuthError('invalid_grant', 'the client may no longer have any scope of this grant');

  const refreshToken = newRefreshToken();
  const claimed = await ctx.db.transaction().execute(async (tx) => {
    if (!(await store.claimCode(tx, codeHash))) return false;
    await store.insertRefreshToken(tx, sha256Hex(refreshToken), row.family_id, isoNow(Date.now() + REFRESH_TOKEN_TTL_MS));
    return true;
  });
  if (!claimed) {
    await store.revokeFamily(ctx.db, row.family_id, 'authorization code reused');
    throw new OAuthError('invalid_grant', 'the authorization code was already used; the tokens issued for it are revoked');
  }
  return issueTokens(ctx, { familyId: row.family_id, clientId: client.clientId, accountId: row.account_id, userId: row.user_id }, scopes, refreshToken);
}

async function refreshTokenGrant(ctx: AppContext, client: OAuthClient, form: Form): Promise<TokenResponse> {
  const token = required(form, 'refresh_token');
  const tokenHash = sha256Hex(token);
  const row = await store.findRefreshToken(ctx.db, tokenHash);
  if (!row || row.client_id !== client.clientId) throw new OAuthError('invalid_grant', 'the refresh token is invalid');
  if (row.revoked_at !== null || row.disabled_at !== null) throw new OAuthError('invalid_grant', 'the refresh token has been revoked');
  if (row.used_at !== null) {
    // A rotated token came back: either the client or a thief holds a copy, so the whole grant ends.
    await store.revokeFamily(ctx.db, row.family_id, 'refresh token reused');
    throw new OAuthError('invalid_grant', 'the refresh token was already used; every token of this grant is revoked');
  }
  if (Date.parse(row.expires_at) <= Date.now()) throw new OAuthError('invalid_grant', 'the refresh token has expired');

  const granted = (row.scope.split(' ').filter(Boolean) as Scope[]).filter((s) => client.scopes.includes(s));
  let scopes = granted;
  if (form.scope !== undefined) {
    // RFC 6749 §6: a narrower scope is allowed, never a wider one; the refresh token keeps the full grant.
    const { scopes: asked, unknown } = parseScopes(form.scope);
    if (unknown.length) throw new OAuthError('invalid_scope', `unknown scope ${unknown.join(' ')}`);
    const beyond = asked.filter((s) => !granted.includes(s));
    if (beyond.length) throw new OAuthError('invalid_scope', `the grant does not include ${beyond.join(' ')}`);
    if (!asked.length) throw new OAuthError('invalid_scope', 'scope names no scope');
    scopes = asked;
  }
  if (!scopes.length) throw new OAuthError('invalid_grant', 'the client may no longer have any scope of this grant');

  const next = newRefreshToken();
  const claimed = await ctx.db.transaction().execute(async (tx) => {
    if (!(await store.claimRefreshToken(tx, tokenHash))) return false;
    await store.insertRefreshToken(tx, sha256Hex(next), row.family_id, isoNow(Date.now() + REFRESH_TOKEN_TTL_MS));
    return true;
  });
  if (!claimed) {
    await store.revokeFamily(ctx.db, row.family_id, 'refresh token reused');
    throw new OAuthError('invalid_grant', 'the refresh token was already used; every token of this grant is revoked');
  }
  return issueTokens(ctx, { familyId: row.family_id, clientId: client.clientId, accountId: row.account_id, userId: row.user_id }, scopes, next);
}

/** Every grant the token endpoint knows, by `grant_type`; the server metadata lists these keys. */
export const GRANTS: Readonly<Record<string, GrantHandler>> = {
  client_credentials: async (ctx, client, form) => tokenFor(ctx, client, client.clientId, grantedScopes(client.scopes, form.scope)),
  authorization_code: authorizationCodeGrant,
  refresh_token: refreshTokenGrant,
};

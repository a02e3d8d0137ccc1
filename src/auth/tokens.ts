// Access tokens: ES256 JWTs with the claims listed in docs/authentication.md, verifiable offline through the JWKS.
import { SignJWT, decodeProtectedHeader, jwtVerify, errors as joseErrors } from 'jose';
import type { AppContext } from '../context.ts';
import { hasLowS, withLowS } from './ecdsa.ts';
import type { KeyRing } from './keyring.ts';
import { SIGNING_ALG } from './keyring.ts';
import { uuidv7 } from '../db/ids.ts';
import type { Principal } from './credentials.ts';

export interface TokenSettings {
  issuer: string;
  audience: string;
  ttlSeconds: number;
}

export interface IssuedToken {
  accessToken: string;
  expiresIn: number;
  scope: string;
}

export async function issueAccessToken(
  keys: KeyRing,
  settings: TokenSettings,
  claims: { accountId: string; subject: string; clientId: string; scopes: readonly string[]; family?: string },
): Promise<IssuedToken> {
  const { kid, privateKey } = await keys.signingKey('access_token');
  const scope = claims.scopes.join(' ');
  // `fam`: the authorization-code grant the token came from, so revoking the grant revokes the token.
  const extra = claims.family ? { fam: claims.family } : {};
  const accessToken = await new SignJWT({ scope, account_id: claims.accountId, client_id: claims.clientId, ...extra })
    .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: 'at+jwt' })
    .setIssuer(settings.issuer)
    .setAudience(settings.audience)
    .setSubject(claims.subject)
    .setIssuedAt()
    .setExpirationTime(`${settings.ttlSeconds}s`)
    .setJti(uuidv7())
    .sign(privateKey)
    .then(withLowS);
  return { accessToken, expiresIn: settings.ttlSeconds, scope };
}

/** A verified token names its client, whose revocation ends it, and for the code flow its grant (`family`). */
export type TokenCheck = { ok: true; principal: Principal; clientId: string; family?: string } | { ok: false; reason: string };

export async function verifyAccessToken(keys: KeyRing, settings: TokenSettings, token: string): Promise<TokenCheck> {
  let kid: string | undefined;
  try {
    const header = decodeProtectedHeader(token);
    // Only our algorithm: `none`, HS256 keyed with the public key and friends never get further.
    if (header.alg !== SIGNING_ALG) return { ok: false, reason: `token algorithm ${String(header.alg)} is not accepted` };
    kid = header.kid;
  } catch {
    return { ok: false, reason: 'the bearer token is not a JWT' };
  }
  if (!kid) return { ok: false, reason: 'the token has no key id' };
  // One spelling per token: no high-S twin, and no base64url whose unused low bits were changed.
  const signature = token.slice(token.lastIndexOf('.') + 1);
  if (Buffer.from(signature, 'base64url').toString('base64url') !== signature || !hasLowS(token)) {
    return { ok: false, reason: 'the token signature is not in its canonical form' };
  }
  // A key retired longer ago than a token lives signed nothing that is still valid.
  const key = await keys.publicKey(kid, 'access_token', settings.ttlSeconds * 1000);
  if (!key) return { ok: false, reason: 'the token was not signed by this service' };
  try {
    const { payload } = await jwtVerify(token, key, {
      algorithms: [SIGNING_ALG],
      issuer: settings.issuer,
      audience: settings.audience,
      typ: 'at+jwt',
      requiredClaims: ['exp', 'iat', 'sub', 'jti'],
    });
    // No token of ours lives longer than ACCESS_TOKEN_TTL: a longer one was not issued here.
    if (typeof payload.exp === 'number' && typeof payload.iat === 'number' && payload.exp - payload.iat > settings.ttlSeconds) {
      return { ok: false, reason: 'the token lives longer than this service issues tokens for' };
    }
    const accountId = payload.account_id;
    if (typeof accountId !== 'string') return { ok: false, reason: 'the token has no account' };
    const clientId = payload.client_id;
    if (typeof clientId !== 'string') return { ok: false, reason: 'the token has no client' };
    const scope = typeof payload.scope === 'string' ? payload.scope : '';
    const principal = { accountId, scopes: new Set(scope.split(' ').filter(Boolean)), subject: `client:${clientId}` };
    return typeof payload.fam === 'string' ? { ok: true, principal, clientId, family: payload.fam } : { ok: true, principal, clientId };
  } catch (err) {
    if (err instanceof joseErrors.JWTExpired) return { ok: false, reason: 'the token has expired' };
    if (err instanceof joseErrors.JWSSignatureVerificationFailed) return { ok: false, reason: 'the token signature is invalid' };
    if (err instanceof joseErrors.JWTClaimValidationFailed) return { ok: false, reason: `the token ${err.claim} claim is invalid` };
    return { ok: false, reason: 'the token is invalid' };
  }
}

/** The issuer, audience and lifetime of this service's access tokens. */
export function tokenSettings(ctx: AppContext): TokenSettings {
  return { issuer: ctx.config.authBaseUrl, audience: ctx.config.baseUrl, ttlSeconds: ctx.config.accessTokenTtlSeconds };
}

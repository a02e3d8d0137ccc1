// POST {auth_url}/oauth/token (RFC 6749 §3.2): client authentication, then the grant named by grant_type.
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { OAuthError } from '../errors.ts';
import { authenticateClient } from '../auth/credentials.ts';
import { GRANTS, type Form, type TokenResponse } from './grants.ts';

/** The largest form the OAuth routes read. */
export const FORM_BODY_LIMIT = 64 * 1024;

/**
 * Parses `application/x-www-form-urlencoded` for a route that takes the parameters `known` (all when
 * not given). RFC 6749 §3.2: a parameter without a value counts as omitted and an unknown one is
 * ignored; §3.1: a known one given twice is invalid.
 */
export function parseForm(body: string, known?: readonly string[]): Form {
  const form: Form = {};
  for (const [k, v] of new URLSearchParams(body)) {
    if (v === '' || (known && !known.includes(k))) continue;
    if (Object.hasOwn(form, k)) throw new OAuthError('invalid_request', `parameter ${k} is repeated`);
    form[k] = v;
  }
  return form;
}

function basicCredentials(header: string): { id: string; secret: string } {
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new OAuthError('invalid_client', 'malformed HTTP Basic credentials', { basicChallenge: true });
  try {
    // RFC 6749 §2.3.1: both parts are form-urlencoded before being joined.
    const plus = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: plus(decoded.slice(0, colon)), secret: plus(decoded.slice(colon + 1)) };
  } catch {
    throw new OAuthError('invalid_client', 'malformed HTTP Basic credentials', { basicChallenge: true });
  }
}

export async function handleTokenRequest(ctx: AppContext, request: FastifyRequest): Promise<TokenResponse> {
  const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new OAuthError('invalid_request', 'send the token request as application/x-www-form-urlencoded');
  const form = request.body as Form;
  const authorization = request.headers.authorization || undefined;
  const basic = authorization !== undefined && /^basic(?:\s|$)/i.test(authorization);
  // RFC 6749 §2.3: one authentication method per request (client_id alone may accompany Basic).
  if (basic && form.client_secret !== undefined) {
    throw new OAuthError('invalid_request', 'use one client authentication method, not both');
  }
  if (!form.grant_type) throw new OAuthError('invalid_request', 'grant_type is required');
  // §5.2: a client that tried the Authorization header hears, in the challenge, the one scheme taken here.
  if (authorization !== undefined && !basic) throw new OAuthError('invalid_client', 'the Authorization header must use HTTP Basic (client_secret_basic)', { basicChallenge: true });
  const creds = basic ? basicCredentials(authorization!) : { id: form.client_id, secret: form.client_secret };
  // §5.2: "no client authentication included" is invalid_client.
  if (!creds.id || creds.secret === undefined) throw new OAuthError('invalid_client', 'client authentication failed: send client_id and client_secret, or HTTP Basic', { basicChallenge: basic });
  const client = await authenticateClient(ctx.db, creds.id, creds.secret);
  if (!client) throw new OAuthError('invalid_client', 'client authentication failed', { basicChallenge: basic });
  if (basic && form.client_id !== undefined && form.client_id !== creds.id) throw new OAuthError('invalid_request', 'client_id does not match the authenticated client');
  const grant = Object.hasOwn(GRANTS, form.grant_type) ? GRANTS[form.grant_type] : undefined;
  if (!grant) throw new OAuthError('unsupported_grant_type', `grant_type ${form.grant_type} is not supported; use ${Object.keys(GRANTS).join(' or ')}`);
  return grant(ctx, client, form);
}

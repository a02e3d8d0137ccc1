// Authentication (X-API-Key or Bearer JWT) and per-route scopes, as one onRequest hook (contract §2).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Forbidden, Unauthorized } from '../errors.ts';
import { principalForApiKey, type Principal } from '../auth/credentials.ts';
import type { TokenSettings } from '../auth/tokens.ts';
import { VerifiedTokens } from '../auth/verified-tokens.ts';
import { isFamilyRevoked } from '../auth/authorize-store.ts';
import type { AppContext } from '../context.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a caller needs; `null` means any authenticated caller. */
    scope?: string | null;
    /** No credentials needed (health, OpenAPI, JWKS, downloads by signed link). */
    public?: boolean;
    /** Errors use the RFC 6749 shape. */
    oauth?: boolean;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

export function tokenSettings(ctx: AppContext): TokenSettings {
  return { issuer: ctx.config.authBaseUrl, audience: ctx.config.baseUrl, ttlSeconds: ctx.config.accessTokenTtlSeconds };
}

/** The caller of an authenticated route; routes that declare a scope always have one. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Unauthorized('credentials are required');
  return request.principal;
}

export function installAuth(app: FastifyInstance, ctx: AppContext): void {
  const verifiedTokens = new VerifiedTokens(ctx.keys, tokenSettings(ctx));
  app.addHook('onRequest', async (request) => {
    const config = request.routeOptions.config;
    // Unknown routes fall through to the 404 handler; a known route needs credentials unless it says
    // `public`, even when it forgot to declare a scope (fail closed).
    if (config.public || request.is404) return;
    const apiKey = request.headers['x-api-key'];
    const authorization = request.headers.authorization;
    let principal: Principal | null = null;
    if (typeof apiKey === 'string' && apiKey !== '') {
      principal = await principalForApiKey(ctx.db, apiKey);
      if (!principal) throw new Unauthorized('the API key is invalid or revoked');
    } else if (typeof authorization === 'string' && /^bearer\s/i.test(authorization)) {
      const check = await verifiedTokens.verify(authorization.slice(7).trim());
      if (!check.ok) throw new Unauthorized(check.reason, 'invalid_token');
      // Only authorization-code tokens carry `fam`; API keys and client credentials skip this lookup.
      if (check.family && (await isFamilyRevoked(ctx.db, check.family))) throw new Unauthorized('the token has been revoked', 'invalid_token');
      principal = check.principal;
    } else {
      throw new Unauthorized('send an API key in X-API-Key or a bearer token in Authorization');
    }
    if (config.scope && !principal.scopes.has(config.scope)) {
      throw new Forbidden(`this operation needs the ${config.scope} scope`, config.scope);
    }
    request.principal = principal;
  });
}

// Authentication (X-API-Key or Bearer JWT) and per-route scopes, as one onRequest hook per route (docs/authentication.md).
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { Forbidden, Unauthorized } from '../errors.ts';
import { RateLimited, chargeCredential, setRateLimitHeaders, type RateLimiter } from './rate-limit.ts';
import { cachedPrincipalForApiKey, clientRecentlyActive, isClientActive, principalForApiKey, type Principal } from '../auth/credentials.ts';
import { tokenSettings, type TokenCheck } from '../auth/tokens.ts';
import { VerifiedTokens } from '../auth/verified-tokens.ts';
import type { AppContext } from '../context.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a caller needs; `null` means any authenticated caller. */
    scope?: string | null;
    /** No credentials needed (health, OpenAPI, JWKS, downloads by signed link). */
    public?: boolean;
    /** Errors use the RFC 6749 shape. */
    oauth?: boolean;
    /** Public, but limited per client address (src/http/rate-limit.ts): the token endpoint, the sign-in forms, signed-link downloads. */
    limitedByAddress?: boolean;
    /** A POST that only reads (e.g. stamp verification): Idempotency-Key is not recorded or replayed. */
    readOnly?: boolean;
    /** Every field of the body is optional, and so is the body (the OpenAPI document says so). */
    optionalBody?: boolean;
    /** The collection (`labels`) a 201 or 202 adds to: its answer's `Location` (src/http/location.ts). */
    creates?: string;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

const BEARER = /^bearer\s/i;

/** Every answer names its request id (the error and not-found handlers set it too). */
const tagRequest: onRequestHookHandler = (request, reply, done) => {
  reply.header('x-request-id', request.id);
  done();
};

/** The caller of an authenticated route; routes that declare a scope always have one. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Unauthorized('credentials are required');
  return request.principal;
}

/**
 * One route-level onRequest hook per route, added to every route registered after this call: it sets
 * `x-request-id` and, except on routes that say `public`, authenticates (a route that forgot to
 * declare a scope still needs credentials: fail closed). One hook instead of an instance-level one
 * plus this one: each hook costs every request. Unknown routes get no hook and fall through to the
 * 404 handler. The hook finishes synchronously when the credential was checked recently (a remembered
 * API key, or a remembered JWT verification whose client was found active within the same second as
 * keys are), so the common request pays no promise round trip. `grantRevoked`
 * tells whether the OAuth grant behind an authorization-code token was revoked (the OAuth server's answer).
 */
export function installAuth(app: FastifyInstance, ctx: AppContext, grantRevoked: (familyId: string) => Promise<boolean>, limiter: RateLimiter | null = null): void {
  const verifiedTokens = new VerifiedTokens(ctx.keys, tokenSettings(ctx));
  const { db } = ctx;

  function authenticate(scope: string | null | undefined): onRequestHookHandler {
    const admit = (request: FastifyRequest, principal: Principal): void => {
      request.principal = principal;
      if (scope && !principal.scopes.has(scope)) throw new Forbidden(`this operation needs the ${scope} scope`, scope);
    };
    // A valid credential refused for its scope is still a request of that credential: it is charged
    // to its bucket and answered with its RateLimit headers, or 429 once the bucket is empty.
    const refuse = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void, err: Error): void => {
      if (limiter && err instanceof Forbidden && request.principal) chargeCredential(limiter, reply, request.principal).then(() => done(err), done);
      else done(err);
    };
    const withKey = async (request: FastifyRequest, apiKey: string): Promise<void> => {
      const principal = await principalForApiKey(db, apiKey);
      if (!principal) throw new Unauthorized('the API key is invalid or revoked');
      admit(request, principal);
    };
    const withToken = async (request: FastifyRequest, token: string, known: TokenCheck | undefined): Promise<void> => {
      const check = known ?? (await verifiedTokens.verify(token));
      if (!check.ok) throw new Unauthorized(check.reason, 'invalid_token');
      // Only authorization-code tokens carry `fam`; API keys and client credentials skip this lookup.
      if (check.family && (await grantRevoked(check.family))) throw new Unauthorized('the token has been revoked', 'invalid_token');
      // A revoked client's tokens end with it, whichever grant issued them.
      if (!clientRecentlyActive(db, check.clientId) && !(await isClientActive(db, check.clientId))) {
        throw new Unauthorized('the token has been revoked: its client was revoked', 'invalid_token');
      }
      admit(request, check.principal);
    };
    return function authenticateRequest(request, reply, done) {
      reply.header('x-request-id', request.id);
      let check: () => Promise<void>;
      try {
        const apiKey = request.headers['x-api-key'];
        const authorization = request.headers.authorization;
        if (typeof apiKey === 'string' && apiKey !== '') {
          // Two credentials are refused, not one of them picked: a bad one must not pass unseen (§2).
          // Refused like a wrong credential: charged to the client address, with its RateLimit fields.
          if (typeof authorization === 'string' && BEARER.test(authorization)) {
            check = () => Promise.reject(new Unauthorized('send one credential: an API key in X-API-Key or a bearer token in Authorization, not both'));
          } else {
            const principal = cachedPrincipalForApiKey(db, apiKey);
            if (principal) {
              admit(request, principal);
              return done();
            }
            check = () => withKey(request, apiKey);
          }
        } else if (typeof authorization === 'string' && BEARER.test(authorization)) {
          const token = authorization.slice(7).trim();
          const known = verifiedTokens.cached(token);
          if (known?.ok && !known.family && clientRecentlyActive(db, known.clientId)) {
            admit(request, known.principal);
            return done();
          }
          check = () => withToken(request, token, known);
        } else {
          // No credential at all is refused like a wrong one: charged to the client address (§15: every
          // answer of a limited route carries the RateLimit fields).
          check = () => Promise.reject(new Unauthorized('send an API key in X-API-Key or a bearer token in Authorization'));
        }
      } catch (err) {
        return refuse(request, reply, done, err as Error);
      }
      if (!limiter) {
        check().then(() => done(), done);
        return;
      }
      // Failed authentications are charged to the client address, so guessing keys or tokens is slow:
      // once its bucket is empty, credentials from there are not even checked.
      const failures = `authfail:${request.ip}`;
      limiter.take(failures, 0).then(
        (look) => {
          if (!look.allowed) {
            setRateLimitHeaders(reply, limiter, look);
            return done(new RateLimited(look.retryAfterSeconds));
          }
          check().then(
            () => done(),
            (err: unknown) => {
              if (!(err instanceof Unauthorized)) return refuse(request, reply, done, err as Error);
              limiter.take(failures).then((d) => {
                // A refused credential is limited by its address's bucket: say so as every limited answer does.
                setRateLimitHeaders(reply, limiter, d);
                done(d.allowed ? err : new RateLimited(d.retryAfterSeconds));
              }, done);
            },
          );
        },
        done,
      );
    };
  }

  app.addHook('onRoute', (route) => {
    const config = route.config as FastifyContextConfig | undefined;
    const hook = config?.public ? tagRequest : authenticate(config?.scope);
    // First among the route's own onRequest hooks.
    route.onRequest = route.onRequest === undefined ? [hook] : [hook, ...[route.onRequest].flat()];
  });
}

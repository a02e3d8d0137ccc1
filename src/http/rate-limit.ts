// Rate limits: a token bucket per credential (API key or OAuth client), and per client address where
// there is none (the token endpoint, the sign-in form, downloads) or where authentication failed.
// RATE_LIMIT_PER_SECOND tokens a second refill a bucket of RATE_LIMIT_BURST; each request takes one.
// One process on SQLite keeps the buckets in memory; on PostgreSQL every process shares them through
// the database (docs/decisions.md).
import { rateLimited } from '../metrics.ts';
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { LRUCache } from 'lru-cache';
import { sql } from 'kysely';
import type { Db } from '../db/index.ts';
import { AppError } from '../errors.ts';

export class RateLimited extends AppError {
  constructor(retryAfterSeconds: number) {
    super(429, 'RATE_LIMITED', `too many requests; retry after ${retryAfterSeconds} s`, { headers: { 'retry-after': String(retryAfterSeconds) } });
  }
}

export interface BucketState {
  tokens: number;
  /** Milliseconds since the epoch of the last update. */
  at: number;
}

export interface Decision {
  allowed: boolean;
  /** Tokens left after this request. */
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one token is there (0 when allowed). */
  retryAfterSeconds: number;
}

/** The bucket after `cost` is asked for at `now`: refilled at `rate` a second up to `burst`, then taken if there is enough. */
export function takeFrom(state: BucketState | undefined, now: number, rate: number, burst: number, cost = 1): { state: BucketState; decision: Decision } {
  const refilled = state === undefined ? burst : Math.min(burst, state.tokens + (Math.max(0, now - state.at) / 1000) * rate);
  const allowed = refilled >= cost && (cost > 0 || refilled >= 1);
  const tokens = allowed ? refilled - cost : refilled;
  return {
    state: { tokens, at: now },
    decision: {
      allowed,
      remaining: Math.max(0, Math.floor(tokens)),
      resetSeconds: Math.ceil((burst - tokens) / rate),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((Math.max(cost, 1) - tokens) / rate)),
    },
  };
}

export interface RateLimiter {
  readonly rate: number;
  readonly burst: number;
  /** Takes `cost` tokens (0: only looks whether one is there). */
  take(key: string, cost?: number): Promise<Decision>;
}

/** Buckets in this process's memory (SQLite: one process). */
export function memoryLimiter(rate: number, burst: number, clock: () => number = Date.now): RateLimiter {
  // State, not a cache: it ignores CACHES=0. Bounded; a bucket forgotten is a full one, which is what
  // an idle key would have by then anyway.
  const buckets = new LRUCache<string, BucketState>({ max: 200_000 });
  return {
    rate,
    burst,
    async take(key, cost = 1) {
      const { state, decision } = takeFrom(buckets.get(key), clock(), rate, burst, cost);
      buckets.set(key, state);
      return decision;
    },
  };
}

/** Buckets in PostgreSQL, shared by every process: one atomic statement per request. */
export function databaseLimiter(db: Db, rate: number, burst: number, clock: () => number = Date.now): RateLimiter {
  return {
    rate,
    burst,
    async take(key, cost = 1) {
      const now = clock();
      const result = await sql<{ tokens: number; allowed: boolean }>`
        insert into rate_limit_buckets as b (key, tokens, updated_ms, allowed)
        values (${key}, ${burst - cost}, ${now}, true)
        on conflict (key) do update set
          allowed = least(${burst}::float8, b.tokens + greatest(0, ${now}::bigint - b.updated_ms) / 1000.0 * ${rate}) >= greatest(${cost}::float8, 1),
          tokens = least(${burst}::float8, b.tokens + greatest(0, ${now}::bigint - b.updated_ms) / 1000.0 * ${rate})
            - case when least(${burst}::float8, b.tokens + greatest(0, ${now}::bigint - b.updated_ms) / 1000.0 * ${rate}) >= greatest(${cost}::float8, 1) then ${cost}::float8 else 0 end,
          -- Processes' clocks may differ a little: time never runs backwards for a bucket.
          updated_ms = greatest(b.updated_ms, ${now}::bigint)
        returning tokens, allowed`.execute(db);
      const row = result.rows[0]!;
      const tokens = Number(row.tokens);
      return {
        allowed: row.allowed,
        remaining: Math.max(0, Math.floor(tokens)),
        resetSeconds: Math.ceil((burst - tokens) / rate),
        retryAfterSeconds: row.allowed ? 0 : Math.max(1, Math.ceil((Math.max(cost, 1) - tokens) / rate)),
      };
    },
  };
}

/** The IETF RateLimit header fields of a decision. */
export function setRateLimitHeaders(reply: FastifyReply, limiter: RateLimiter, decision: Decision): void {
  reply.header('ratelimit-limit', String(limiter.burst));
  reply.header('ratelimit-remaining', String(decision.remaining));
  reply.header('ratelimit-reset', String(decision.resetSeconds));
}

/** Takes a token for `key` and sets the RateLimit headers; throws 429 when there is none. */
export async function charge(limiter: RateLimiter, reply: FastifyReply, key: string, cost = 1): Promise<void> {
  const decision = await limiter.take(key, cost);
  setRateLimitHeaders(reply, limiter, decision);
  if (!decision.allowed) {
    rateLimited.inc({ route: reply.request.routeOptions.url ?? 'unmatched' });
    throw new RateLimited(decision.retryAfterSeconds);
  }
}

/**
 * Adds a limit to every route registered after this call, after authentication: authenticated routes
 * per credential, public routes that say `limitedByAddress` per client address (the token endpoint,
 * the sign-in forms, signed-link downloads), the other public ones (health, keys, documents)
 * not at all.
 */
export function installRateLimits(app: FastifyInstance, limiter: RateLimiter): void {
  const byCredential: onRequestHookHandler = async (request, reply) => {
    if (request.principal) await charge(limiter, reply, `cred:${request.principal.subject}`);
  };
  const byAddress: onRequestHookHandler = async (request: FastifyRequest, reply) => {
    await charge(limiter, reply, `ip:${request.ip}`);
  };
  app.addHook('onRoute', (route) => {
    const config = (route.config ?? {}) as FastifyContextConfig;
    const hook = !config.public ? byCredential : config.limitedByAddress ? byAddress : null;
    if (!hook) return;
    route.onRequest = route.onRequest === undefined ? [hook] : [...[route.onRequest].flat(), hook];
  });
}

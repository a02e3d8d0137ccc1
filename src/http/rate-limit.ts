// Rate limits: a token bucket per credential (API key or OAuth client), and per client address where
// there is none (the token endpoint, the sign-in form, downloads) or where authentication failed.
// RATE_LIMIT_PER_SECOND tokens a second refill a bucket of RATE_LIMIT_BURST; each request takes one.
// One process on SQLite keeps the buckets in memory; on PostgreSQL every process shares them through
// the database, deciding each request in its own memory (docs/decisions.md).
import { rateLimited } from '../metrics.ts';
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { LRUCache } from 'lru-cache';
import { sql } from 'kysely';
import { PURGE_CHUNK, type Db } from '../db/index.ts';
import type { AppContext } from '../context.ts';
import { AppError } from '../errors.ts';
import type { Principal } from '../auth/credentials.ts';

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

/** How often a process tells the shared buckets what it took, and learns what the others took. */
export const SYNC_MS = 250;
/** Buckets written in one statement at most. */
const SYNC_BATCH = 500;

interface SharedBucket {
  /** This process's view: the shared bucket as last read, less what was taken here since. */
  state: BucketState;
  /** Tokens taken here that the shared bucket does not know of yet. */
  unwritten: number;
  /** Whether a request asked for the bucket since its last exchange with the database. */
  used: boolean;
  /** When the last exchange's answer arrived (clock milliseconds). */
  readAt: number;
  /** The exchange with the database in flight for this bucket, which a request may wait for. */
  exchange?: Promise<void>;
}

export interface SharedRateLimiter extends RateLimiter {
  /** Writes what was taken here to the shared buckets now and stops the periodic writes. */
  close(): Promise<void>;
}

/**
 * Buckets in PostgreSQL, shared by every process, each request decided in this process's memory. A
 * process reads a bucket when a request first needs it (or needs it again after half a second
 * unused), and every SYNC_MS one statement adds what it took to the rows of the buckets its requests
 * used and reads back what the other processes took. So a request waits for the database only for a
 * bucket new to this process, and tokens taken anywhere are known to every process using the bucket
 * within two periods. Until then several processes may each grant from their view; what they grant
 * beyond the budget becomes debt (the shared tokens go below zero), so over any longer time the rate
 * holds (docs/decisions.md).
 */
export function sharedLimiter(db: Db, rate: number, burst: number, options: { clock?: () => number; syncMs?: number } = {}): SharedRateLimiter {
  const clock = options.clock ?? Date.now;
  const syncMs = options.syncMs ?? SYNC_MS;
  // State, not a cache (it ignores CACHES=0): a bucket is forgotten once it is written and unused.
  const buckets = new Map<string, SharedBucket>();
  let timer: NodeJS.Timeout | undefined;
  let syncing: Promise<void> | undefined;

  /** Adds what each bucket took since its last exchange to its shared row and adopts what the row then holds. */
  async function exchange(batch: [string, SharedBucket][]): Promise<void> {
    const now = clock();
    const keys = batch.map(([key]) => key);
    const taken = batch.map(([, bucket]) => bucket.unwritten);
    for (const [, bucket] of batch) bucket.used = false;
    const result = await sql<{ key: string; tokens: number }>`
      insert into rate_limit_buckets as b (key, tokens, updated_ms, allowed)
      select key, ${burst}::float8 - taken, ${now}::bigint, true
      from unnest(${keys}::text[], ${taken}::float8[]) with ordinality as t(key, taken, n)
      order by n
      on conflict (key) do update set
        -- refilled up to now, less what was taken (excluded.tokens is the burst less that)
        tokens = least(${burst}::float8, b.tokens + greatest(0, ${now}::bigint - b.updated_ms) / 1000.0 * ${rate})
          - (${burst}::float8 - excluded.tokens),
        -- Processes' clocks may differ a little: time never runs backwards for a bucket.
        updated_ms = greatest(b.updated_ms, ${now}::bigint)
      returning key, tokens`.execute(db);
    const tokensOf = new Map(result.rows.map((row) => [row.key, Number(row.tokens)]));
    const arrived = clock();
    batch.forEach(([key, bucket], i) => {
      bucket.unwritten -= taken[i]!;
      // What was taken here while the statement ran is not in the row yet.
      bucket.state = { tokens: tokensOf.get(key)! - bucket.unwritten, at: now };
      bucket.readAt = arrived;
    });
  }

  /**
   * Exchanges `due` in batches, one after another, each bucket marked as in flight until its own
   * batch is done. Rows are locked in key order, so two processes writing the same keys never deadlock.
   */
  function exchanging(due: [string, SharedBucket][]): Promise<void> {
    due.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    let previous: Promise<void> = Promise.resolve();
    for (let i = 0; i < due.length; i += SYNC_BATCH) {
      const batch = due.slice(i, i + SYNC_BATCH);
      const done: Promise<void> = previous.then(() => exchange(batch)).finally(() => {
        for (const [, bucket] of batch) if (bucket.exchange === done) bucket.exchange = undefined;
      });
      for (const [, bucket] of batch) bucket.exchange = done;
      previous = done;
    }
    return previous;
  }

  /** Exchanges every bucket used since its last exchange; forgets those unused for two periods. */
  function sync(): Promise<void> {
    const now = clock();
    const due: [string, SharedBucket][] = [];
    for (const [key, bucket] of buckets) {
      if (bucket.exchange) continue;
      if (bucket.used || bucket.unwritten > 0) due.push([key, bucket]);
      else if (now - bucket.readAt >= 2 * syncMs) buckets.delete(key);
    }
    if (buckets.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
    return exchanging(due);
  }

  return {
    rate,
    burst,
    async take(key, cost = 1) {
      let bucket = buckets.get(key);
      if (!bucket) {
        bucket = { state: { tokens: burst, at: clock() }, unwritten: 0, used: false, readAt: -Infinity };
        buckets.set(key, bucket);
        // One sync at a time; a failed one is tried again at the next period, so nothing taken is forgotten.
        timer ??= setInterval(() => {
          syncing ??= sync()
            .catch(() => {})
            .finally(() => (syncing = undefined));
        }, syncMs).unref();
      }
      // A bucket new here, or unused here for two periods: read what the others took first (once,
      // even if the database is slow). A bucket in use is read every period and decided on meanwhile.
      if (clock() - bucket.readAt >= 2 * syncMs) await (bucket.exchange ?? exchanging([[key, bucket]]));
      bucket.used = true;
      const { state, decision } = takeFrom(bucket.state, clock(), rate, burst, cost);
      bucket.state = state;
      if (decision.allowed) bucket.unwritten += cost;
      return decision;
    },
    async close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await syncing;
      await Promise.all([...buckets.values()].map((bucket) => bucket.exchange?.catch(() => {})));
      await exchanging([...buckets].filter(([, bucket]) => bucket.unwritten > 0));
    },
  };
}

/** Rows of buckets that would be full again by now (a missing row is a full bucket); the worker calls this now and then. */
export async function purgeRateLimitBuckets(ctx: AppContext): Promise<number> {
  const { rateLimitPerSecond: rate, rateLimitBurst: burst } = ctx.config;
  if (ctx.storage.dialect !== 'postgres' || rate <= 0) return 0;
  // A minute more, for processes that still decide on a view of the row.
  const cutoff = Date.now() - 60_000;
  // Full again by now; checked again by the delete itself, so a bucket another process took from meanwhile stays.
  const full = sql<boolean>`updated_ms + (${burst}::float8 - tokens) / ${rate}::float8 * 1000 < ${cutoff}`;
  const r = await ctx.db
    .deleteFrom('rate_limit_buckets')
    .where('key', 'in', (eb) => eb.selectFrom('rate_limit_buckets').select('key').where(full).limit(PURGE_CHUNK))
    .where(full)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
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

/** Charges a request to its credential's bucket (an API key's, or an OAuth client's or user's). */
export function chargeCredential(limiter: RateLimiter, reply: FastifyReply, principal: Principal): Promise<void> {
  return charge(limiter, reply, `cred:${principal.subject}`);
}

/**
 * Adds a limit to every route registered after this call, after authentication: authenticated routes
 * per credential, public routes that say `limitedByAddress` per client address (the token endpoint,
 * the sign-in forms, signed-link downloads), the other public ones (health, keys, documents)
 * not at all.
 */
export function installRateLimits(app: FastifyInstance, limiter: RateLimiter): void {
  const byCredential: onRequestHookHandler = async (request, reply) => {
    if (request.principal) await chargeCredential(limiter, reply, request.principal);
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

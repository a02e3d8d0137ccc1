// Rate limits (a token bucket per credential, per client address where there is none) and 415 for
// every body type a JSON route does not take, on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { memoryLimiter, purgeRateLimitBuckets, SYNC_MS, sharedLimiter, takeFrom } from '../../src/http/rate-limit.ts';
import { DATABASES, forEachDatabase, sampleShipment, startTestApp, type TestApp, withTestApp } from '../helpers.ts';
import { buildApp } from '../../src/app.ts';
import { closeContext, openContext } from '../../src/bootstrap.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { sharedDatabaseUrl, tokenRequest } from './support.ts';

describe('the token bucket', () => {
  it('starts full, takes one a request, refills at the rate up to the burst, and says when to retry', () => {
    let state: ReturnType<typeof takeFrom>['state'] | undefined;
    const rate = 10;
    const burst = 3;
    const results: boolean[] = [];
    for (let i = 0; i < 4; i++) {
      const r = takeFrom(state, 1000, rate, burst);
      state = r.state;
      results.push(r.decision.allowed);
      if (i === 3) {
        assert.equal(r.decision.remaining, 0);
        assert.equal(r.decision.retryAfterSeconds, 1);
      }
    }
    assert.deepEqual(results, [true, true, true, false]);
    // 100 ms later one token is back (10 a second).
    const later = takeFrom(state, 1100, rate, burst);
    assert.equal(later.decision.allowed, true);
    // Long idle: never more than the burst.
    const idle = takeFrom(later.state, 1_000_000, rate, burst);
    assert.equal(idle.decision.remaining, burst - 1);
    assert.equal(idle.decision.resetSeconds, 1);
    // Looking (cost 0) takes nothing.
    const look = takeFrom(idle.state, 1_000_000, rate, burst, 0);
    assert.equal(look.state.tokens, idle.state.tokens);
  });

  it('the memory limiter keeps one bucket per key', async () => {
    let now = 0;
    const limiter = memoryLimiter(1, 2, () => now);
    assert.deepEqual([(await limiter.take('a')).allowed, (await limiter.take('a')).allowed, (await limiter.take('a')).allowed], [true, true, false]);
    assert.equal((await limiter.take('b')).allowed, true, 'another key has its own bucket');
    now += 1000;
    assert.equal((await limiter.take('a')).allowed, true);
  });
});

forEachDatabase((database) => {
  describe('limits on the API', () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(database, { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '3' });
    });
    after(async () => t.close());

    it('per API key: the burst passes with RateLimit headers, the next is 429 RATE_LIMITED with Retry-After; another key is not limited', async () => {
      const a = await t.newAccount();
      const b = await t.newAccount();
      const get = (key: string) => t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': key } });
      for (let i = 0; i < 3; i++) {
        const res = await get(a.apiKey);
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['ratelimit-limit'], '3');
        assert.equal(res.headers['ratelimit-remaining'], String(2 - i));
        assert.ok(Number(res.headers['ratelimit-reset']) >= 1);
      }
      const limited = await get(a.apiKey);
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().code, 'RATE_LIMITED');
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      assert.equal(limited.headers['ratelimit-remaining'], '0');
      assert.equal((await get(b.apiKey)).statusCode, 200);
    });

    it('a request refused for its scope is charged to its credential, with the RateLimit headers, then 429', async () => {
      const reader = await t.newAccount(['read:shipments', 'read:labels']);
      const post = () => t.app.inject({ method: 'POST', url: '/v1/manifests', headers: { 'x-api-key': reader.apiKey }, payload: { carrier: 'UPS' } });
      for (let i = 0; i < 3; i++) {
        const res = await post();
        assert.equal(res.statusCode, 403, res.body);
        assert.equal(res.headers['ratelimit-limit'], '3');
        assert.equal(res.headers['ratelimit-remaining'], String(2 - i));
      }
      const limited = await post();
      assert.equal(limited.statusCode, 429, limited.body);
      assert.ok(Number(limited.headers['retry-after']) >= 1);
      // The same bucket as the credential's allowed requests.
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': reader.apiKey } })).statusCode, 429);
    });

    it('failed API keys count against the client address: guessing stops being checked', async () => {
      const guess = (n: number) => t.app.inject({ method: 'GET', url: '/v1/shipments', remoteAddress: '10.60.0.1', headers: { 'x-api-key': `sk_test_guess${n}` } });
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await guess(i)).statusCode);
      assert.deepEqual(statuses, [401, 401, 401, 429, 429]);
      // A refused credential's answer carries the address bucket's RateLimit fields too.
      const refused = await t.app.inject({ method: 'GET', url: '/v1/shipments', remoteAddress: '10.60.0.3', headers: { 'x-api-key': 'sk_test_nope' } });
      assert.equal(refused.statusCode, 401);
      assert.equal(refused.headers['ratelimit-limit'], '3');
      assert.equal(refused.headers['ratelimit-remaining'], '2');
      // So is a request with no credential at all: charged to its address, RateLimit fields, then 429.
      const bare = () => t.app.inject({ method: 'GET', url: '/v1/shipments', remoteAddress: '10.60.0.4' });
      const first = await bare();
      assert.equal(first.statusCode, 401);
      assert.equal(first.headers['www-authenticate'], 'Bearer realm="shipping"');
      assert.equal(first.headers['ratelimit-remaining'], '2');
      const more = [];
      for (let i = 0; i < 3; i++) more.push((await bare()).statusCode);
      assert.deepEqual(more, [401, 401, 429]);
      // Two credentials at once are refused the same way (§2), whatever each is worth.
      const both = () => t.app.inject({ method: 'GET', url: '/v1/shipments', remoteAddress: '10.60.0.5', headers: { 'x-api-key': 'sk_test_nope', authorization: 'Bearer x' } });
      const twice = await both();
      assert.equal(twice.statusCode, 401);
      assert.equal(twice.headers['ratelimit-remaining'], '2');
      const again = [];
      for (let i = 0; i < 3; i++) again.push((await both()).statusCode);
      assert.deepEqual(again, [401, 401, 429]);
      // A valid key from another address is not affected.
      const other = await t.newAccount();
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/shipments', remoteAddress: '10.60.0.2', headers: { 'x-api-key': other.apiKey } })).statusCode, 200);
    });

    it('the token endpoint per client address', async () => {
      const { clientId, clientSecret } = await t.newClient(t.accountId);
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await tokenRequest(t, { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }, {}));
      assert.deepEqual(answers.map((a) => a.statusCode), [200, 200, 200, 429]);
      // In the endpoint's own shape (RFC 6749 §5.2), as every error of it, with when to send again.
      const limited = answers[3]!;
      assert.deepEqual(Object.keys(limited.json()), ['error', 'error_description']);
      assert.equal(limited.json().error, 'temporarily_unavailable');
      assert.match(limited.json().error_description, /^too many requests; retry after \d+ s$/);
      assert.match(String(limited.headers['retry-after']), /^\d+$/);
      assert.equal(limited.headers['cache-control'], 'no-store');
      assert.equal(limited.headers.pragma, 'no-cache');
    });
  });

  describe('RATE_LIMIT_PER_SECOND=0', () => {
    const t = withTestApp(database, { RATE_LIMIT_PER_SECOND: '0', RATE_LIMIT_BURST: '1' });
    it('turns the limits off: no 429, no RateLimit headers', async () => {
      for (let i = 0; i < 5; i++) {
        const res = await t.request({ method: 'GET', url: '/v1/shipments' });
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['ratelimit-limit'], undefined);
      }
    });
  });

  describe('415 for every body type a JSON route does not take', () => {
    const t = withTestApp(database);
    it('text/plain, XML and form bodies on every JSON POST and PATCH', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
      let checked = 0;
      for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
        for (const [method, op] of Object.entries(item)) {
          if (!op.requestBody?.content?.['application/json']) continue;
          const url = path.replace(/\{\w+\}/g, '01936f5e-8a2b-7c3d-9e4f-5a6b7c8d9e0f');
          for (const [type, payload] of [['text/plain', JSON.stringify(sampleShipment)], ['application/xml', '<shipment/>'], ['application/x-www-form-urlencoded', 'a=b']]) {
            const res = await t.request({ method: method.toUpperCase() as 'POST', url, headers: { 'content-type': type }, payload });
            assert.equal(res.statusCode, 415, `${method} ${path} ${type}: ${res.body}`);
            assert.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE');
            checked++;
          }
        }
      }
      assert.ok(checked >= 21, `${checked} checked`);
    });
  });
});

/** Polls `check` until it holds, for at most 5 s (a busy machine may fire timers late). */
async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 5000; !(await check()); await sleep(10)) {
    if (Date.now() > deadline) assert.fail(`${what}: not within 5 s`);
  }
}

describe('two processes on one PostgreSQL share one budget', () => {
  it('a key limited through one service instance is limited through another on the same database', async (tc) => {
    const pg = DATABASES.find((d) => d.name === 'postgres');
    if (!pg) return tc.skip('no PostgreSQL');
    const a = await startTestApp(pg, { RATE_LIMIT_PER_SECOND: '0.01', RATE_LIMIT_BURST: '4' });
    // A second service on the same schema: its own pool, its own limiter, as another process has.
    const config = loadConfig({ APP_ENV: 'development', DATABASE_URL: await sharedDatabaseUrl(a), RATE_LIMIT_PER_SECOND: '0.01', RATE_LIMIT_BURST: '4', LOG_LEVEL: 'silent' }, 'test');
    const ctx = await openContext(config, createLogger('silent'));
    const b = await buildApp(ctx);
    try {
      const get = (app: typeof b) => app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': a.apiKey } });
      const statuses = [(await get(b)).statusCode];
      for (let i = 0; i < 3; i++) statuses.push((await get(a.app)).statusCode);
      assert.deepEqual(statuses, [200, 200, 200, 200]);
      // Once both have told the shared bucket what they took (every SYNC_MS), it is empty; two periods
      // later every view of it is either read since or old enough to be read again before it decides.
      await until('the takes written', async () => {
        const { rows } = await sql<{ tokens: number }>`select min(tokens) as tokens from rate_limit_buckets`.execute(a.ctx.db);
        return Number(rows[0]?.tokens) < 0.1;
      });
      await sleep(2 * SYNC_MS + 50);
      assert.deepEqual([(await get(a.app)).statusCode, (await get(b)).statusCode], [429, 429]);
    } finally {
      await b.close();
      await closeContext(ctx);
      await a.close();
    }
  });

  describe('the shared limiter', () => {
    let t: TestApp;
    before(async () => {
      const pg = DATABASES.find((d) => d.name === 'postgres');
      if (pg) t = await startTestApp(pg, { RATE_LIMIT_PER_SECOND: '0' });
    });
    after(async () => t?.close());
    let n = 0;
    const newKey = () => `test:${process.pid}:${++n}`;
    /** The service's database, counting the statements sent through it; each fails while `failing`, and waits `delayMs` first. */
    const counted = () => {
      const seen = { statements: 0, failing: false, delayMs: 0 };
      const db = t.ctx.db.withPlugin({
        transformQuery: (args) => {
          if (seen.failing) throw new Error('the database is away');
          seen.statements++;
          return args.node;
        },
        transformResult: async (args) => {
          if (seen.delayMs) await sleep(seen.delayMs);
          return args.result;
        },
      });
      return { db, seen };
    };
    const sharedTokens = async (key: string) => {
      const { rows } = await sql<{ tokens: number }>`select tokens from rate_limit_buckets where key = ${key}`.execute(t.ctx.db);
      return rows[0] ? Number(rows[0].tokens) : undefined;
    };
    const near = (a: number | undefined, b: number) => a !== undefined && Math.abs(a - b) < 0.1;

    it('decides requests in memory: one statement reads the bucket, then one a period writes it', async (tc) => {
      if (!t) return tc.skip('no PostgreSQL');
      const { db, seen } = counted();
      const limiter = sharedLimiter(db, 0.01, 50, { syncMs: 100 });
      const key = newKey();
      try {
        const remaining = [];
        for (let i = 0; i < 40; i++) remaining.push((await limiter.take(key)).remaining);
        assert.deepEqual(remaining, Array.from({ length: 40 }, (_, i) => 49 - i));
        assert.equal(seen.statements, 1);
        await until('the 40 written', async () => near(await sharedTokens(key), 10));
        assert.ok(seen.statements <= 3, `${seen.statements} statements`);
      } finally {
        await limiter.close();
      }
    });

    it('the exact burst in one process, then 429 with the time to wait', async (tc) => {
      if (!t) return tc.skip('no PostgreSQL');
      const limiter = sharedLimiter(t.ctx.db, 1, 3, { syncMs: 100 });
      try {
        const key = newKey();
        const decisions = [];
        for (let i = 0; i < 4; i++) decisions.push(await limiter.take(key));
        assert.deepEqual(
          decisions.map((d) => [d.allowed, d.remaining]),
          [[true, 2], [true, 1], [true, 0], [false, 0]],
        );
        assert.equal(decisions[3]!.retryAfterSeconds, 1);
      } finally {
        await limiter.close();
      }
    });

    it('a process using a bucket learns from its periodic exchange what another took, without waiting for the database', async (tc) => {
      if (!t) return tc.skip('no PostgreSQL');
      const a = sharedLimiter(t.ctx.db, 0.01, 10, { syncMs: 50 });
      // b's clock stands still, so its view never grows old enough to be read on a request's path:
      // what a took can only reach it through b's own periodic exchanges of the buckets it uses.
      const b = sharedLimiter(t.ctx.db, 0.01, 10, { syncMs: 50, clock: () => 1_000_000 });
      const key = newKey();
      try {
        assert.ok((await b.take(key)).allowed);
        for (let i = 0; i < 7; i++) assert.ok((await a.take(key)).allowed);
        await until("b sees a's 7", async () => (await b.take(key, 0)).remaining === 2);
        const left = [];
        for (let i = 0; i < 3; i++) left.push((await b.take(key)).allowed);
        assert.deepEqual(left, [true, true, false]);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('what two processes grant beyond the budget before they learn of each other is debt, repaid before more is granted', async (tc) => {
      if (!t) return tc.skip('no PostgreSQL');
      const a = sharedLimiter(t.ctx.db, 0.01, 4, { syncMs: 50 });
      const b = sharedLimiter(t.ctx.db, 0.01, 4, { syncMs: 50 });
      const key = newKey();
      try {
        // Both read the full bucket, then grant from it before either writes: 8 of a budget of 4.
        await Promise.all([a.take(key, 0), b.take(key, 0)]);
        for (let i = 0; i < 4; i++) assert.deepEqual([(await a.take(key)).allowed, (await b.take(key)).allowed], [true, true]);
        await until('the debt written', async () => (await sharedTokens(key))! < -3.9);
        await until('a has learnt of it', async () => (await a.take(key, 0)).retryAfterSeconds > 400);
        const refused = await a.take(key);
        assert.equal(refused.allowed, false);
        // The debt is repaid first: the next token is 5 tokens' refill away (500 s at 0.01 a second), not one.
        assert.ok(refused.retryAfterSeconds > 400 && refused.retryAfterSeconds <= 500, `retry after ${refused.retryAfterSeconds} s`);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('nothing taken is forgotten: a failed write is tried again, and close writes what is left', async (tc) => {
      if (!t) return tc.skip('no PostgreSQL');
      const { db, seen } = counted();
      const a = sharedLimiter(db, 0.01, 10, { syncMs: 50 });
      const key = newKey();
      const other = newKey();
      try {
        assert.ok((await a.take(key)).allowed);
        seen.failing = true;
        for (let i = 0; i < 2; i++) assert.ok((await a.take(key)).allowed); // a bucket in use is decided in memory while the database is away
        await sleep(200); // its writes fail meanwhile
        assert.ok(near(await sharedTokens(key), 9) || near(await sharedTokens(key), 10));
        seen.failing = false;
        await until('all 3 written', async () => near(await sharedTokens(key), 7));
        assert.ok((await a.take(other, 5)).allowed);
      } finally {
        await a.close(); // before its period: written by close
      }
      assert.ok(near(await sharedTokens(other), 5));
    });

    it('a database slower than two periods: a request for a new bucket waits for one read, not more', async (tc) => {
      if (!t) return tc.skip('no PostgreSQL');
      const { db, seen } = counted();
      const a = sharedLimiter(db, 0.01, 10, { syncMs: 20 });
      try {
        seen.delayMs = 100; // each answer arrives after five periods
        const answered = await Promise.race([a.take(newKey()).then((d) => d.allowed), sleep(2000, 'still waiting')]);
        assert.equal(answered, true);
        assert.equal(seen.statements, 1);
      } finally {
        seen.delayMs = 0;
        await a.close();
      }
    });

    it('a sync slower than a period: the next waits for it, and no token is written twice', async (tc) => {
      if (!t) return tc.skip('no PostgreSQL');
      const { db, seen } = counted();
      // A clock that stands still: no refill, and a bucket once read never needs reading again.
      const a = sharedLimiter(db, 0.01, 10, { syncMs: 20, clock: () => 1_000_000 });
      const keys = Array.from({ length: 1200 }, newKey); // three statements' worth
      try {
        await Promise.all(keys.map((key) => a.take(key, 0)));
        await sleep(100);
        seen.delayMs = 100; // a sync of the 1,200 now takes 300 ms: fifteen periods
        for (const key of keys) assert.ok((await a.take(key)).allowed);
        await sleep(1000);
      } finally {
        seen.delayMs = 0;
        await a.close();
      }
      const { rows } = await sql<{ tokens: number }>`select tokens from rate_limit_buckets where key = any(${keys}::text[])`.execute(t.ctx.db);
      assert.equal(rows.length, keys.length);
      assert.deepEqual(new Set(rows.map((row) => Number(row.tokens))), new Set([9]));
    });

    it('a bucket unused here for two periods is read again before it decides, so a long-lived process sees what others took', async (tc) => {
      if (!t) return tc.skip('no PostgreSQL');
      const a = sharedLimiter(t.ctx.db, 0.01, 3, { syncMs: 30 });
      const b = sharedLimiter(t.ctx.db, 0.01, 3, { syncMs: 30 });
      const key = newKey();
      try {
        assert.ok((await a.take(key)).allowed);
        await until("a's token written", async () => near(await sharedTokens(key), 2));
        await sleep(100); // a's view grows old
        for (let i = 0; i < 2; i++) assert.ok((await b.take(key)).allowed);
        await b.close();
        assert.equal((await a.take(key)).allowed, false);
      } finally {
        await a.close();
      }
    });

    it('the worker purges the rows of buckets that would be full again by now', async (tc) => {
      if (!t) return tc.skip('no PostgreSQL');
      const [full, refilling, fresh] = [newKey(), newKey(), newKey()];
      const hour = 3600_000;
      const now = Date.now();
      // With t's settings turned on: 100 a second up to 200.
      const ctx = { ...t.ctx, config: { ...t.ctx.config, rateLimitPerSecond: 100, rateLimitBurst: 200 } };
      await sql`insert into rate_limit_buckets (key, tokens, updated_ms, allowed) values
        (${full}, ${-1000}, ${now - hour}, true), (${refilling}, ${-100_000}, ${now - 120_000}, true), (${fresh}, ${200}, ${now}, true)`.execute(t.ctx.db);
      assert.ok((await purgeRateLimitBuckets(ctx)) >= 1);
      assert.equal(await sharedTokens(full), undefined); // 1,200 tokens short an hour ago: full for long
      assert.equal(await sharedTokens(refilling), -100_000); // 1,000 s of refill to go
      assert.equal(await sharedTokens(fresh), 200); // written a moment ago (a process may still hold its view)
      assert.equal(await purgeRateLimitBuckets(t.ctx), 0); // limits off: nothing to purge
    });
  });
});

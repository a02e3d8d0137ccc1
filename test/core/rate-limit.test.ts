// Rate limits (a token bucket per credential, per client address where there is none) and 415 for
// every body type a JSON route does not take, on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { memoryLimiter, SYNC_MS, sharedLimiter, takeFrom } from '../../src/http/rate-limit.ts';
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
      // A valid key from another address is not affected.
      const other = await t.newAccount();
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/shipments', remoteAddress: '10.60.0.2', headers: { 'x-api-key': other.apiKey } })).statusCode, 200);
    });

    it('the token endpoint per client address', async () => {
      const { clientId, clientSecret } = await t.newClient(t.accountId);
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await tokenRequest(t, { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }, {})).statusCode);
      assert.deepEqual(statuses, [200, 200, 200, 429]);
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
      // Once each has told the shared bucket what it took (every SYNC_MS), neither has a token left.
      await sleep(3 * SYNC_MS);
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
    /** The service's database, counting the statements sent through it; `failing` makes each fail. */
    const counted = () => {
      const seen = { statements: 0, failing: false };
      const db = t.ctx.db.withPlugin({
        transformQuery: (args) => {
          if (seen.failing) throw new Error('the database is away');
          seen.statements++;
          return args.node;
        },
        transformResult: async (args) => args.result,
      });
      return { db, seen };
    };
    const sharedTokens = async (key: string) => {
      const { rows } = await sql<{ tokens: number }>`select tokens from rate_limit_buckets where key = ${key}`.execute(t.ctx.db);
      return rows[0] ? Number(rows[0].tokens) : undefined;
    };

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
        await sleep(250);
        assert.ok(seen.statements >= 2 && seen.statements <= 4, `${seen.statements} statements`);
        assert.ok(Math.abs(40 - (50 - (await sharedTokens(key))!)) < 0.1);
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

    it("tokens taken in one process are missing from another's within a period", async (tc) => {
      if (!t) return tc.skip('no PostgreSQL');
      const a = sharedLimiter(t.ctx.db, 0.01, 10, { syncMs: 50 });
      const b = sharedLimiter(t.ctx.db, 0.01, 10, { syncMs: 50 });
      const key = newKey();
      try {
        assert.equal((await b.take(key, 0)).remaining, 10); // b has read the full bucket
        for (let i = 0; i < 7; i++) assert.ok((await a.take(key)).allowed);
        await sleep(200);
        const left = [];
        for (let i = 0; i < 4; i++) left.push((await b.take(key)).allowed);
        assert.deepEqual(left, [true, true, true, false]);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('what two processes grant beyond the budget before they learn of each other is debt, repaid before more is granted', async (tc) => {
      if (!t) return tc.skip('no PostgreSQL');
      const a = sharedLimiter(t.ctx.db, 2, 4, { syncMs: 50 });
      const b = sharedLimiter(t.ctx.db, 2, 4, { syncMs: 50 });
      const key = newKey();
      try {
        // Both read the full bucket, then grant from it within one period: 8 of a budget of 4.
        await Promise.all([a.take(key, 0), b.take(key, 0)]);
        for (let i = 0; i < 4; i++) assert.deepEqual([(await a.take(key)).allowed, (await b.take(key)).allowed], [true, true]);
        await sleep(200);
        const shared = (await sharedTokens(key))!;
        assert.ok(shared <= -3.5 && shared >= -4, `${shared} tokens`); // 4 over, less what refilled between the writes
        const refused = await a.take(key);
        assert.equal(refused.allowed, false);
        // The debt is repaid first: a token is 2 s or more away, not the half second of an empty bucket.
        assert.ok(refused.retryAfterSeconds >= 2, `retry after ${refused.retryAfterSeconds} s`);
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
      assert.ok((await a.take(key)).allowed);
      seen.failing = true;
      for (let i = 0; i < 2; i++) assert.ok((await a.take(key)).allowed); // decided in memory while the database is away
      await sleep(200); // writes fail meanwhile
      assert.equal(await sharedTokens(key), 10); // as first read, before anything was taken
      seen.failing = false;
      await sleep(200);
      assert.ok(Math.abs((await sharedTokens(key))! - 7) < 0.1);
      assert.ok((await a.take(other, 5)).allowed);
      await a.close(); // before its period: written by close
      assert.ok(Math.abs((await sharedTokens(other))! - 5) < 0.1);
    });

    it('a bucket idle here is read again before it decides, so a long-lived process sees what others took', async (tc) => {
      if (!t) return tc.skip('no PostgreSQL');
      const a = sharedLimiter(t.ctx.db, 0.01, 3, { syncMs: 30 });
      const b = sharedLimiter(t.ctx.db, 0.01, 3, { syncMs: 30 });
      const key = newKey();
      try {
        assert.ok((await a.take(key)).allowed);
        await sleep(100); // a's bucket is written and idle
        for (let i = 0; i < 2; i++) assert.ok((await b.take(key)).allowed);
        await b.close();
        assert.equal((await a.take(key)).allowed, false);
      } finally {
        await a.close();
      }
    });
  });
});

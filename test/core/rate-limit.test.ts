// Rate limits (a token bucket per credential, per client address where there is none) and 415 for
// every body type a JSON route does not take, on both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { memoryLimiter, takeFrom } from '../../src/http/rate-limit.ts';
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
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await get(a.app)).statusCode, (await get(b)).statusCode);
      assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
    } finally {
      await b.close();
      await closeContext(ctx);
      await a.close();
    }
  });
});

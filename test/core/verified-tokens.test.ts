// The verified-token cache (src/auth/verified-tokens.ts): a remembered verification never outlives the
// token's `exp`, a failure is never remembered, and a token one byte away from a cached one is checked.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { issueAccessToken, type TokenSettings } from '../../src/auth/tokens.ts';
import { VerifiedTokens } from '../../src/auth/verified-tokens.ts';
import { fakeClock, startTestApp, type TestApp } from '../helpers.ts';

const claims = { accountId: 'acct', subject: 'cl_x', clientId: 'cl_x', scopes: ['read:shipments'] };

describe('verified access tokens are remembered only while they are valid', () => {
  let t: TestApp;
  let settings: TokenSettings;
  before(async () => {
    t = await startTestApp();
    settings = { issuer: t.ctx.config.authBaseUrl, audience: t.ctx.config.baseUrl, ttlSeconds: 3600 };
  });
  after(async () => t.close());

  it('a valid token verifies, again from the cache, with the same principal', async () => {
    const cache = new VerifiedTokens(t.ctx.keys, settings);
    const { accessToken } = await issueAccessToken(t.ctx.keys, settings, claims);
    const first = await cache.verify(accessToken);
    const second = await cache.verify(accessToken);
    assert.equal(first.ok, true);
    assert.equal(second.ok, true);
    assert.equal(second.ok && second.principal.accountId, 'acct');
    assert.deepEqual(second.ok && [...second.principal.scopes], ['read:shipments']);
  });

  it('a token changed in one character of its signature is rejected after the genuine one was cached', async () => {
    const cache = new VerifiedTokens(t.ctx.keys, settings);
    const { accessToken } = await issueAccessToken(t.ctx.keys, settings, claims);
    assert.equal((await cache.verify(accessToken)).ok, true);
    const last = accessToken.at(-2) === 'A' ? 'B' : 'A';
    const tampered = `${accessToken.slice(0, -2)}${last}${accessToken.at(-1)}`;
    const check = await cache.verify(tampered);
    assert.equal(check.ok, false);
    assert.equal((await cache.verify(tampered)).ok, false);
  });

  it('a cached token is rejected once its exp has passed', async (tc) => {
    const clock = fakeClock(tc);
    const cache = new VerifiedTokens(t.ctx.keys, settings);
    const { accessToken } = await issueAccessToken(t.ctx.keys, { ...settings, ttlSeconds: 1 }, claims);
    assert.equal((await cache.verify(accessToken)).ok, true);
    clock.tick(2100);
    const check = await cache.verify(accessToken);
    assert.equal(check.ok, false);
    assert.equal(!check.ok && check.reason, 'the token has expired');
  });

  it('keeps at most the configured number of entries, and an evicted token still verifies', async () => {
    const cache = new VerifiedTokens(t.ctx.keys, settings, 2);
    const tokens = await Promise.all([1, 2, 3].map(() => issueAccessToken(t.ctx.keys, settings, claims)));
    for (const { accessToken } of tokens) assert.equal((await cache.verify(accessToken)).ok, true);
    assert.equal((await cache.verify(tokens[0]!.accessToken)).ok, true);
  });
});

// Contract §2: credentials on every /v1 route, bad and forged bearer tokens, scopes per route, tenants.
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SignJWT, decodeProtectedHeader, exportJWK, exportSPKI, generateKeyPair } from 'jose';
import { KeyRing, SIGNING_KEYS_FRESH_MS } from '../../src/auth/keyring.ts';
import { ALL_SCOPES } from '../../src/auth/scopes.ts';
import { API_KEY_CACHE_MS, rememberedApiKeys, revokeApiKey, revokeClient } from '../../src/auth/credentials.ts';
import { buildApp } from '../../src/app.ts';
import { createShipment, fakeClock, forEachDatabase, startTestApp, type TestApp, withTestApp } from '../helpers.ts';
import { accessToken, b64url, concreteUrl, openApiPath, routesOf, signWithServiceKey, tokenRequest, type AppRoute } from './support.ts';

function assertUnauthorized(res: { statusCode: number; headers: Record<string, unknown>; json(): any }, bearerError?: string): void {
  assert.equal(res.statusCode, 401);
  assert.equal(res.json().code, 'UNAUTHORIZED');
  assert.equal(typeof res.json().message, 'string');
  const challenge = String(res.headers['www-authenticate']);
  assert.match(challenge, /^Bearer realm="shipping"/);
  if (bearerError) assert.match(challenge, new RegExp(`error="${bearerError}"`));
  else assert.doesNotMatch(challenge, /error=/);
}

forEachDatabase((database) => {
  const t = withTestApp(database);

  describe('API keys (X-API-Key)', () => {
    it('no credentials: 401 UNAUTHORIZED with WWW-Authenticate: Bearer realm="shipping"', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/shipments' });
      assertUnauthorized(res);
      assert.deepEqual(Object.keys(res.json()).sort(), ['code', 'message']);
    });

    it('an unknown key, an empty key and a Basic header are 401', async () => {
      assertUnauthorized(await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': 'sk_test_doesnotexist0000000000000000' } }));
      assertUnauthorized(await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': `${t.apiKey}x` } }));
      assertUnauthorized(await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': '' } }));
      assertUnauthorized(await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `Basic ${b64url('a:b')}` } }));
    });

    it('a valid key answers, and keys carry the sk_test_ prefix outside production', async () => {
      assert.match(t.apiKey, /^sk_test_[0-9A-Za-z]{32}$/);
      const res = await t.request({ method: 'GET', url: '/v1/shipments' });
      assert.equal(res.statusCode, 200);
    });

    it('a key revoked with revokeApiKey is 401 from then on; the account\'s other keys keep working', async () => {
      const acct = await t.newAccount();
      const second = await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': acct.apiKey } });
      assert.equal(second.statusCode, 200);
      const { key: other } = await (await import('../../src/auth/credentials.ts')).createApiKey(t.ctx.db, acct.accountId, ALL_SCOPES, false);
      assert.deepEqual(await revokeApiKey(t.ctx.db, acct.apiKey.slice(0, 14)), { prefix: acct.apiKey.slice(0, 16), name: '' }, 'the key revoked, by its display prefix');
      assertUnauthorized(await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': acct.apiKey } }));
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': other } })).statusCode, 200);
      const row = await t.ctx.db.selectFrom('api_keys').select(['hash', 'prefix', 'revoked_at']).where('prefix', '=', acct.apiKey.slice(0, 16)).executeTakeFirstOrThrow();
      assert.notEqual(row.revoked_at, null);
      // Stored only as a SHA-256 hash and a display prefix.
      assert.match(row.hash, /^[0-9a-f]{64}$/);
      assert.equal(row.prefix.length < acct.apiKey.length, true);
    });

    it('a key revoked by another process (a change this process is not told about) is 401 within API_KEY_CACHE_MS', async (tc) => {
      const acct = await t.newAccount();
      const get = () => t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': acct.apiKey } });
      const clock = fakeClock(tc);
      assert.equal((await get()).statusCode, 200);
      // What `key revoke` in another process does: the row changes, this process's memory does not.
      await t.ctx.db.updateTable('api_keys').set({ revoked_at: new Date().toISOString() }).where('prefix', '=', acct.apiKey.slice(0, 16)).execute();
      clock.tick(API_KEY_CACHE_MS - 1);
      assert.equal((await get()).statusCode, 200, 'remembered until API_KEY_CACHE_MS has passed');
      clock.tick(2);
      assertUnauthorized(await get());
    });

    it('a checked key is held in memory no longer than API_KEY_CACHE_MS past its last use, with no request to drop it', async (tc) => {
      // An app of its own: the shared one remembers the keys of the tests before this one (on real timers).
      const own = await startTestApp(database);
      try {
        const clock = fakeClock(tc);
        assert.equal((await own.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': own.apiKey } })).statusCode, 200);
        assert.equal(rememberedApiKeys(own.ctx.db), 1);
        clock.tick(API_KEY_CACHE_MS - 10);
        assert.equal(rememberedApiKeys(own.ctx.db), 1);
        clock.tick(20);
        assert.equal(rememberedApiKeys(own.ctx.db), 0);
      } finally {
        await own.close();
      }
    });

    it('revoking needs an unambiguous prefix of at least 12 characters', async () => {
      await assert.rejects(revokeApiKey(t.ctx.db, 'sk_test_'), /at least the first 12/);
      await assert.rejects(revokeApiKey(t.ctx.db, 'sk_test_zzzzzzzzzz'), /not found/);
    });
  });

  describe('bearer tokens (Authorization: Bearer <JWT>)', () => {
    it('a token from the token endpoint works, case-insensitively on "Bearer"', async () => {
      const token = await accessToken(t, t.accountId);
      const res = await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.statusCode, 200);
      const lower = await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `bearer ${token}` } });
      assert.equal(lower.statusCode, 200);
    });

    it('after another process rotates the signing key (the admin command), new tokens carry it within SIGNING_KEYS_FRESH_MS; old ones still work', async (tc) => {
      const clock = fakeClock(tc);
      const before = await accessToken(t, t.accountId);
      const other = new KeyRing(t.ctx.db);
      await other.init();
      const kid = await other.rotate('access_token');
      clock.tick(SIGNING_KEYS_FRESH_MS + 100);
      const after = await accessToken(t, t.accountId);
      assert.equal(decodeProtectedHeader(after).kid, kid);
      assert.notEqual(decodeProtectedHeader(before).kid, kid);
      for (const token of [before, after]) {
        assert.equal((await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `Bearer ${token}` } })).statusCode, 200);
      }
    });

    it('revoking a client ends the client-credentials tokens it holds at once; another client\'s keep working', async () => {
      const mine = await t.newClient(t.accountId);
      const token = (await tokenRequest(t, { grant_type: 'client_credentials', client_id: mine.clientId, client_secret: mine.clientSecret })).json().access_token;
      const other = await accessToken(t, t.accountId);
      const get = (bearer: string) => t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `Bearer ${bearer}` } });
      assert.equal((await get(token)).statusCode, 200);
      await revokeClient(t.ctx.db, mine.clientId);
      const refused = await get(token);
      assertUnauthorized(refused, 'invalid_token');
      assert.match(refused.json().message, /client was revoked/);
      assert.equal((await get(other)).statusCode, 200);
    });

    it('a client revoked by another process (the admin command) has its tokens refused within API_KEY_CACHE_MS', async (tc) => {
      const mine = await t.newClient(t.accountId);
      const token = (await tokenRequest(t, { grant_type: 'client_credentials', client_id: mine.clientId, client_secret: mine.clientSecret })).json().access_token;
      const get = () => t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `Bearer ${token}` } });
      const clock = fakeClock(tc);
      assert.equal((await get()).statusCode, 200);
      // What `client revoke` in another process does: the row changes, this process's memory does not.
      await t.ctx.db.updateTable('oauth_clients').set({ revoked_at: new Date().toISOString() }).where('client_id', '=', mine.clientId).execute();
      clock.tick(API_KEY_CACHE_MS - 1);
      assert.equal((await get()).statusCode, 200, 'remembered until API_KEY_CACHE_MS has passed');
      clock.tick(2);
      assertUnauthorized(await get(), 'invalid_token');
    });

    it('a key and a bearer token together are 401, whichever of them is bad, and change nothing', async () => {
      const token = await accessToken(t, t.accountId);
      const before = (await t.request({ method: 'GET', url: '/v1/shipments' })).json().length;
      const pairs = [
        { 'x-api-key': t.apiKey, authorization: `Bearer ${token}` },
        { 'x-api-key': t.apiKey, authorization: 'Bearer garbage' },
        { 'x-api-key': 'sk_test_doesnotexist0000000000000000', authorization: `bearer ${token}` },
      ];
      for (const headers of pairs) {
        assertUnauthorized(await t.app.inject({ method: 'GET', url: '/v1/shipments', headers }));
        const res = await t.app.inject({ method: 'POST', url: '/v1/shipments', headers, payload: {} });
        assertUnauthorized(res);
        assert.match(res.json().message, /not both/);
      }
      assert.equal((await t.request({ method: 'GET', url: '/v1/shipments' })).json().length, before);
    });

    it('a token forged here with the service key and the service\'s claims is accepted (the baseline for the cases below)', async () => {
      const token = await signWithServiceKey(t, t.accountId);
      const res = await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.statusCode, 200, res.body);
    });

    const now = () => Math.floor(Date.now() / 1000);
    const bad: [string, (t: TestApp) => Promise<string>][] = [
      ['expired (exp in the past, signed with the service key)', (t) => signWithServiceKey(t, t.accountId, { iat: now() - 7200, exp: now() - 3600 })],
      ['from another issuer', (t) => signWithServiceKey(t, t.accountId, { iss: 'https://evil.example' })],
      ['for another audience', (t) => signWithServiceKey(t, t.accountId, { aud: 'https://other.example/v1' })],
      ['without an account', (t) => signWithServiceKey(t, t.accountId, { account_id: undefined })],
      ['without a client', (t) => signWithServiceKey(t, t.accountId, { client_id: undefined })],
      ['of a client that does not exist', (t) => signWithServiceKey(t, t.accountId, { client_id: 'cl_nobody', sub: 'cl_nobody' })],
      ['of another type (typ JWT, e.g. an ID token)', (t) => signWithServiceKey(t, t.accountId, {}, { typ: 'JWT' })],
      [
        'with a tampered payload (more scopes, same signature)',
        async (t) => {
          const [h, p, s] = (await signWithServiceKey(t, t.accountId, { scope: 'read:shipments' })).split('.');
          const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
          payload.scope = ALL_SCOPES.join(' ');
          return `${h}.${b64url(JSON.stringify(payload))}.${s}`;
        },
      ],
      [
        'with a tampered signature',
        async (t) => {
          const [h, p, s] = (await signWithServiceKey(t, t.accountId)).split('.');
          const sig = Buffer.from(s!, 'base64url');
          sig[0]! ^= 0x01;
          return `${h}.${p}.${b64url(sig)}`;
        },
      ],
      [
        'with alg "none"',
        async (t) => {
          const { kid } = await t.ctx.keys.signingKey('access_token');
          const good = (await signWithServiceKey(t, t.accountId)).split('.')[1];
          return `${b64url(JSON.stringify({ alg: 'none', kid, typ: 'at+jwt' }))}.${good}.`;
        },
      ],
      [
        'HS256-signed with the public key (PEM) as the HMAC secret',
        async (t) => {
          const { kid } = await t.ctx.keys.signingKey('access_token');
          const jwk = t.ctx.keys.jwks().keys.find((k) => k.kid === kid)!;
          const { importJWK } = await import('jose');
          const pem = await exportSPKI((await importJWK(jwk, 'ES256', { extractable: true })) as CryptoKey);
          const claims = JSON.parse(Buffer.from((await signWithServiceKey(t, t.accountId)).split('.')[1]!, 'base64url').toString());
          return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid, typ: 'at+jwt' }).sign(new TextEncoder().encode(pem));
        },
      ],
      [
        'HS256-signed with the public JWK (as published) as the HMAC secret',
        async (t) => {
          const { kid } = await t.ctx.keys.signingKey('access_token');
          const jwk = t.ctx.keys.jwks().keys.find((k) => k.kid === kid)!;
          const claims = JSON.parse(Buffer.from((await signWithServiceKey(t, t.accountId)).split('.')[1]!, 'base64url').toString());
          return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid, typ: 'at+jwt' }).sign(new TextEncoder().encode(JSON.stringify(jwk)));
        },
      ],
      [
        'signed by a foreign ES256 key that claims the service\'s kid',
        async (t) => {
          const { kid } = await t.ctx.keys.signingKey('access_token');
          const { privateKey } = await generateKeyPair('ES256');
          const claims = JSON.parse(Buffer.from((await signWithServiceKey(t, t.accountId)).split('.')[1]!, 'base64url').toString());
          return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' }).sign(privateKey);
        },
      ],
      [
        'signed by a foreign key with an embedded jwk header',
        async (t) => {
          const { privateKey, publicKey } = await generateKeyPair('ES256');
          const claims = JSON.parse(Buffer.from((await signWithServiceKey(t, t.accountId)).split('.')[1]!, 'base64url').toString());
          return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', jwk: await exportJWK(publicKey) }).sign(privateKey);
        },
      ],
      ['with an unknown kid', (t) => signWithServiceKey(t, t.accountId, {}, { kid: '00000000-0000-7000-8000-000000000000' })],
      [
        'signed with the service\'s stamp key instead of its access-token key',
        async (t) => {
          const { kid, privateKey } = await t.ctx.keys.signingKey('stamp');
          const claims = JSON.parse(Buffer.from((await signWithServiceKey(t, t.accountId)).split('.')[1]!, 'base64url').toString());
          return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt' }).sign(privateKey);
        },
      ],
      ['that is not a JWT at all', async () => 'not-a-jwt'],
      ['that is an API key sent as a bearer token', async (t) => t.apiKey],
    ];
    for (const [name, make] of bad) {
      it(`a token ${name}: 401 with error="invalid_token"`, async () => {
        const token = await make(t);
        const res = await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `Bearer ${token}` } });
        assertUnauthorized(res, 'invalid_token');
      });
    }
  });

  describe('scopes, for every route that declares one', () => {
    let doc: Record<string, any>;
    let routes: AppRoute[];
    before(async () => {
      doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
      routes = routesOf(t.app);
    });

    /** The route's declared scope: `undefined` for public routes, `null` for "any credential". */
    function declaredScope(route: AppRoute): string | null | undefined {
      const op = doc.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
      if (!op) return undefined; // hidden routes (the document and the reference page) are public
      assert.ok(Array.isArray(op.security), `${route.method} ${route.url} must declare public or a scope`);
      if (op.security.length === 0) return undefined;
      return op.security.find((s: Record<string, string[]>) => s.oauth2)?.oauth2?.[0] ?? null;
    }

    it('finds the routes (sanity check of the enumeration)', () => {
      const names = routes.map((r) => `${r.method} ${r.url}`);
      for (const expected of ['POST /v1/shipments', 'GET /v1/shipments', 'GET /v1/shipments/:id', 'GET /v1/health', 'POST /oauth/token']) assert.ok(names.includes(expected), `${expected} in ${names.join(', ')}`);
      assert.equal(declaredScope({ method: 'POST', url: '/v1/shipments' }), 'write:shipments');
      assert.equal(declaredScope({ method: 'GET', url: '/v1/shipments/:id' }), 'read:shipments');
    });

    it('every /v1 route that is not public answers 401 without credentials', async () => {
      for (const route of routes) {
        if (declaredScope(route) === undefined) continue;
        const res = await t.app.inject({ method: route.method as 'GET', url: concreteUrl(route.url) });
        assert.equal(res.statusCode, 401, `${route.method} ${route.url}`);
        assertUnauthorized(res);
      }
    });

    it('public routes answer without credentials', async () => {
      for (const route of routes) {
        if (declaredScope(route) !== undefined || route.method !== 'GET') continue;
        const res = await t.app.inject({ method: 'GET', url: concreteUrl(route.url) });
        assert.notEqual(res.statusCode, 401, `${route.method} ${route.url}`);
      }
    });

    it('a key holding every scope but the route\'s own gets 403 FORBIDDEN naming it, with an insufficient_scope challenge', async () => {
      let checked = 0;
      for (const route of routes) {
        const scope = declaredScope(route);
        if (!scope) continue;
        assert.ok((ALL_SCOPES as readonly string[]).includes(scope), `${route.method} ${route.url} declares unknown scope ${scope}`);
        const others = await t.newAccount(ALL_SCOPES.filter((s) => s !== scope));
        const res = await t.app.inject({ method: route.method as 'GET', url: concreteUrl(route.url), headers: { 'x-api-key': others.apiKey } });
        const where = `${route.method} ${route.url}`;
        assert.equal(res.statusCode, 403, where);
        assert.equal(res.json().code, 'FORBIDDEN', where);
        assert.ok(res.json().message.includes(scope), `${where}: "${res.json().message}" names ${scope}`);
        assert.equal(res.headers['www-authenticate'], `Bearer realm="shipping", error="insufficient_scope", scope="${scope}"`, where);
        checked++;
      }
      assert.ok(checked >= 3);
    });

    it('a bearer token without the route\'s scope gets the same 403', async () => {
      for (const route of routes) {
        const scope = declaredScope(route);
        if (!scope) continue;
        const token = await accessToken(t, t.accountId, ALL_SCOPES.filter((s) => s !== scope));
        const res = await t.app.inject({ method: route.method as 'GET', url: concreteUrl(route.url), headers: { authorization: `Bearer ${token}` } });
        assert.equal(res.statusCode, 403, `${route.method} ${route.url}`);
        assert.match(String(res.headers['www-authenticate']), new RegExp(`error="insufficient_scope", scope="${scope}"`));
      }
    });

    it('a key holding only the route\'s scope gets past authorization', async () => {
      for (const route of routes) {
        const scope = declaredScope(route);
        if (scope === undefined) continue;
        const only = await t.newAccount(scope ? [scope as (typeof ALL_SCOPES)[number]] : []);
        const res = await t.app.inject({ method: route.method as 'GET', url: concreteUrl(route.url), headers: { 'x-api-key': only.apiKey } });
        const where = `${route.method} ${route.url}: ${res.statusCode} ${res.body}`;
        assert.notEqual(res.statusCode, 401, where);
        assert.doesNotMatch(String(res.headers['www-authenticate'] ?? ''), /insufficient_scope/, where);
      }
    });

    it('a token asked for with the resource:action alias (shipments:read) reads but cannot write', async () => {
      const token = await accessToken(t, t.accountId, undefined, 'shipments:read');
      const read = await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `Bearer ${token}` } });
      assert.equal(read.statusCode, 200);
      const write = await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { authorization: `Bearer ${token}` }, payload: {} });
      assert.equal(write.statusCode, 403);
      assert.equal(write.headers['www-authenticate'], 'Bearer realm="shipping", error="insufficient_scope", scope="write:shipments"');
    });
  });

  describe('tenant isolation', () => {
    it('another account\'s shipment is 404 exactly like an unknown id, by key and by token, and is not listed', async () => {
      const mine = await createShipment(t);
      const other = await t.newAccount();
      const otherToken = await accessToken(t, other.accountId);
      const unknownId = '01890000-0000-7000-8000-000000000000';
      const unknown = await t.app.inject({ method: 'GET', url: `/v1/shipments/${unknownId}`, headers: { 'x-api-key': other.apiKey } });
      assert.equal(unknown.statusCode, 404);
      for (const headers of [{ 'x-api-key': other.apiKey }, { authorization: `Bearer ${otherToken}` }]) {
        const res = await t.app.inject({ method: 'GET', url: `/v1/shipments/${mine.id}`, headers });
        assert.equal(res.statusCode, 404);
        assert.deepEqual(res.json(), { code: 'NOT_FOUND', message: `shipment ${mine.id} not found` });
        assert.deepEqual(Object.keys(res.headers).sort().filter((h) => h !== 'x-request-id' && h !== 'date'), Object.keys(unknown.headers).sort().filter((h) => h !== 'x-request-id' && h !== 'date'));
        const list = await t.app.inject({ method: 'GET', url: '/v1/shipments?limit=100', headers });
        assert.equal(list.statusCode, 200);
        assert.deepEqual(list.json(), []);
      }
      const forged = await signWithServiceKey(t, other.accountId, { scope: 'read:shipments' });
      const viaForged = await t.app.inject({ method: 'GET', url: `/v1/shipments/${mine.id}`, headers: { authorization: `Bearer ${forged}` } });
      assert.equal(viaForged.statusCode, 404);
    });
  });
});

describe('fail closed', () => {
  it('a route that declares neither public nor a scope still needs credentials; unknown routes are 404', async () => {
    const t = await startTestApp();
    const app = await buildApp(t.ctx);
    try {
      app.get('/v1/forgot-its-scope', async () => ({ secret: true }));
      await app.ready();
      assertUnauthorized(await app.inject({ method: 'GET', url: '/v1/forgot-its-scope' }));
      const withKey = await app.inject({ method: 'GET', url: '/v1/forgot-its-scope', headers: { 'x-api-key': t.apiKey } });
      assert.equal(withKey.statusCode, 200);
      const unknown = await app.inject({ method: 'GET', url: '/v1/no-such-route' });
      assert.equal(unknown.statusCode, 404);
      assert.deepEqual(unknown.json(), { code: 'NOT_FOUND', message: 'route GET /v1/no-such-route not found' });
    } finally {
      await app.close();
      await t.close();
    }
  });
});

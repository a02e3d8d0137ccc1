// What a security probe from outside found, each fixed and pinned here on both databases: slow bodies
// are cut at REQUEST_TIMEOUT_MS, MAX_CONNECTIONS caps a process, TRUST_PROXY makes the forwarded client
// the one the sign-in limits count.
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { countRows, createShipment, forEachDatabase, sampleShipment, startTestApp, type TestApp, withTestApp } from '../helpers.ts';
import { hasLowS } from '../../src/auth/ecdsa.ts';
import { issueAccessToken, tokenSettings } from '../../src/auth/tokens.ts';
import { authorize, authorizeQuery, exchangeCode, hiddenField, openAuthorize, PASSWORD, pkce, postForm, setupOAuth, signIn, tokenRequest, type OAuthSetup } from '../oauth/flow.ts';
import { disableUser } from '../../src/oauth/users.ts';
import { MAX_REQUESTS_PER_ADDRESS_PER_MINUTE, purgeAuthorizationState, revokeGrants } from '../../src/oauth/authorize.ts';
import { freePort, signWithServiceKey } from './support.ts';
import { checkRedirectUri, revokeClient } from '../../src/auth/credentials.ts';

/** Everything the server sends on a socket until it closes it (or `ms` pass). */
function collect(socket: Socket, ms: number): Promise<{ data: string; closed: boolean; after: number }> {
  const start = Date.now();
  return new Promise((resolve) => {
    let data = '';
    socket.on('data', (c) => {
      data += c.toString('latin1');
    });
    const timer = setTimeout(() => resolve({ data, closed: false, after: Date.now() - start }), ms);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ data, closed: true, after: Date.now() - start });
    });
    socket.on('error', () => {});
  });
}

/** The JSON body of a raw HTTP answer. */
function bodyOf(answer: string): unknown {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
}

async function open(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return socket;
}

forEachDatabase((database) => {
  describe('slow clients and too many connections', () => {
    let t: TestApp;
    let port: number;
    before(async () => {
      port = await freePort();
      t = await startTestApp(database, { REQUEST_TIMEOUT_MS: '600', MAX_CONNECTIONS: '3', PORT: String(port) });
      await t.app.listen({ host: '127.0.0.1', port });
    });
    after(async () => t.close());

    it('a body trickled byte by byte to the public token endpoint is answered 408 and cut within the timeout', async () => {
      const socket = await open(port);
      socket.write('POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n');
      const trickle = setInterval(() => socket.writable && socket.write('a'), 50);
      const result = await collect(socket, 5000);
      clearInterval(trickle);
      assert.ok(result.closed, 'the connection was closed');
      assert.match(result.data, /^HTTP\/1\.1 408/);
      assert.ok(result.after < 2600, `cut after ${result.after} ms`);
      assert.deepEqual(bodyOf(result.data), { code: 'INVALID_INPUT', message: 'the request did not arrive in time (REQUEST_TIMEOUT_MS); the connection is closed' });
    });

    it('a body that stops arriving on an authenticated route is answered 408, not cut unanswered', async () => {
      const socket = await open(port);
      socket.write(`POST /v1/shipments HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
      const result = await collect(socket, 5000);
      assert.ok(result.closed, 'the connection was closed');
      assert.match(result.data, /^HTTP\/1\.1 408/);
      assert.deepEqual(bodyOf(result.data), { code: 'INVALID_INPUT', message: 'the request did not arrive in time (REQUEST_TIMEOUT_MS); the connection is closed' });
    });

    it('two Idempotency-Key lines (which Node joins with ", ") are 400, not one key', async () => {
      const socket = await open(port);
      const body = JSON.stringify(sampleShipment);
      socket.write(`POST /v1/shipments HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.apiKey}\r\nIdempotency-Key: k1\r\nIdempotency-Key: k2\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      const result = await collect(socket, 5000);
      assert.match(result.data, /^HTTP\/1\.1 400/);
      assert.match(result.data, /one Idempotency-Key/);
    });

    // §9: every error body is {code, message}, also for what Node's HTTP parser refuses before routing.
    const refusals: [string, string, number, string][] = [
      ['a Content-Length that is no number', 'GET /v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400, 'the request is not valid HTTP/1.1'],
      ['both Transfer-Encoding and Content-Length', 'POST /v1/shipments HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400, 'the request is not valid HTTP/1.1'],
      ['headers over 16 KiB', `GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat(17_000)}\r\n\r\n`, 431, "the request's headers are larger than 16 KiB"],
    ];
    for (const [name, raw, status, message] of refusals) {
      it(`${name}: ${status} in the contract's shape, and the connection closed`, async () => {
        const socket = await open(port);
        socket.write(raw);
        const result = await collect(socket, 3000);
        assert.ok(result.closed, 'the connection was closed');
        assert.match(result.data, new RegExp(`^HTTP/1\\.1 ${status} `));
        assert.match(result.data, /\r\nContent-Type: application\/json; charset=utf-8\r\n/i);
        assert.deepEqual(bodyOf(result.data), { code: 'INVALID_INPUT', message });
      });
    }

    it(`refuses connections beyond MAX_CONNECTIONS and takes new ones once some close`, async () => {
      const held = [await open(port), await open(port), await open(port)];
      const extra = await open(port).catch(() => null);
      if (extra) {
        const result = await collect(extra, 2000);
        assert.ok(result.closed && result.data === '', 'the connection beyond the cap is closed unanswered');
      }
      for (const s of held) s.destroy();
      await new Promise((r) => setTimeout(r, 100));
      const res = await fetch(`http://127.0.0.1:${port}/v1/health`);
      assert.equal(res.status, 200);
    });
  });

  describe('TRUST_PROXY', () => {
    const PROXY = '10.9.0.1';
    let trusting: TestApp;
    let plain: TestApp;
    let setupTrusting: OAuthSetup;
    before(async () => {
      trusting = await startTestApp(database, { TRUST_PROXY: PROXY });
      plain = await startTestApp(database);
      setupTrusting = await setupOAuth(trusting);
    });
    after(async () => {
      await trusting.close();
      await plain.close();
    });

    /** The address a failed sign-in is counted against, for a request from `peer` forwarding for `forwarded`. */
    const countedAddress = async (t: TestApp, setup: OAuthSetup, peer: string, forwarded: string): Promise<string> => {
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      const email = `probe-${Math.random().toString(36).slice(2)}@example.com`;
      const res = await t.app.inject({
        method: 'POST',
        url: '/oauth/authorize/sign-in',
        remoteAddress: peer,
        headers: { 'x-forwarded-for': forwarded, cookie: b.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ request: b.request, csrf_token: b.csrf, email, password: 'wrong' }).toString(),
      });
      assert.equal(res.statusCode, 400);
      const failures = await t.ctx.db.selectFrom('signin_failures').select('key').orderBy('id', 'desc').limit(2).execute();
      return failures.map((f) => f.key).find((k) => k.startsWith('ip:'))!.slice(3);
    };

    it('believes X-Forwarded-For from the listed proxy only; without the setting the peer is the client', async () => {
      assert.equal(await countedAddress(trusting, setupTrusting, PROXY, '203.0.113.5'), '203.0.113.5');
      assert.equal(await countedAddress(plain, await setupOAuth(plain), PROXY, '203.0.113.5'), PROXY);
      assert.equal(await countedAddress(trusting, setupTrusting, '198.51.100.7', '203.0.113.5'), '198.51.100.7', 'a header from a peer that is not the proxy is ignored');
    });

    it('failures from one forwarded client leave another alone', async () => {
      const b = await openAuthorize(trusting, authorizeQuery(setupTrusting, pkce().challenge));
      const from = (client: string) => ({ remoteAddress: PROXY, headers: { 'x-forwarded-for': client } });
      const attempt = (email: string, password: string, client: string) =>
        trusting.app.inject({
          method: 'POST',
          url: '/oauth/authorize/sign-in',
          ...from(client),
          headers: { ...from(client).headers, cookie: b.cookie, 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ request: b.request, csrf_token: b.csrf, email, password }).toString(),
        });
      for (let i = 0; i < 20; i++) assert.equal((await attempt(`spray${i}@example.com`, 'guess', '203.0.113.50')).statusCode, 400);
      assert.equal((await attempt('spray0@example.com', 'guess again', '203.0.113.50')).statusCode, 429);
      // Another client behind the same proxy is not limited by the first one's failures.
      assert.equal((await attempt('spray0@example.com', 'guess again', '203.0.113.60')).statusCode, 400);
      const rows = await trusting.ctx.db.selectFrom('signin_failures').select('key').where('key', 'like', 'ip:%').execute();
      assert.ok(rows.every((r) => r.key !== `ip:${PROXY}`), 'nothing is counted against the proxy itself');
    });
  });
});

forEachDatabase((database) => {
  describe('token lifetimes and retired keys', () => {
    const t = withTestApp(database);
    const get = (token: string) => t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `Bearer ${token}` } });

    it('a token that lives longer than ACCESS_TOKEN_TTL is refused, even signed with the service key', async () => {
      const now = Math.floor(Date.now() / 1000);
      const ttl = t.ctx.config.accessTokenTtlSeconds;
      assert.equal((await get(await signWithServiceKey(t, t.accountId, { iat: now, exp: now + ttl }))).statusCode, 200);
      const long = await get(await signWithServiceKey(t, t.accountId, { iat: now, exp: now + ttl + 1 }));
      assert.equal(long.statusCode, 401);
      assert.match(String(long.headers['www-authenticate']), /invalid_token/);
    });

    it('a retired access-token key verifies only while a token it signed could still be valid', async () => {
      // Two tokens of the old key; the second is first shown after the window (nothing remembers it).
      const [early, late] = [await signWithServiceKey(t, t.accountId), await signWithServiceKey(t, t.accountId)];
      await t.ctx.keys.rotate('access_token');
      assert.equal((await get(early)).statusCode, 200, 'just retired: its tokens are still valid');
      const longAgo = new Date(Date.now() - (t.ctx.config.accessTokenTtlSeconds + 5) * 1000).toISOString();
      await t.ctx.db.updateTable('signing_keys').set({ retired_at: longAgo }).where('purpose', '=', 'access_token').where('retired_at', 'is not', null).execute();
      await t.ctx.keys.reload();
      assert.equal((await get(late)).statusCode, 401);
    });
  });
});

describe('redirect URIs at registration', () => {
  it('https anywhere, http to loopback only (any host in development), no other scheme, fragment or credentials', () => {
    for (const ok of ['https://app.example/cb', 'http://127.0.0.1:8123/cb', 'http://[::1]/cb', 'http://localhost:3000/cb']) assert.doesNotThrow(() => checkRedirectUri(ok, false), ok);
    for (const bad of ['javascript:alert(1)', 'data:text/html,<script>', 'ftp://app.example/cb', 'com.example.app:/cb', 'http://app.example/cb', 'https://app.example/cb#x', 'https://u:p@app.example/cb', 'not a url']) {
      assert.throws(() => checkRedirectUri(bad, false), /redirect URI/, bad);
    }
    assert.doesNotThrow(() => checkRedirectUri('http://app.example/cb', true));
    assert.throws(() => checkRedirectUri('javascript:alert(1)', true), /redirect URI/);
  });
});

describe('headers of API answers', () => {
  const t = withTestApp();
  it('JSON answers are no-store and nosniff; downloads keep their own caching; /v1/docs may not be framed', async () => {
    for (const url of ['/v1/shipments', '/v1/health', '/v1/shipments/01936f5e-8a2b-7c3d-9e4f-5a6b7c8d9e0f']) {
      const res = await t.request({ method: 'GET', url });
      assert.equal(res.headers['cache-control'], 'no-store', url);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
    }
    const docs = await t.app.inject({ method: 'GET', url: '/v1/docs' });
    assert.match(String(docs.headers['content-security-policy']), /frame-ancestors 'none'/);
  });
});

forEachDatabase((database) => {
  describe('NUL in every OAuth parameter', () => {
    const t = withTestApp(database);
    it('is 4xx on the authorization page, the sign-in and consent forms and the token endpoint, and stores nothing', async () => {
      const setup = await setupOAuth(t);
      const before = Number((await t.ctx.db.selectFrom('oauth_authorization_requests').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      for (const name of ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method']) {
        const query = authorizeQuery(setup, pkce().challenge, { [name]: `x\u0000y` });
        const res = await t.app.inject({ method: 'GET', url: `/oauth/authorize?${query}` });
        assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${name}: ${res.statusCode}`);
      }
      const after = Number((await t.ctx.db.selectFrom('oauth_authorization_requests').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      assert.equal(after, before);
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      for (const [url, fields] of [
        ['/oauth/authorize/sign-in', { request: b.request, csrf_token: b.csrf, email: 'a\u0000@example.com', password: 'x' }],
        ['/oauth/authorize/sign-in', { request: b.request, csrf_token: b.csrf, email: setup.email, password: 'pass\u0000word' }],
        ['/oauth/authorize/consent', { request: b.request, csrf_token: b.csrf, decision: 'approve\u0000' }],
      ] as const) {
        const res = await postForm(t, url, fields, b.cookie);
        assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${url} ${JSON.stringify(fields)}: ${res.statusCode}`);
      }
      for (const name of ['grant_type', 'client_id', 'client_secret', 'scope', 'code', 'redirect_uri', 'code_verifier', 'refresh_token']) {
        const fields: Record<string, string> = { grant_type: 'client_credentials', client_id: setup.clientId, client_secret: setup.clientSecret, [name]: 'x\u0000y' };
        const res = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString() });
        assert.equal(res.statusCode, 400, `${name}: ${res.body}`);
        assert.equal(res.json().error, 'invalid_request');
      }
    });
  });
});

forEachDatabase((database) => {
  describe('disabling a user and revoking a client end their grants', () => {
    const t = withTestApp(database);
    const refresh = (setup: OAuthSetup, refreshToken: string) => tokenRequest(t, setup, { grant_type: 'refresh_token', refresh_token: refreshToken });

    it('a disabled user cannot sign in, and the refresh tokens of the grants they gave stop working', async () => {
      const setup = await setupOAuth(t);
      const { code, verifier } = await authorize(t, setup);
      const tokens = (await exchangeCode(t, setup, code, verifier)).json();
      assert.ok(tokens.refresh_token);
      const userId = await disableUser(t.ctx.db, setup.email);
      assert.equal(await revokeGrants(t.ctx, { userId }, 'user disabled'), 1);
      assert.equal((await refresh(setup, tokens.refresh_token)).statusCode, 400);
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      assert.equal((await postForm(t, '/oauth/authorize/sign-in', { request: b.request, csrf_token: b.csrf, email: setup.email, password: PASSWORD }, b.cookie)).statusCode, 400);
    });

    const enableUser = (app: typeof t, email: string) => app.ctx.db.updateTable('users').set({ disabled_at: null }).where('email', '=', email.toLowerCase()).execute();

    it('a user disabled on the consent page allows nothing: an error page, no code; Deny still goes back to the client', async () => {
      const setup = await setupOAuth(t);
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      const consent = await signIn(t, b, setup.email, PASSWORD);
      assert.equal(consent.statusCode, 200);
      await disableUser(t.ctx.db, setup.email);
      const codes = await countRows(t.ctx, 'oauth_authorization_codes');
      const res = await postForm(t, '/oauth/authorize/consent', { request: b.request, csrf_token: hiddenField(consent.body, 'csrf_token'), decision: 'approve' }, b.cookie);
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.headers.location, undefined);
      assert.match(res.body, /User disabled/);
      assert.equal(await countRows(t.ctx, 'oauth_authorization_codes'), codes);
      // Deny still goes back to the client, so its flow ends.
      const b2 = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      await enableUser(t, setup.email);
      const consent2 = await signIn(t, b2, setup.email, PASSWORD);
      await disableUser(t.ctx.db, setup.email);
      const denied = await postForm(t, '/oauth/authorize/consent', { request: b2.request, csrf_token: hiddenField(consent2.body, 'csrf_token'), decision: 'deny' }, b2.cookie);
      assert.equal(denied.statusCode, 303, denied.body);
      assert.equal(new URL(String(denied.headers.location)).searchParams.get('error'), 'access_denied');
    });

    it('a code whose user was disabled after consenting is refused at the token endpoint, whether or not the grant was ended', async () => {
      for (const endGrants of [true, false]) {
        const setup = await setupOAuth(t);
        const { code, verifier } = await authorize(t, setup);
        const userId = await disableUser(t.ctx.db, setup.email);
        // Without ending the grants: a code made in the moment between disabling and ending them.
        if (endGrants) assert.equal(await revokeGrants(t.ctx, { userId }, 'user disabled'), 1);
        const res = await exchangeCode(t, setup, code, verifier);
        assert.equal(res.statusCode, 400, res.body);
        assert.deepEqual([res.json().error, res.json().error_description], ['invalid_grant', 'the grant of this authorization code has been revoked']);
      }
    });

    it('a refresh token of a disabled user is refused even where the grant was not ended', async () => {
      const setup = await setupOAuth(t);
      const { code, verifier } = await authorize(t, setup);
      const tokens = (await exchangeCode(t, setup, code, verifier)).json();
      await disableUser(t.ctx.db, setup.email);
      const res = await refresh(setup, tokens.refresh_token);
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error, 'invalid_grant');
    });

    it('a revoked client gets no token, and its grants end', async () => {
      const setup = await setupOAuth(t);
      const { code, verifier } = await authorize(t, setup);
      const tokens = (await exchangeCode(t, setup, code, verifier)).json();
      await revokeClient(t.ctx.db, setup.clientId);
      assert.equal(await revokeGrants(t.ctx, { clientId: setup.clientId }, 'client revoked'), 1);
      assert.equal((await refresh(setup, tokens.refresh_token)).statusCode, 401);
      const access = await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `Bearer ${tokens.access_token}` } });
      assert.equal(access.statusCode, 401, 'the code-flow access token of an ended grant is refused');
    });
  });
});

forEachDatabase((database) => {
  describe('anonymous authorization pages', () => {
    const t = withTestApp(database);
    it(`one address opens at most ${MAX_REQUESTS_PER_ADDRESS_PER_MINUTE} a minute; the next is 429 and writes nothing; expired ones go at the next clean-up`, async () => {
      const setup = await setupOAuth(t);
      const count = async () => Number((await t.ctx.db.selectFrom('oauth_authorization_requests').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
      const open = (address: string) => t.app.inject({ method: 'GET', url: `/oauth/authorize?${authorizeQuery(setup, pkce().challenge)}`, remoteAddress: address });
      const before = await count();
      for (let i = 0; i < MAX_REQUESTS_PER_ADDRESS_PER_MINUTE; i++) assert.equal((await open('10.7.0.1')).statusCode, 200);
      const refused = await open('10.7.0.1');
      assert.equal(refused.statusCode, 429);
      assert.equal(await count(), before + MAX_REQUESTS_PER_ADDRESS_PER_MINUTE);
      assert.equal((await open('10.7.0.2')).statusCode, 200, 'another address is not affected');
      // Expired requests are deleted at the next clean-up, not an hour later.
      await t.ctx.db.updateTable('oauth_authorization_requests').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).execute();
      await purgeAuthorizationState(t.ctx);
      assert.equal(await count(), 0);
    });
  });
});

/** The other valid form of an ES256 JWS signature: (r, n − s). */
function highS(jws: string): string {
  const n = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
  const dot = jws.lastIndexOf('.');
  const sig = Buffer.from(jws.slice(dot + 1), 'base64url');
  const s = BigInt(`0x${sig.subarray(32).toString('hex')}`);
  const flipped = Buffer.concat([sig.subarray(0, 32), Buffer.from((n - s).toString(16).padStart(64, '0'), 'hex')]);
  return `${jws.slice(0, dot)}.${flipped.toString('base64url')}`;
}

forEachDatabase((database) => {
  describe('ECDSA signatures in one form only (low S)', () => {
    const t = withTestApp(database);
    it('tokens and indicia the service issues are low-S; their high-S twins are refused', async () => {
      const { clientId } = await t.newClient(t.accountId);
      const { accessToken } = await issueAccessToken(t.ctx.keys, tokenSettings(t.ctx), { accountId: t.accountId, subject: clientId, clientId, scopes: ['read:shipments'] });
      assert.ok(hasLowS(accessToken));
      const twin = highS(accessToken);
      assert.notEqual(twin, accessToken);
      const get = (token: string) => t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `Bearer ${token}` } });
      assert.equal((await get(twin)).statusCode, 401);
      // Another base64url spelling of the same signature bytes (a changed unused low bit) is refused too.
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const last = accessToken.at(-1)!;
      const respelled = `${accessToken.slice(0, -1)}${alphabet[alphabet.indexOf(last) ^ 1]}`;
      const sig = (tok: string) => Buffer.from(tok.slice(tok.lastIndexOf('.') + 1), 'base64url');
      assert.deepEqual(sig(respelled), sig(accessToken));
      assert.equal((await get(respelled)).statusCode, 401);
      assert.equal((await get(accessToken)).statusCode, 200);

      const shipment = await createShipment(t);
      const stamp = (await t.request({ method: 'POST', url: '/v1/stamps', payload: { shipmentId: shipment.id } })).json();
      assert.ok(hasLowS(stamp.indicium));
      const verify = (indicium: string) => t.request({ method: 'POST', url: '/v1/stamps/verify', payload: { indicium } });
      assert.equal((await verify(stamp.indicium)).json().genuine, true);
      assert.equal((await verify(highS(stamp.indicium))).json().genuine, false);
    });
  });
});

describe('downloads', () => {
  const t = withTestApp();
  it('label and stamp downloads carry the same locked-down headers (CSP, nosniff)', async () => {
    const shipment = await createShipment(t);
    const label = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: shipment.id, format: 'SVG' } })).json();
    const stamp = (await t.request({ method: 'POST', url: '/v1/stamps', payload: { shipmentId: shipment.id, format: 'PDF' } })).json();
    const headersOf = async (link: string) => {
      const u = new URL(link);
      const res = await t.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
      assert.equal(res.statusCode, 200);
      return res.headers;
    };
    const [l, s] = [await headersOf(label.url), await headersOf(stamp.url)];
    assert.ok(l['content-security-policy']);
    assert.equal(s['content-security-policy'], l['content-security-policy']);
    assert.match(String(l['content-security-policy']), /sandbox/);
    assert.equal(s['x-content-type-options'], 'nosniff');
    assert.equal(l['x-content-type-options'], 'nosniff');
  });
});

// Contract §3 and RFC 6749 §4.4/§5.2: POST /oauth/token for client_credentials, JWKS, RFC 8414 metadata.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { createClient } from '../../src/auth/credentials.ts';
import { ALL_SCOPES } from '../../src/auth/scopes.ts';
import { isoNow } from '../../src/db/ids.ts';
import { forEachDatabase, startTestApp, type TestApp, withTestApp } from '../helpers.ts';
import { FORM, form, tokenRequest } from './support.ts';

type Res = Awaited<ReturnType<typeof tokenRequest>>;

const basic = (id: string, secret: string, encode = true) => {
  const e = (s: string) => (encode ? encodeURIComponent(s) : s);
  return `Basic ${Buffer.from(`${e(id)}:${e(secret)}`).toString('base64')}`;
};

/** RFC 6749 §5.2: error_description holds only %x20-21 / %x23-5B / %x5D-7E. */
const DESCRIPTION_CHARACTERS = /^[\x20\x21\x23-\x5B\x5D-\x7E]+$/;

/** RFC 6749 §5.2: the status, a JSON body of exactly {error, error_description}, no caching. */
function assertOAuthError(res: Res, status: number, error: string): void {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = res.json();
  assert.equal(body.error, error, res.body);
  assert.match(body.error_description, DESCRIPTION_CHARACTERS);
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers.pragma, 'no-cache');
}

forEachDatabase((database) => {
  let t: TestApp;
  let client: { clientId: string; clientSecret: string };
  before(async () => {
    t = await startTestApp(database);
    client = await t.newClient(t.accountId);
  });
  after(async () => t.close());

  describe('POST /oauth/token: success', () => {
    it('client_secret_post: 200 Bearer token, expires_in 3600, all the client\'s scopes when scope is omitted, no caching', async () => {
      const res = await tokenRequest(t, { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers.pragma, 'no-cache');
      assert.match(String(res.headers['content-type']), /^application\/json/);
      const body = res.json();
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.expires_in, 3600);
      assert.equal(body.scope, ALL_SCOPES.join(' '));
      assert.equal(typeof body.access_token, 'string');
      assert.equal(body.refresh_token, undefined);
    });

    it('the JWT verifies with jose against the published JWKS and carries iss aud sub exp iat jti scope account_id', async () => {
      const res = await tokenRequest(t, { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, scope: 'read:shipments write:labels' });
      const { access_token: token, scope } = res.json();
      assert.equal(scope, 'read:shipments write:labels');
      const jwks = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
      assert.equal(jwks.statusCode, 200);
      for (const key of jwks.json().keys) {
        assert.equal(key.d, undefined, 'no private key material is published');
        assert.ok(key.kid && key.alg);
      }
      const meta = (await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json();
      const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks.json()), { issuer: meta.issuer, audience: t.ctx.config.baseUrl });
      assert.ok(['ES256', 'EdDSA'].includes(protectedHeader.alg), protectedHeader.alg);
      assert.equal(payload.iss, t.ctx.config.authBaseUrl);
      assert.equal(payload.aud, 'http://localhost:8080/v1');
      assert.equal(payload.sub, client.clientId);
      assert.equal(payload.account_id, t.accountId);
      assert.equal(payload.scope, 'read:shipments write:labels');
      assert.equal(typeof payload.jti, 'string');
      assert.equal(payload.exp! - payload.iat!, 3600);
      assert.ok(Math.abs(payload.iat! - Date.now() / 1000) < 60);
      const second = (await tokenRequest(t, { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret })).json().access_token;
      assert.notEqual((await jwtVerify(second, createLocalJWKSet(jwks.json()))).payload.jti, payload.jti, 'every token has its own jti');
    });

    it('client_secret_basic, with id and secret form-urlencoded inside the Basic value (RFC 6749 §2.3.1)', async () => {
      const odd = await createClient(t.ctx.db, t.accountId, { scopes: ['read:shipments'], clientId: `cl odd:id/${Date.now()}`, clientSecret: 'p@ss:w%rd+/é ünïcode' });
      const res = await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic(odd.clientId, odd.clientSecret) });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().scope, 'read:shipments');
      // The plain form most clients send works when nothing needs encoding.
      const plain = await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: basic(client.clientId, client.clientSecret, false) });
      assert.equal(plain.statusCode, 200, plain.body);
      // client_id may accompany Basic when it names the same client.
      const withId = await tokenRequest(t, { grant_type: 'client_credentials', client_id: client.clientId }, { authorization: basic(client.clientId, client.clientSecret) });
      assert.equal(withId.statusCode, 200, withId.body);
    });

    it('scope in the resource:action alias form is granted in canonical form', async () => {
      const res = await tokenRequest(t, { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, scope: 'shipments:read labels:write' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().scope, 'read:shipments write:labels');
    });

    it('a client with fewer scopes gets exactly those when scope is omitted', async () => {
      const narrow = await t.newClient(t.accountId, ['read:labels', 'read:shipments']);
      const res = await tokenRequest(t, { grant_type: 'client_credentials', client_id: narrow.clientId, client_secret: narrow.clientSecret });
      assert.equal(res.json().scope, 'read:labels read:shipments');
    });

    it('a parameter sent without a value counts as omitted (RFC 6749 §3.2): scope= means all the client may have', async () => {
      const narrow = await t.newClient(t.accountId, ['read:labels', 'read:shipments']);
      const res = await tokenRequest(t, { grant_type: 'client_credentials', client_id: narrow.clientId, client_secret: narrow.clientSecret, scope: '' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().scope, 'read:labels read:shipments');
      // Beside HTTP Basic, an empty client_secret is not a second method, and an empty client_id names no other client.
      for (const empty of [{ client_secret: '' }, { client_id: '' }, { client_id: '', client_secret: '', scope: '' }] as Record<string, string>[]) {
        const basicRes = await tokenRequest(t, { grant_type: 'client_credentials', ...empty }, { authorization: basic(narrow.clientId, narrow.clientSecret) });
        assert.equal(basicRes.statusCode, 200, `${JSON.stringify(empty)}: ${basicRes.body}`);
      }
    });

    it('unrecognised parameters are ignored, even repeated (RFC 6749 §3.2)', async () => {
      const creds = form({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret });
      for (const extra of ['foo=1&foo=2', 'resource=https%3A%2F%2Fa.example&resource=https%3A%2F%2Fb.example', 'x=%C3%A9&x="\\']) {
        const res = await tokenRequest(t, `${creds}&${extra}`);
        assert.equal(res.statusCode, 200, `${extra}: ${res.body}`);
      }
    });

    it('the content type may carry a charset parameter', async () => {
      const res = await tokenRequest(t, form({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret }), { 'content-type': `${FORM}; charset=UTF-8` });
      assert.equal(res.statusCode, 200, res.body);
    });
  });

  describe('POST /oauth/token: errors exactly as RFC 6749 §5.2', () => {
    const good = () => ({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret });

    it('a JSON body: 400 invalid_request', async () => {
      const res = await t.app.inject({ method: 'POST', url: '/oauth/token', payload: good() });
      assertOAuthError(res, 400, 'invalid_request');
    });

    it('other content types and no body: 400 invalid_request naming application/x-www-form-urlencoded', async () => {
      for (const type of ['text/plain', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencodedX', 'text/plain; charset="utf-8"']) {
        const res = await tokenRequest(t, form(good()), { 'content-type': type });
        assertOAuthError(res, 400, 'invalid_request');
        assert.match(res.json().error_description, /send application\/x-www-form-urlencoded$/, type);
      }
      const json = await t.app.inject({ method: 'POST', url: '/oauth/token', payload: good() });
      assert.match(json.json().error_description, /application\/x-www-form-urlencoded/);
      assertOAuthError(await t.app.inject({ method: 'POST', url: '/oauth/token' }), 400, 'invalid_request');
    });

    it('grant_type missing: 400 invalid_request', async () => {
      const { grant_type: _, ...rest } = good();
      assertOAuthError(await tokenRequest(t, rest), 400, 'invalid_request');
    });

    it('an unknown grant_type: 400 unsupported_grant_type', async () => {
      assertOAuthError(await tokenRequest(t, { ...good(), grant_type: 'password' }), 400, 'unsupported_grant_type');
      assertOAuthError(await tokenRequest(t, { ...good(), grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer' }), 400, 'unsupported_grant_type');
    });

    it('client input echoed in error_description keeps to the characters RFC 6749 §5.2 allows', async () => {
      const grant = await tokenRequest(t, { ...good(), grant_type: 'clïent"\\x' });
      assertOAuthError(grant, 400, 'unsupported_grant_type');
      assert.match(grant.json().error_description, /^grant_type cl\?ent\?\?x is not supported/);
      const scope = await tokenRequest(t, { ...good(), scope: 'réad:"labels\\ 😀' });
      assertOAuthError(scope, 400, 'invalid_scope');
      assert.equal(scope.json().error_description, 'unknown scope r?ad:?labels? ?');
    });

    it('a wrong secret, an unknown client or a revoked client: 401 invalid_client', async () => {
      const res = await tokenRequest(t, { ...good(), client_secret: `${client.clientSecret}x` });
      assertOAuthError(res, 401, 'invalid_client');
      assertOAuthError(await tokenRequest(t, { ...good(), client_id: 'cl_nobody' }), 401, 'invalid_client');
      assertOAuthError(await tokenRequest(t, { ...good(), client_secret: '' }), 401, 'invalid_client');
      const gone = await t.newClient(t.accountId);
      await t.ctx.db.updateTable('oauth_clients').set({ revoked_at: isoNow() }).where('client_id', '=', gone.clientId).execute();
      assertOAuthError(await tokenRequest(t, { grant_type: 'client_credentials', client_id: gone.clientId, client_secret: gone.clientSecret }), 401, 'invalid_client');
    });

    it('no client authentication at all: 401 invalid_client', async () => {
      assertOAuthError(await tokenRequest(t, { grant_type: 'client_credentials' }), 401, 'invalid_client');
      assertOAuthError(await tokenRequest(t, { grant_type: 'client_credentials', client_id: client.clientId }), 401, 'invalid_client');
      assertOAuthError(await tokenRequest(t, { grant_type: 'client_credentials', client_secret: client.clientSecret }), 401, 'invalid_client');
    });

    it('a failed HTTP Basic authentication: 401 invalid_client with WWW-Authenticate: Basic', async () => {
      for (const authorization of [basic(client.clientId, 'wrong'), basic('cl_nobody', 'x'), `Basic ${Buffer.from('no-colon').toString('base64')}`, 'Basic %%%', 'Basic', `${basic(client.clientId, client.clientSecret).replace(/=*$/, '')}AA`]) {
        const res = await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization });
        assertOAuthError(res, 401, 'invalid_client');
        assert.match(String(res.headers['www-authenticate']), /^Basic realm="shipping"/, authorization);
      }
    });

    it('another scheme in the Authorization header (a Bearer token): 401 invalid_client with WWW-Authenticate: Basic (RFC 6749 §5.2)', async () => {
      const token = (await tokenRequest(t, good())).json().access_token;
      for (const [fields, authorization] of [[{ grant_type: 'client_credentials' }, `Bearer ${token}`], [good(), `Bearer ${token}`], [{ grant_type: 'client_credentials' }, 'Digest username="x"']] as const) {
        const res = await tokenRequest(t, fields, { authorization });
        assertOAuthError(res, 401, 'invalid_client');
        assert.equal(res.headers['www-authenticate'], 'Basic realm="shipping"');
      }
    });

    it('two authentication methods at once (Basic and client_secret in the body): 400 invalid_request', async () => {
      assertOAuthError(await tokenRequest(t, good(), { authorization: basic(client.clientId, client.clientSecret) }), 400, 'invalid_request');
      assertOAuthError(await tokenRequest(t, { grant_type: 'client_credentials', client_secret: client.clientSecret }, { authorization: basic(client.clientId, client.clientSecret) }), 400, 'invalid_request');
    });

    it('Basic naming one client and client_id another: 400 invalid_request', async () => {
      const other = await t.newClient(t.accountId);
      assertOAuthError(await tokenRequest(t, { grant_type: 'client_credentials', client_id: other.clientId }, { authorization: basic(client.clientId, client.clientSecret) }), 400, 'invalid_request');
    });

    it('a repeated parameter: 400 invalid_request', async () => {
      const body = `${form(good())}&scope=read:labels&scope=read:stamps`;
      assertOAuthError(await tokenRequest(t, body), 400, 'invalid_request');
      assertOAuthError(await tokenRequest(t, `${form(good())}&grant_type=client_credentials`), 400, 'invalid_request');
      assertOAuthError(await tokenRequest(t, `${form(good())}&client_secret=${client.clientSecret}`), 400, 'invalid_request');
    });

    it('a scope beyond the client\'s, an unknown scope or one of only spaces: 400 invalid_scope', async () => {
      const narrow = await t.newClient(t.accountId, ['read:shipments']);
      const creds = { grant_type: 'client_credentials', client_id: narrow.clientId, client_secret: narrow.clientSecret };
      assertOAuthError(await tokenRequest(t, { ...creds, scope: 'read:shipments write:shipments' }), 400, 'invalid_scope');
      assertOAuthError(await tokenRequest(t, { ...creds, scope: 'admin' }), 400, 'invalid_scope');
      assertOAuthError(await tokenRequest(t, { ...creds, scope: 'read:everything' }), 400, 'invalid_scope');
      assertOAuthError(await tokenRequest(t, { ...creds, scope: ' ' }), 400, 'invalid_scope');
      const ok = await tokenRequest(t, { ...creds, scope: 'shipments:read' });
      assert.equal(ok.statusCode, 200);
    });

    it('an oversized form: 400 invalid_request, never 413 in another shape', async () => {
      const res = await tokenRequest(t, `${form(good())}&pad=${'x'.repeat(70 * 1024)}`);
      assertOAuthError(res, 400, 'invalid_request');
      assert.equal(res.json().error_description, 'request body is larger than the limit of 64 KiB');
    });
  });

  describe('GET /.well-known/oauth-authorization-server (RFC 8414)', () => {
    it('describes the issuer, endpoints, grants, client authentication methods and scopes', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
      assert.equal(res.statusCode, 200);
      const meta = res.json();
      assert.equal(meta.issuer, 'http://localhost:8080');
      assert.equal(meta.token_endpoint, 'http://localhost:8080/oauth/token');
      assert.equal(meta.jwks_uri, 'http://localhost:8080/.well-known/jwks.json');
      assert.ok(meta.grant_types_supported.includes('client_credentials'));
      assert.deepEqual([...meta.token_endpoint_auth_methods_supported].sort(), ['client_secret_basic', 'client_secret_post']);
      assert.deepEqual([...meta.scopes_supported].sort(), [...ALL_SCOPES].sort());
      assert.ok(Array.isArray(meta.response_types_supported));
    });
  });
});

describe('AUTH_BASE_URL with a path', () => {
  const t = withTestApp(undefined, { AUTH_BASE_URL: 'http://localhost:8080/auth' });

  it('serves the token endpoint and JWKS under the path, and the metadata where RFC 8414 §3 puts it', async () => {
    const client = await t.newClient(t.accountId);
    const token = await t.app.inject({ method: 'POST', url: '/auth/oauth/token', headers: { 'content-type': FORM }, payload: form({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret }) });
    assert.equal(token.statusCode, 200, token.body);
    const jwks = await t.app.inject({ method: 'GET', url: '/auth/.well-known/jwks.json' });
    const { payload } = await jwtVerify(token.json().access_token, createLocalJWKSet(jwks.json()));
    assert.equal(payload.iss, 'http://localhost:8080/auth');
    const rfc = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server/auth' });
    assert.equal(rfc.statusCode, 200);
    assert.equal(rfc.json().issuer, 'http://localhost:8080/auth');
    assert.equal(rfc.json().token_endpoint, 'http://localhost:8080/auth/oauth/token');
    void decodeProtectedHeader;
  });
});

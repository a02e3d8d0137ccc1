import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt } from 'jose';
import { countRows, forEachDatabase, startTestApp, type TestApp } from '../helpers.ts';
import { purgeAuthorizationState } from '../../src/oauth/authorize.ts';
import { sha256Hex } from '../../src/auth/secrets.ts';
import { authorize, exchangeCode, pkce, REDIRECT_URI, setupOAuth, tokenRequest, type OAuthSetup } from './flow.ts';

forEachDatabase((database) => {
  let t: TestApp;
  let setup: OAuthSetup;
  before(async () => {
    t = await startTestApp(database);
    setup = await setupOAuth(t);
  });
  after(async () => t.close());

  const api = (accessToken: string) => t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `Bearer ${accessToken}` } });
  const refresh = (refreshToken: string, extra: Record<string, string> = {}, who: OAuthSetup = setup) => tokenRequest(t, who, { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra });
  function assertInvalidGrant(res: { statusCode: number; json(): any; headers: Record<string, unknown> }, description: RegExp): void {
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_grant');
    assert.match(res.json().error_description, description);
    assert.equal(res.headers['cache-control'], 'no-store');
  }

  describe('{auth_url}/.well-known/oauth-authorization-server', () => {
    it('advertises the authorization endpoint, S256, the code and refresh grants and issuer identification', async () => {
      const meta = (await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })).json();
      assert.equal(meta.authorization_endpoint, `${t.ctx.config.authBaseUrl}/oauth/authorize`);
      assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
      assert.deepEqual(meta.response_types_supported, ['code']);
      for (const g of ['client_credentials', 'authorization_code', 'refresh_token']) assert.ok(meta.grant_types_supported.includes(g), g);
      assert.equal(meta.authorization_response_iss_parameter_supported, true);
    });
  });

  describe('POST {auth_url}/oauth/token grant_type=authorization_code', () => {
    it('exchanges a code for a bearer JWT acting for the user and a refresh token', async () => {
      const { code, verifier } = await authorize(t, setup);
      const res = await exchangeCode(t, setup, code, verifier);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers.pragma, 'no-cache');
      const body = res.json();
      assert.equal(body.token_type, 'Bearer');
      assert.equal(body.expires_in, 3600);
      assert.equal(body.scope, 'read:shipments write:shipments');
      assert.match(body.refresh_token, /^rt_[A-Za-z0-9]{64}$/);
      const claims = decodeJwt(body.access_token);
      assert.equal(claims.sub, setup.userId);
      assert.equal(claims.account_id, t.accountId);
      assert.equal(claims.client_id, setup.clientId);
      assert.equal(typeof claims.fam, 'string');
      for (const c of ['iss', 'aud', 'exp', 'iat', 'jti']) assert.ok(claims[c], c);
      const list = await api(body.access_token);
      assert.equal(list.statusCode, 200);
    });

    it('grants only the scopes consented to', async () => {
      const { code, verifier } = await authorize(t, setup, { scope: 'read:shipments' });
      const body = (await exchangeCode(t, setup, code, verifier)).json();
      assert.equal(body.scope, 'read:shipments');
      const create = await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { authorization: `Bearer ${body.access_token}` }, payload: {} });
      assert.equal(create.statusCode, 403);
      assert.match(String(create.headers['www-authenticate']), /insufficient_scope/);
    });

    it('refuses a wrong code_verifier with invalid_grant, and the code stays usable with the right one', async () => {
      const { code, verifier } = await authorize(t, setup);
      assertInvalidGrant(await exchangeCode(t, setup, code, pkce().verifier), /PKCE verification failed/);
      assertInvalidGrant(await exchangeCode(t, setup, code, 'too-short'), /PKCE verification failed/);
      assert.equal((await exchangeCode(t, setup, code, verifier)).statusCode, 200);
    });

    it('requires code and code_verifier (invalid_request)', async () => {
      const { code } = await authorize(t, setup);
      const noVerifier = await exchangeCode(t, setup, code, '');
      assert.equal(noVerifier.statusCode, 400);
      assert.equal(noVerifier.json().error, 'invalid_request');
      const noCode = await tokenRequest(t, setup, { grant_type: 'authorization_code', code_verifier: pkce().verifier });
      assert.equal(noCode.json().error, 'invalid_request');
    });

    it('refuses a reused code and revokes the tokens issued with it', async () => {
      const { code, verifier } = await authorize(t, setup);
      const first = (await exchangeCode(t, setup, code, verifier)).json();
      assert.equal((await api(first.access_token)).statusCode, 200);
      assertInvalidGrant(await exchangeCode(t, setup, code, verifier), /already used; the tokens issued for it are revoked/);
      assertInvalidGrant(await refresh(first.refresh_token), /revoked/);
      const rejected = await api(first.access_token);
      assert.equal(rejected.statusCode, 401);
      assert.match(String(rejected.headers['www-authenticate']), /error="invalid_token"/);
      assert.equal(rejected.json().message, 'the token has been revoked');
    });

    it('refuses a code after its 60 seconds', async () => {
      const { code, verifier } = await authorize(t, setup);
      const row = await t.ctx.db.selectFrom('oauth_authorization_codes').select(['created_at', 'expires_at']).where('code_hash', '=', sha256Hex(code)).executeTakeFirstOrThrow();
      assert.equal(Date.parse(row.expires_at) - Date.parse(row.created_at), 60_000);
      await t.ctx.db.updateTable('oauth_authorization_codes').set({ expires_at: new Date(Date.now() - 1).toISOString() }).where('code_hash', '=', sha256Hex(code)).execute();
      assertInvalidGrant(await exchangeCode(t, setup, code, verifier), /expired/);
    });

    it('refuses a redirect_uri other than the one of the authorization request (invalid_grant), and a missing one (invalid_request)', async () => {
      const other = await setupOAuth(t, ['read:labels'], [REDIRECT_URI, 'https://app.example/other']);
      const { code, verifier } = await authorize(t, other, { scope: 'read:labels' });
      assertInvalidGrant(await exchangeCode(t, other, code, verifier, 'https://app.example/other'), /redirect_uri does not match/);
      // Missing where the authorization request had one: a required parameter (RFC 6749 §4.1.3, §5.2).
      const missing = await exchangeCode(t, other, code, verifier, null);
      assert.equal(missing.statusCode, 400);
      assert.equal(missing.json().error, 'invalid_request');
      assert.match(missing.json().error_description, /redirect_uri is required/);
      assert.equal((await exchangeCode(t, other, code, verifier)).statusCode, 200);
    });

    it('accepts a token request without redirect_uri when the authorization request had none', async () => {
      const { code, verifier } = await authorize(t, setup, { redirect_uri: undefined });
      assert.equal((await exchangeCode(t, setup, code, verifier, null)).statusCode, 200);
    });

    it('refuses a code issued to another client, exactly like an unknown code', async () => {
      const thief = await setupOAuth(t);
      const { code, verifier } = await authorize(t, setup);
      assertInvalidGrant(await exchangeCode(t, thief, code, verifier), /^the authorization code is invalid$/);
      assertInvalidGrant(await exchangeCode(t, setup, 'A'.repeat(43), verifier), /^the authorization code is invalid$/);
      assert.equal((await exchangeCode(t, setup, code, verifier)).statusCode, 200);
    });

    it('needs client authentication like every grant', async () => {
      const { code, verifier } = await authorize(t, setup);
      const res = await tokenRequest(t, { ...setup, clientSecret: 'wrong' }, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT_URI });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().error, 'invalid_client');
    });
  });

  describe('POST {auth_url}/oauth/token grant_type=refresh_token', () => {
    it('rotates: each use gives a new access and refresh token, and the old refresh token is spent', async () => {
      const { code, verifier } = await authorize(t, setup);
      const first = (await exchangeCode(t, setup, code, verifier)).json();
      const res = await refresh(first.refresh_token);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['cache-control'], 'no-store');
      const second = res.json();
      assert.notEqual(second.refresh_token, first.refresh_token);
      assert.notEqual(second.access_token, first.access_token);
      assert.equal(second.scope, 'read:shipments write:shipments');
      assert.equal(decodeJwt(second.access_token).sub, setup.userId);
      assert.equal(decodeJwt(second.access_token).fam, decodeJwt(first.access_token).fam);
      assert.equal((await api(second.access_token)).statusCode, 200);
      const third = await refresh(second.refresh_token);
      assert.equal(third.statusCode, 200);
    });

    it('treats reuse of a rotated refresh token as theft and revokes the whole grant', async () => {
      const { code, verifier } = await authorize(t, setup);
      const first = (await exchangeCode(t, setup, code, verifier)).json();
      const second = (await refresh(first.refresh_token)).json();
      assertInvalidGrant(await refresh(first.refresh_token), /already used; every token of this grant is revoked/);
      assertInvalidGrant(await refresh(second.refresh_token), /revoked/);
      assert.equal((await api(second.access_token)).statusCode, 401);
      assert.equal((await api(first.access_token)).statusCode, 401);
      const family = await t.ctx.db.selectFrom('oauth_token_families').select(['revoked_at', 'revoked_reason']).where('id', '=', String(decodeJwt(first.access_token).fam)).executeTakeFirstOrThrow();
      assert.equal(family.revoked_reason, 'refresh token reused');
    });

    it('narrows the scope on request, never widens it, and keeps the full grant in the refresh token', async () => {
      const { code, verifier } = await authorize(t, setup);
      const first = (await exchangeCode(t, setup, code, verifier)).json();
      const narrow = await refresh(first.refresh_token, { scope: 'shipments:read' });
      assert.equal(narrow.statusCode, 200);
      assert.equal(narrow.json().scope, 'read:shipments');
      const wide = await refresh(narrow.json().refresh_token, { scope: 'read:shipments read:labels' });
      assert.equal(wide.statusCode, 400);
      assert.equal(wide.json().error, 'invalid_scope');
      const full = await refresh(narrow.json().refresh_token);
      assert.equal(full.json().scope, 'read:shipments write:shipments');
    });

    it('takes scope= as omitted (RFC 6749 §3.2): the full grant; a scope of only spaces is invalid_scope', async () => {
      const { code, verifier } = await authorize(t, setup);
      const first = (await exchangeCode(t, setup, code, verifier)).json();
      const empty = await refresh(first.refresh_token, { scope: '' });
      assert.equal(empty.statusCode, 200, empty.body);
      assert.equal(empty.json().scope, 'read:shipments write:shipments');
      const blank = await refresh(empty.json().refresh_token, { scope: ' ' });
      assert.equal(blank.statusCode, 400);
      assert.equal(blank.json().error, 'invalid_scope');
    });

    it('keeps error_description to the characters RFC 6749 §5.2 allows', async () => {
      const { code, verifier } = await authorize(t, setup);
      const first = (await exchangeCode(t, setup, code, verifier)).json();
      const res = await refresh(first.refresh_token, { scope: 'réad:"shipments\\' });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error_description, 'unknown scope r?ad:?shipments?');
    });

    it('refuses an unknown, expired or foreign refresh token with invalid_grant', async () => {
      assertInvalidGrant(await refresh('x'.repeat(64)), /invalid/);
      const { code, verifier } = await authorize(t, setup);
      const tokens = (await exchangeCode(t, setup, code, verifier)).json();
      const other = await setupOAuth(t);
      assertInvalidGrant(await refresh(tokens.refresh_token, {}, other), /invalid/);
      await t.ctx.db.updateTable('oauth_refresh_tokens').set({ expires_at: new Date(Date.now() - 1).toISOString() }).where('token_hash', '=', sha256Hex(tokens.refresh_token)).execute();
      assertInvalidGrant(await refresh(tokens.refresh_token), /expired/);
    });

    it('requires refresh_token (invalid_request)', async () => {
      const res = await tokenRequest(t, setup, { grant_type: 'refresh_token' });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().error, 'invalid_request');
    });
  });

  describe('client-credentials tokens', () => {
    it('carry no family and are not affected by revocations', async () => {
      const res = await tokenRequest(t, setup, { grant_type: 'client_credentials' });
      assert.equal(res.statusCode, 200);
      assert.equal(decodeJwt(res.json().access_token).fam, undefined);
      assert.equal(res.json().refresh_token, undefined);
      assert.equal((await api(res.json().access_token)).statusCode, 200);
    });
  });

  describe('purging old authorization state (worker job)', () => {
    it('deletes expired requests, codes, refresh tokens, idle grants and old failed sign-ins, and keeps live ones', async () => {
      const { code, verifier } = await authorize(t, setup);
      const live = (await exchangeCode(t, setup, code, verifier)).json();
      const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
      const stale = await authorize(t, setup);
      const staleTokens = (await exchangeCode(t, setup, stale.code, stale.verifier)).json();
      const staleFamily = String(decodeJwt(staleTokens.access_token).fam);
      await t.ctx.db.updateTable('oauth_refresh_tokens').set({ expires_at: old }).where('family_id', '=', staleFamily).execute();
      await t.ctx.db.updateTable('oauth_authorization_codes').set({ expires_at: old }).where('family_id', '=', staleFamily).execute();
      await t.ctx.db.updateTable('oauth_token_families').set({ last_used_at: old }).where('id', '=', staleFamily).execute();
      await t.ctx.db.insertInto('signin_failures').values({ id: '0190a0a0-0000-7000-8000-000000000001', key: 'ip:192.0.2.1', created_at: old }).execute();
      await t.ctx.db.updateTable('oauth_authorization_requests').set({ expires_at: old }).execute();

      assert.ok((await purgeAuthorizationState(t.ctx)) > 0);
      assert.equal(await countRows(t.ctx, 'oauth_authorization_requests'), 0);
      assert.equal((await t.ctx.db.selectFrom('oauth_token_families').select('id').where('id', '=', staleFamily).executeTakeFirst()), undefined);
      assert.equal((await t.ctx.db.selectFrom('signin_failures').select('id').where('key', '=', 'ip:192.0.2.1').executeTakeFirst()), undefined);
      // The live grant still works.
      assert.equal((await refresh(live.refresh_token)).statusCode, 200);
    });
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { countRows, forEachDatabase, startTestApp, type TestApp } from '../helpers.ts';
import { WRONG_CREDENTIALS, MAX_FAILURES_PER_EMAIL, MAX_FAILURES_PER_ADDRESS, MAX_FAILURES_PER_ADDRESS_ANY_EMAIL } from '../../src/oauth/service.ts';
import { authorize, authorizeQuery, hiddenField, openAuthorize, PASSWORD, pkce, postForm, REDIRECT_URI, setupOAuth, signIn, type OAuthSetup } from './flow.ts';

function assertPageHeaders(res: LightMyRequestResponse): void {
  assert.match(String(res.headers['content-type']), /^text\/html; charset=utf-8/);
  const csp = String(res.headers['content-security-policy']);
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /style-src 'self'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /script-src/);
  assert.equal(res.headers['x-frame-options'], 'DENY');
  assert.equal(res.headers['referrer-policy'], 'no-referrer');
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.doesNotMatch(res.body, /<script/i);
  assert.doesNotMatch(res.body, /https?:\/\/(?!app\.example)/, 'no third-party assets');
}

/** The error-page contract for an untrusted client or redirect URI: a page, never a redirect. */
function assertErrorPage(res: LightMyRequestResponse, text: RegExp): void {
  assert.equal(res.statusCode, 400, res.body);
  assert.equal(res.headers.location, undefined);
  assertPageHeaders(res);
  assert.match(res.body, text);
}

function redirected(res: LightMyRequestResponse, status = 302): URLSearchParams {
  assert.equal(res.statusCode, status, res.body);
  const location = new URL(String(res.headers.location));
  assert.equal(`${location.origin}${location.pathname}`, REDIRECT_URI);
  return location.searchParams;
}

forEachDatabase((database) => {
  let t: TestApp;
  let setup: OAuthSetup;
  before(async () => {
    t = await startTestApp(database);
    setup = await setupOAuth(t);
  });
  after(async () => t.close());

  let opened = 0;
  // An address per page: one address may open only so many a minute.
  const get = (query: string) => t.app.inject({ method: 'GET', url: `/oauth/authorize?${query}`, remoteAddress: `10.251.${(opened >> 8) & 255}.${opened++ & 255}` });

  describe('GET {auth_url}/oauth/authorize: client and redirect URI', () => {
    it('shows an error page for an unknown client, and never redirects', async () => {
      const res = await get(authorizeQuery({ ...setup, clientId: 'cl_nobody' }, pkce().challenge));
      assertErrorPage(res, /not registered/);
    });

    it('shows an error page for a missing client_id', async () => {
      assertErrorPage(await get(authorizeQuery({ ...setup, clientId: '' }, pkce().challenge)), /client_id is missing/);
    });

    it('shows an error page for a redirect URI that is not registered, even one differing only by a slash or a query', async () => {
      for (const uri of ['https://evil.example/callback', `${REDIRECT_URI}/`, `${REDIRECT_URI}?x=1`, 'https://APP.example/callback']) {
        const res = await get(authorizeQuery(setup, pkce().challenge, { redirect_uri: uri }));
        assertErrorPage(res, /not registered/);
      }
    });

    it('shows an error page when redirect_uri is left out and the client has several', async () => {
      const two = await setupOAuth(t, ['read:labels'], [REDIRECT_URI, 'https://app.example/other']);
      assertErrorPage(await get(authorizeQuery(two, pkce().challenge, { redirect_uri: undefined, scope: undefined })), /redirect_uri is missing/);
    });

    it('uses the only registered redirect URI when redirect_uri is left out', async () => {
      const res = await get(authorizeQuery(setup, pkce().challenge, { redirect_uri: undefined }));
      assert.equal(res.statusCode, 200);
    });
  });

  describe('GET {auth_url}/oauth/authorize: errors redirected to the client (RFC 6749 §4.1.2.1)', () => {
    const cases: [string, Record<string, string | undefined>, string, RegExp][] = [
      ['missing response_type', { response_type: undefined }, 'invalid_request', /response_type/],
      ['response_type=token', { response_type: 'token' }, 'unsupported_response_type', /code/],
      ['plain PKCE', { code_challenge_method: 'plain' }, 'invalid_request', /plain is not supported; use S256/],
      ['no code_challenge_method', { code_challenge_method: undefined }, 'invalid_request', /S256/],
      ['no code_challenge', { code_challenge: undefined }, 'invalid_request', /code_challenge is required/],
      ['a malformed code_challenge', { code_challenge: 'short' }, 'invalid_request', /43 characters/],
      ['an unknown scope', { scope: 'read:labels fly:rockets' }, 'invalid_scope', /fly:rockets/],
      ['a scope the client may not have', { scope: 'read:labels write:webhooks' }, 'invalid_scope', /write:webhooks/],
    ];
    for (const [name, overrides, error, description] of cases) {
      it(`redirects ${name} with error=${error} and the unchanged state, before any page is shown`, async () => {
        const before = await countRows(t.ctx, 'oauth_authorization_requests');
        const params = redirected(await get(authorizeQuery(setup, pkce().challenge, overrides)));
        assert.equal(params.get('error'), error);
        assert.match(params.get('error_description') ?? '', description);
        assert.equal(params.get('state'), 'st-123');
        assert.equal(params.get('iss'), t.ctx.config.authBaseUrl);
        assert.equal(params.get('code'), null);
        assert.equal(await countRows(t.ctx, 'oauth_authorization_requests'), before);
      });
    }

    it('redirects a repeated parameter with invalid_request', async () => {
      const query = `${authorizeQuery(setup, pkce().challenge)}&scope=read:labels`;
      const params = redirected(await get(query));
      assert.equal(params.get('error'), 'invalid_request');
      assert.match(params.get('error_description') ?? '', /scope is repeated/);
    });

    it('keeps error_description to the characters RFC 6749 §4.1.2.1 allows, whatever the request held', async () => {
      const params = redirected(await get(authorizeQuery(setup, pkce().challenge, { scope: 'read:labels réad:"labels\\ 😀' })));
      assert.equal(params.get('error'), 'invalid_scope');
      assert.equal(params.get('error_description'), 'unknown scope r?ad:?labels? ?');
      assert.equal(params.get('state'), 'st-123');
    });

    it('omits state from the error when the request had none', async () => {
      const params = redirected(await get(authorizeQuery(setup, pkce().challenge, { state: undefined, code_challenge_method: 'plain' })));
      assert.equal(params.get('error'), 'invalid_request');
      assert.equal(params.has('state'), false);
    });
  });

  describe('GET {auth_url}/oauth/authorize: the sign-in page', () => {
    it('is an accessible form with a CSRF token, the client name, a browser cookie and the security headers', async () => {
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      assertPageHeaders(b.page);
      assert.match(String(b.page.headers['content-security-policy']), /form-action 'self'/);
      assert.match(String(b.page.headers['set-cookie']), /^oauth_browser=[A-Za-z0-9]{43}; Path=\/oauth; HttpOnly; SameSite=Lax$/);
      const html = b.page.body;
      assert.match(html, /<html lang="en">/);
      assert.match(html, /<h1>Sign in<\/h1>/);
      assert.match(html, /Test client/);
      assert.match(html, /<label for="email">Email address<\/label>\s*<input id="email" name="email" type="email" autocomplete="username"/);
      assert.match(html, /<label for="password">Password<\/label>\s*<input id="password" name="password" type="password" autocomplete="current-password"/);
      assert.match(html, /<form method="post" action="\/oauth\/authorize\/sign-in"/);
      assert.match(html, /<link rel="stylesheet" href="\/oauth\/assets\/authorize.css">/);
      assert.match(b.csrf, /^[A-Za-z0-9]{43}$/);
    });

    it('serves its stylesheet from the same origin', async () => {
      const css = await t.app.inject({ method: 'GET', url: '/oauth/assets/authorize.css' });
      assert.equal(css.statusCode, 200);
      assert.match(String(css.headers['content-type']), /^text\/css/);
      assert.doesNotMatch(css.body, /@import|url\(/);
    });

    it('escapes what the client controls', async () => {
      const evil = await t.ctx.db.updateTable('oauth_clients').set({ name: '<img src=x onerror=alert(1)>' }).where('client_id', '=', setup.clientId).execute();
      void evil;
      try {
        const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
        assert.doesNotMatch(b.page.body, /<img/);
        assert.match(b.page.body, /&#60;img src=x onerror=alert\(1\)&#62;/);
      } finally {
        await t.ctx.db.updateTable('oauth_clients').set({ name: 'Test client' }).where('client_id', '=', setup.clientId).execute();
      }
    });
  });

  describe('POST {auth_url}/oauth/authorize/sign-in', () => {
    it('answers a wrong password and an unknown email with the same page and message', async () => {
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      const wrongPassword = await signIn(t, b, setup.email, 'not the password', '10.0.0.1');
      const unknownEmail = await signIn(t, b, 'nobody@example.com', PASSWORD, '10.0.0.1');
      for (const res of [wrongPassword, unknownEmail]) {
        assert.equal(res.statusCode, 400);
        assertPageHeaders(res);
        assert.match(res.body, /<p class="alert" role="alert" id="form-error">The email address or password is not correct.<\/p>/);
        assert.ok(res.body.includes(WRONG_CREDENTIALS));
        assert.doesNotMatch(res.body, /Allow/);
      }
      const strip = (html: string) => html.replace(/value="[^"]*"/g, '');
      assert.equal(strip(wrongPassword.body), strip(unknownEmail.body));
    });

    it('matches the email case-insensitively and shows the consent page with a new CSRF token', async () => {
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      const res = await signIn(t, b, setup.email.toUpperCase(), PASSWORD);
      assert.equal(res.statusCode, 200, res.body);
      assertPageHeaders(res);
      assert.notEqual(hiddenField(res.body, 'csrf_token'), b.csrf);
    });

    it('refuses a missing or wrong CSRF token with 403 before looking at the password', async () => {
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      const failuresBefore = await countRows(t.ctx, 'signin_failures');
      for (const csrf of [undefined, '', 'x'.repeat(43)]) {
        const res = await postForm(t, '/oauth/authorize/sign-in', { request: b.request, csrf_token: csrf, email: setup.email, password: 'a wrong password' }, b.cookie);
        assert.equal(res.statusCode, 403, res.body);
        assertPageHeaders(res);
        assert.match(res.body, /could not be verified/);
      }
      assert.equal(await countRows(t.ctx, 'signin_failures'), failuresBefore);
      // The request is still usable from its own page.
      assert.equal((await signIn(t, b, setup.email, PASSWORD)).statusCode, 200);
    });

    it('refuses the right CSRF token from another browser (cookie missing or different)', async () => {
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      const other = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      for (const cookie of [undefined, other.cookie]) {
        const res = await postForm(t, '/oauth/authorize/sign-in', { request: b.request, csrf_token: b.csrf, email: setup.email, password: PASSWORD }, cookie);
        assert.equal(res.statusCode, 403);
      }
    });

    it('refuses a form that is not form-encoded', async () => {
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      const res = await t.app.inject({ method: 'POST', url: '/oauth/authorize/sign-in', headers: { cookie: b.cookie }, payload: { request: b.request, csrf_token: b.csrf, email: setup.email, password: PASSWORD } });
      assert.equal(res.statusCode, 415);
      assertPageHeaders(res);
    });

    it('refuses an unknown or expired request with an error page', async () => {
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      const unknown = await postForm(t, '/oauth/authorize/sign-in', { request: '0190a0a0-0000-7000-8000-000000000000', csrf_token: b.csrf, email: setup.email, password: PASSWORD }, b.cookie);
      assert.equal(unknown.statusCode, 400);
      assert.match(unknown.body, /expired/);
      await t.ctx.db.updateTable('oauth_authorization_requests').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', b.request).execute();
      const expired = await signIn(t, b, setup.email, PASSWORD);
      assert.equal(expired.statusCode, 400);
      assert.match(expired.body, /expired/);
    });
  });

  describe('sign-in rate limiting', () => {
    it(`locks an email out after ${MAX_FAILURES_PER_EMAIL} failures in 15 minutes with 429 and Retry-After, even with the right password`, async () => {
      const victim = await setupOAuth(t);
      const b = await openAuthorize(t, authorizeQuery(victim, pkce().challenge));
      for (let i = 0; i < MAX_FAILURES_PER_EMAIL; i++) {
        // From different addresses, so only the per-email limit applies.
        assert.equal((await signIn(t, b, victim.email.toUpperCase(), `guess ${i}`, `10.1.0.${i + 1}`)).statusCode, 400);
      }
      const locked = await signIn(t, b, victim.email, PASSWORD, '10.1.1.1');
      assert.equal(locked.statusCode, 429);
      assertPageHeaders(locked);
      const retryAfter = Number(locked.headers['retry-after']);
      assert.ok(retryAfter > 0 && retryAfter <= 900, `Retry-After ${retryAfter}`);
      assert.match(locked.body, /Too many failed sign-in attempts/);
      // Stored in the database, where every process sees it.
      assert.equal(Number((await t.ctx.db.selectFrom('signin_failures').select((eb) => eb.fn.countAll().as('n')).where('key', '=', `email:${victim.email}`).executeTakeFirstOrThrow()).n), MAX_FAILURES_PER_EMAIL);
      // Once the failures leave the window, the right password works again.
      await t.ctx.db.updateTable('signin_failures').set({ created_at: new Date(Date.now() - 16 * 60_000).toISOString() }).where('key', '=', `email:${victim.email}`).execute();
      assert.equal((await signIn(t, b, victim.email, PASSWORD, '10.1.1.1')).statusCode, 200);
    });

    it(`after ${MAX_FAILURES_PER_ADDRESS} failures from one address, refuses there every email that failed, never a user who has not`, async () => {
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) {
        assert.equal((await signIn(t, b, `spray${i}@example.com`, 'password123', '10.2.0.1')).statusCode, 400);
      }
      // A sprayed email tries again from that address: refused unchecked.
      const again = await signIn(t, b, 'spray0@example.com', 'password456', '10.2.0.1');
      assert.equal(again.statusCode, 429);
      assert.ok(Number(again.headers['retry-after']) > 0);
      // The address may be a proxy or an office: a user who has not failed signs in with the right password.
      assert.equal((await signIn(t, b, setup.email, PASSWORD, '10.2.0.1')).statusCode, 200);
    });

    it(`spraying one password over many emails from one address stops after ${MAX_FAILURES_PER_ADDRESS_ANY_EMAIL} failures, new emails included`, async () => {
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      // Recorded directly: the bound, not the cost of hundreds of password checks, is the point here.
      await t.ctx.db
        .insertInto('signin_failures')
        .values(Array.from({ length: MAX_FAILURES_PER_ADDRESS_ANY_EMAIL }, (_, i) => ({ id: `0190a0a0-0000-7000-8000-${String(i).padStart(12, '0')}`, key: 'ip:10.9.9.9', created_at: new Date().toISOString() })))
        .execute();
      assert.equal((await signIn(t, b, 'never-tried@example.com', 'password123', '10.9.9.9')).statusCode, 429);
      assert.equal((await signIn(t, b, setup.email, PASSWORD, '10.9.9.9')).statusCode, 429, 'unchecked, even the right password');
      assert.equal((await signIn(t, b, setup.email, PASSWORD, '10.9.9.10')).statusCode, 200, 'another address is not affected');
    });

    it(`a burst of concurrent sign-ins checks at most ${MAX_FAILURES_PER_EMAIL} passwords of one email`, async () => {
      const victim = await setupOAuth(t);
      const b = await openAuthorize(t, authorizeQuery(victim, pkce().challenge));
      const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => signIn(t, b, victim.email, `guess ${i}`, `10.3.${i}.1`)));
      let checked = burst.filter((r) => r.statusCode === 400).length;
      // Concurrent attempts count each other, so a burst may even be refused whole: never more than the limit.
      assert.ok(checked <= MAX_FAILURES_PER_EMAIL, `${checked} passwords checked`);
      assert.equal(burst.filter((r) => r.statusCode === 429).length, 40 - checked);
      // What the burst left of the budget, one by one: exactly MAX_FAILURES_PER_EMAIL checks in all.
      for (let i = 0; ; i++) {
        const res = await signIn(t, b, victim.email, `late guess ${i}`, `10.3.98.${i + 1}`);
        if (res.statusCode === 429) break;
        assert.equal(res.statusCode, 400);
        checked++;
      }
      assert.equal(checked, MAX_FAILURES_PER_EMAIL);
      // The right password is refused too: the lock holds.
      assert.equal((await signIn(t, b, victim.email, PASSWORD, '10.3.99.1')).statusCode, 429);
    });
  });

  describe('the OpenAPI document', () => {
    it('declares every status and media type the pages answer with', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
      const declared = (method: string, path: string, res: LightMyRequestResponse) => {
        const response = doc.paths[path]?.[method]?.responses?.[String(res.statusCode)];
        assert.ok(response, `${method} ${path} ${res.statusCode} is declared`);
        const type = String(res.headers['content-type'] ?? '').split(';')[0]!;
        if (response.content) assert.ok(response.content[type], `${method} ${path} ${res.statusCode} declares ${type}`);
        else assert.equal(res.body, '');
      };
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      declared('get', '/oauth/authorize', b.page);
      declared('get', '/oauth/authorize', await get(authorizeQuery(setup, pkce().challenge, { code_challenge_method: 'plain' })));
      declared('get', '/oauth/authorize', await get(authorizeQuery({ ...setup, clientId: 'cl_nobody' }, pkce().challenge)));
      declared('post', '/oauth/authorize/sign-in', await signIn(t, b, setup.email, 'wrong password', '10.3.0.1'));
      declared('post', '/oauth/authorize/sign-in', await postForm(t, '/oauth/authorize/sign-in', { request: b.request }, b.cookie));
      const consent = await signIn(t, b, setup.email, PASSWORD);
      declared('post', '/oauth/authorize/sign-in', consent);
      declared('post', '/oauth/authorize/consent', await postForm(t, '/oauth/authorize/consent', { request: b.request, csrf_token: hiddenField(consent.body, 'csrf_token'), decision: 'deny' }, b.cookie));
      declared('get', '/oauth/assets/authorize.css', await t.app.inject({ method: 'GET', url: '/oauth/assets/authorize.css' }));
    });
  });

  describe('POST {auth_url}/oauth/authorize/consent', () => {
    async function consentPage(overrides: Record<string, string | undefined> = {}) {
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge, overrides));
      const page = await signIn(t, b, setup.email, PASSWORD);
      assert.equal(page.statusCode, 200);
      return { b, page, csrf: hiddenField(page.body, 'csrf_token') };
    }

    it('lists the requested scopes in plain words, names the client, account and user, and allows the redirect in form-action', async () => {
      const { page } = await consentPage({ scope: 'read:shipments write:labels' });
      assertPageHeaders(page);
      assert.match(String(page.headers['content-security-policy']), /form-action 'self' https:\/\/app\.example;/);
      assert.match(page.body, /<h1>Allow <span class="client">Test client<\/span> to use your account\?<\/h1>/);
      assert.match(page.body, /<li>See your shipments <code>read:shipments<\/code><\/li>/);
      assert.match(page.body, /<li>Create and invalidate labels <code>write:labels<\/code><\/li>/);
      assert.doesNotMatch(page.body, /read:labels/);
      assert.match(page.body, new RegExp(`Signed in as <strong>${setup.email}</strong>`));
      assert.match(page.body, /<button type="submit" name="decision" value="deny"[^>]*>Deny<\/button>/);
      assert.match(page.body, /<button type="submit" name="decision" value="approve">Allow<\/button>/);
    });

    it('on Allow redirects with a code and the state exactly as sent', async () => {
      const state = 'a b+c/=&?ü"<>%20';
      const { location } = await authorize(t, setup, { state });
      assert.equal(location.searchParams.get('state'), state);
      assert.match(location.searchParams.get('code')!, /^ac_[A-Za-z0-9]{43}$/);
      assert.equal(location.searchParams.get('iss'), t.ctx.config.authBaseUrl);
    });

    it('keeps the query of a registered redirect URI', async () => {
      const withQuery = await setupOAuth(t, ['read:labels'], ['https://app.example/cb?tenant=42']);
      const { location } = await authorize(t, withQuery, { redirect_uri: 'https://app.example/cb?tenant=42', scope: 'read:labels' });
      assert.equal(location.searchParams.get('tenant'), '42');
      assert.ok(location.searchParams.get('code'));
    });

    it('on Deny redirects with error=access_denied and the state, and issues no code', async () => {
      const { b, csrf } = await consentPage();
      const before = await countRows(t.ctx, 'oauth_authorization_codes');
      const res = await postForm(t, '/oauth/authorize/consent', { request: b.request, csrf_token: csrf, decision: 'deny' }, b.cookie);
      const params = redirected(res, 303);
      assert.equal(params.get('error'), 'access_denied');
      assert.equal(params.get('state'), 'st-123');
      assert.equal(params.get('code'), null);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(res.headers['referrer-policy'], 'no-referrer');
      assert.equal(await countRows(t.ctx, 'oauth_authorization_codes'), before);
    });

    it('refuses the sign-in page CSRF token, a missing token and another browser with 403', async () => {
      const { b, csrf } = await consentPage();
      for (const [token, cookie] of [[b.csrf, b.cookie], [undefined, b.cookie], [csrf, undefined]] as const) {
        const res = await postForm(t, '/oauth/authorize/consent', { request: b.request, csrf_token: token, decision: 'approve' }, cookie);
        assert.equal(res.statusCode, 403, res.body);
        assert.equal(res.headers.location, undefined);
      }
    });

    it('answers a second submission of the same form with an error page, not a second code', async () => {
      const { b, csrf } = await consentPage();
      const first = await postForm(t, '/oauth/authorize/consent', { request: b.request, csrf_token: csrf, decision: 'approve' }, b.cookie);
      assert.equal(first.statusCode, 303);
      const again = await postForm(t, '/oauth/authorize/consent', { request: b.request, csrf_token: csrf, decision: 'approve' }, b.cookie);
      assert.equal(again.statusCode, 400);
      assert.equal(again.headers.location, undefined);
      assert.match(again.body, /already used/);
    });

    it('refuses to answer before sign-in', async () => {
      const b = await openAuthorize(t, authorizeQuery(setup, pkce().challenge));
      const res = await postForm(t, '/oauth/authorize/consent', { request: b.request, csrf_token: b.csrf, decision: 'approve' }, b.cookie);
      assert.equal(res.statusCode, 400);
      assert.equal(res.headers.location, undefined);
    });
  });
});

// End to end: headless Chromium signs in and consents on the real pages of a listening server, and
// the `openid-client` package does the client's side (discovery, PKCE, code exchange, refresh).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import * as oidc from 'openid-client';
import { forEachDatabase, startTestApp, type TestApp } from '../helpers.ts';
import { createUser } from '../../src/oauth/users.ts';
import { freePort } from '../core/support.ts';

const SCREENSHOTS = new URL('./__screenshots__/', import.meta.url);
const PASSWORD = 'a long and secret passphrase';

/** The client's redirect URI: a tiny server that remembers what the browser brought back. */
async function callbackServer(): Promise<{ server: Server; uri: string; received: URL[] }> {
  const received: URL[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    // Browsers also ask for /favicon.ico; only the callback counts.
    if (url.pathname === '/callback') received.push(url);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Back in the app</title><h1>Back in the app</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, uri: `http://127.0.0.1:${port}/callback`, received };
}

let browser: Browser;
before(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
after(async () => browser?.close());

forEachDatabase((database) => {
  describe('authorization code with PKCE, in a real browser', () => {
    let t: TestApp;
    let base: string;
    let callback: Awaited<ReturnType<typeof callbackServer>>;
    let config: oidc.Configuration;
    let email: string;
    let page: Page;
    const cspViolations: string[] = [];

    before(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      t = await startTestApp(database, { PUBLIC_BASE_URL: base, PORT: String(port) });
      await t.app.listen({ host: '127.0.0.1', port });
      callback = await callbackServer();
      email = `Warehouse.Manager-${database.name}@example.com`;
      await createUser(t.ctx.db, t.accountId, email, PASSWORD);
      const { clientId, clientSecret } = await t.newClient(t.accountId, ['read:shipments', 'write:shipments', 'read:labels'], [callback.uri]);
      await t.ctx.db.updateTable('oauth_clients').set({ name: 'Acme Warehouse' }).where('client_id', '=', clientId).execute();
      // RFC 8414 discovery against {auth_url}; plain http is allowed for this local test only.
      config = await oidc.discovery(new URL(base), clientId, clientSecret, undefined, { execute: [oidc.allowInsecureRequests], algorithm: 'oauth2' });
      const context = await browser.newContext({ locale: 'en-US', viewport: { width: 720, height: 860 } });
      page = await context.newPage();
      page.on('console', (m) => {
        if (/Content[- ]Security[- ]Policy/i.test(m.text())) cspViolations.push(m.text());
      });
    });
    after(async () => {
      await page?.context().close();
      await new Promise<void>((resolve) => callback.server.close(() => resolve()));
      await t.close();
    });

    async function start(scope = 'read:shipments write:shipments') {
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: callback.uri,
        scope,
        state,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      const response = await page.goto(url.href);
      assert.equal(response?.status(), 200);
      return { verifier, state };
    }

    it('discovers the authorization endpoint and PKCE S256 from the metadata', () => {
      const meta = config.serverMetadata();
      assert.equal(meta.authorization_endpoint, `${base}/oauth/authorize`);
      assert.deepEqual(meta.code_challenge_methods_supported, ['S256']);
    });

    it('shows the same message for a wrong password, with the form styled by its own stylesheet', async () => {
      await start();
      assert.equal(await page.title(), 'Sign in · Shipping');
      await page.getByLabel('Email address').fill(email);
      await page.getByLabel('Password').fill('not my password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').waitFor();
      assert.equal((await page.getByRole('alert').textContent())?.trim(), 'The email address or password is not correct.');
      // The email stays filled in; the password does not.
      assert.equal(await page.getByLabel('Email address').inputValue(), email);
      assert.equal(await page.getByLabel('Password').inputValue(), '');
      await page.screenshot({ path: new URL(`sign-in-error-${database.name}.png`, SCREENSHOTS).pathname, fullPage: true });
      const button = await page.getByRole('button', { name: 'Sign in' }).evaluate((el) => getComputedStyle(el).backgroundColor);
      assert.equal(button, 'rgb(31, 95, 209)', 'the stylesheet was allowed by the CSP and applied');
    });

    it('signs in, consents, returns the code to the client, which exchanges it, calls the API and refreshes', async () => {
      const { verifier, state } = await start();
      await page.getByLabel('Email address').fill(email.toLowerCase());
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Allow Acme Warehouse to use your account?' }).waitFor();
      const scopes = await page.getByRole('listitem').allTextContents();
      assert.deepEqual(scopes, ['See your shipments read:shipments', 'Create shipments write:shipments']);
      await page.screenshot({ path: new URL(`consent-${database.name}.png`, SCREENSHOTS).pathname, fullPage: true });

      const before = callback.received.length;
      await Promise.all([page.waitForURL((u) => u.href.startsWith(callback.uri)), page.getByRole('button', { name: 'Allow' }).click()]);
      assert.equal(await page.title(), 'Back in the app');
      const returned = callback.received.at(-1)!;
      assert.equal(callback.received.length, before + 1);
      assert.equal(returned.searchParams.get('state'), state);
      assert.ok(returned.searchParams.get('code'));

      const tokens = await oidc.authorizationCodeGrant(config, returned, { pkceCodeVerifier: verifier, expectedState: state });
      assert.equal(tokens.token_type.toLowerCase(), 'bearer');
      assert.equal(tokens.scope, 'read:shipments write:shipments');
      assert.ok(tokens.refresh_token);
      const list = await fetch(`${base}/v1/shipments`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      assert.equal(list.status, 200);

      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
      const again = await fetch(`${base}/v1/shipments`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
      assert.equal(again.status, 200);

      // The code was single use: a second exchange fails and takes the grant down with it.
      await assert.rejects(oidc.authorizationCodeGrant(config, returned, { pkceCodeVerifier: verifier, expectedState: state }), (err: any) => err.error === 'invalid_grant');
      const revoked = await fetch(`${base}/v1/shipments`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
      assert.equal(revoked.status, 401);
    });

    it('returns access_denied with the state when the user denies', async () => {
      const { state } = await start('read:labels');
      await page.getByLabel('Email address').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('listitem').filter({ hasText: 'See your labels and their tracking' }).waitFor();
      await Promise.all([page.waitForURL((u) => u.href.startsWith(callback.uri)), page.getByRole('button', { name: 'Deny' }).click()]);
      const returned = callback.received.at(-1)!;
      assert.equal(returned.searchParams.get('error'), 'access_denied');
      assert.equal(returned.searchParams.get('state'), state);
      assert.equal(returned.searchParams.get('code'), null);
    });

    it('shows an error page, and stays on this site, for an unregistered redirect URI', async () => {
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: 'http://127.0.0.1:1/elsewhere',
        scope: 'read:shipments',
        code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
        code_challenge_method: 'S256',
      });
      const response = await page.goto(url.href);
      assert.equal(response?.status(), 400);
      assert.ok(page.url().startsWith(`${base}/oauth/authorize`));
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Unregistered redirect address');
    });

    it('caused no Content-Security-Policy violation', () => {
      assert.deepEqual(cspViolations, []);
    });
  });
});

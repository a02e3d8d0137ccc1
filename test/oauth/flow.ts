// Drives the authorization-code flow over app.inject, as a browser would, for the HTTP tests.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers.ts';
import { createUser } from '../../src/oauth/users.ts';
import type { Scope } from '../../src/auth/scopes.ts';

export const REDIRECT_URI = 'https://app.example/callback';
export const PASSWORD = 'correct horse battery staple';

export interface OAuthSetup {
  clientId: string;
  clientSecret: string;
  email: string;
  userId: string;
}

let counter = 0;
/** A user of the test app's account and a client allowed `scopes`, with REDIRECT_URI registered. */
export async function setupOAuth(t: TestApp, scopes: Scope[] = ['read:labels', 'write:labels', 'read:shipments', 'write:shipments'], redirectUris = [REDIRECT_URI]): Promise<OAuthSetup> {
  const email = `user${++counter}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const user = await createUser(t.ctx.db, t.accountId, email, PASSWORD);
  const client = await t.newClient(t.accountId, scopes, redirectUris);
  return { ...client, email, userId: user.id };
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizeQuery(setup: OAuthSetup, challenge: string, overrides: Record<string, string | undefined> = {}): string {
  const params: Record<string, string | undefined> = {
    response_type: 'code',
    client_id: setup.clientId,
    redirect_uri: REDIRECT_URI,
    scope: 'read:shipments write:shipments',
    state: 'st-123',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...overrides,
  };
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.append(k, v);
  return q.toString();
}

export function hiddenField(html: string, name: string): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  assert.ok(m, `the page has a hidden ${name} field`);
  return m[1]!;
}

export interface Browser {
  cookie: string;
  request: string;
  csrf: string;
  page: LightMyRequestResponse;
}

/** GET /oauth/authorize; returns the sign-in page's cookie and hidden fields. */
let pagesOpened = 0;

export async function openAuthorize(t: TestApp, query: string, cookie?: string): Promise<Browser> {
  // Each page from an address of its own: one address may open only so many a minute.
  const n = pagesOpened++;
  const remoteAddress = `10.250.${(n >> 8) & 255}.${n & 255}`;
  const page = await t.app.inject({ method: 'GET', url: `/oauth/authorize?${query}`, remoteAddress, headers: cookie ? { cookie } : {} });
  assert.equal(page.statusCode, 200, page.body);
  const set = page.headers['set-cookie'];
  const jar = cookie ?? String(set).split(';')[0]!;
  return { cookie: jar, request: hiddenField(page.body, 'request'), csrf: hiddenField(page.body, 'csrf_token'), page };
}

export function postForm(t: TestApp, url: string, fields: Record<string, string | undefined>, cookie: string | undefined, remoteAddress = '127.0.0.1'): Promise<LightMyRequestResponse> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) form.append(k, v);
  return t.app.inject({
    method: 'POST',
    url,
    remoteAddress,
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}) },
    payload: form.toString(),
  });
}

export async function signIn(t: TestApp, b: Browser, email: string, password: string, remoteAddress?: string): Promise<LightMyRequestResponse> {
  return postForm(t, '/oauth/authorize/sign-in', { request: b.request, csrf_token: b.csrf, email, password }, b.cookie, remoteAddress);
}

/** The whole browser side: authorize, sign in, approve; returns the redirect's query. */
export async function authorize(t: TestApp, setup: OAuthSetup, overrides: Record<string, string | undefined> = {}): Promise<{ code: string; verifier: string; location: URL }> {
  const { verifier, challenge } = pkce();
  const b = await openAuthorize(t, authorizeQuery(setup, challenge, overrides));
  const consent = await signIn(t, b, setup.email, PASSWORD);
  assert.equal(consent.statusCode, 200, consent.body);
  const answer = await postForm(t, '/oauth/authorize/consent', { request: b.request, csrf_token: hiddenField(consent.body, 'csrf_token'), decision: 'approve' }, b.cookie);
  assert.equal(answer.statusCode, 303, answer.body);
  const location = new URL(String(answer.headers.location));
  const code = location.searchParams.get('code');
  assert.ok(code, `redirect carries a code: ${location}`);
  return { code, verifier, location };
}

export function tokenRequest(t: TestApp, setup: OAuthSetup, fields: Record<string, string | undefined>): Promise<LightMyRequestResponse> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries({ client_id: setup.clientId, client_secret: setup.clientSecret, ...fields })) if (v !== undefined) form.append(k, v);
  return t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() });
}

/** `redirectUri` null leaves the parameter out. */
export function exchangeCode(t: TestApp, setup: OAuthSetup, code: string, verifier: string, redirectUri: string | null = REDIRECT_URI): Promise<LightMyRequestResponse> {
  return tokenRequest(t, setup, { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri ?? undefined });
}

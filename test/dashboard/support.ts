// Driving the dashboard without a browser: a signed-in user's cookies, the CSRF token of the page
// a form is on, and form posts, through app.inject.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createUser } from '../../src/oauth/users.ts';
import type { TestApp } from '../helpers.ts';

export const PASSWORD = 'a long and secret passphrase';

export interface Visitor {
  /** GET a dashboard path (`/dashboard/...`) with the visitor's cookies. */
  get(url: string): Promise<LightMyRequestResponse>;
  /** POST a urlencoded form; `_csrf` is the token of `from` (a page path) unless given. */
  post(url: string, fields: Record<string, string | string[]>, from?: string): Promise<LightMyRequestResponse>;
  /** POST a multipart form with one file field. */
  upload(url: string, fields: Record<string, string>, file: { name: string; filename: string; type: string; content: string | Buffer }, from: string): Promise<LightMyRequestResponse>;
  /** The CSRF token on the page at `url`. */
  csrf(url: string): Promise<string>;
  cookies: Map<string, string>;
}

/** Keeps the cookies an answer sets, byte for byte as a browser keeps them (never decoded). */
function remember(cookies: Map<string, string>, res: LightMyRequestResponse): void {
  for (const header of [res.headers['set-cookie'] ?? []].flat()) {
    const [pair, ...attributes] = header.split(';');
    const eq = pair!.indexOf('=');
    const name = pair!.slice(0, eq).trim();
    const value = pair!.slice(eq + 1).trim();
    if (value === '' || attributes.some((a) => /^\s*max-age=0$/i.test(a))) cookies.delete(name);
    else cookies.set(name, value);
  }
}

export function csrfOf(body: string): string {
  const m = /name="_csrf" value="([^"]+)"/.exec(body);
  assert.ok(m, 'the page has a form with a CSRF token');
  return m[1]!;
}

/** A browser-like visitor: cookies kept between requests. */
export function visitor(t: TestApp): Visitor {
  const cookies = new Map<string, string>();
  const header = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const v: Visitor = {
    cookies,
    async get(url) {
      const res = await t.app.inject({ method: 'GET', url, headers: { cookie: header() } });
      remember(cookies, res);
      return res;
    },
    async csrf(url) {
      const res = await v.get(url);
      assert.equal(res.statusCode, 200, `GET ${url}: ${res.body.slice(0, 300)}`);
      return csrfOf(res.body);
    },
    async post(url, fields, from) {
      const body = new URLSearchParams();
      const withToken = '_csrf' in fields ? fields : { _csrf: await v.csrf(from ?? url), ...fields };
      for (const [k, val] of Object.entries(withToken)) for (const one of [val].flat()) body.append(k, one);
      const res = await t.app.inject({ method: 'POST', url, headers: { cookie: header(), 'content-type': 'application/x-www-form-urlencoded' }, payload: body.toString() });
      remember(cookies, res);
      return res;
    },
    async upload(url, fields, file, from) {
      const boundary = `----dashboard${Math.random().toString(16).slice(2)}`;
      const parts: Buffer[] = [];
      for (const [k, val] of Object.entries({ _csrf: await v.csrf(from), ...fields })) {
        parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${val}\r\n`));
      }
      parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${file.name}"; filename="${file.filename}"\r\nContent-Type: ${file.type}\r\n\r\n`));
      parts.push(Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content));
      parts.push(Buffer.from(`\r\n--${boundary}--\r\n`));
      const res = await t.app.inject({ method: 'POST', url, headers: { cookie: header(), 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: Buffer.concat(parts) });
      remember(cookies, res);
      return res;
    },
  };
  return v;
}

/** A new user of `accountId`, signed in: the visitor carries the session cookie. */
export async function signedIn(t: TestApp, accountId = t.accountId, email = `user-${Math.random().toString(36).slice(2)}@example.com`): Promise<Visitor & { email: string }> {
  await createUser(t.ctx.db, accountId, email, PASSWORD);
  const v = visitor(t);
  const res = await v.post('/dashboard/sign-in', { email, password: PASSWORD }, '/dashboard/sign-in');
  assert.equal(res.statusCode, 303, res.body.slice(0, 500));
  assert.ok(v.cookies.has('dashboard_session'));
  return Object.assign(v, { email });
}

/** The notice a redirect carries to the next page: a success, or (`refused`) a refusal shown as an alert. */
export function noticeOf(res: LightMyRequestResponse, refused = false): string | undefined {
  const c = res.cookies.find((x) => x.name === (refused ? 'dashboard_refusal' : 'dashboard_notice') && x.value !== '');
  // `value.signature` (decoded once by the parser): the signature is base64url, so the last dot separates them.
  return c ? decodeURIComponent(c.value.slice(0, c.value.lastIndexOf('.'))) : undefined;
}

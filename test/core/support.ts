// Machinery for the core tests: every route of the app, token requests, forged JWTs, child processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import { withLowS } from '../../src/auth/ecdsa.ts';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { uuidv7 } from '../../src/db/ids.ts';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { TestApp } from '../helpers.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface AppRoute {
  method: string;
  /** Fastify's form, e.g. `/v1/shipments/:id`. */
  url: string;
}

/** Every route the app serves (HEAD left out), read from Fastify's own route tree. */
export function routesOf(app: FastifyInstance): AppRoute[] {
  const routes: AppRoute[] = [];
  for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
    const tree = app.printRoutes({ method: method as 'GET', commonPrefix: false });
    const stack: string[] = [];
    for (const line of tree.split('\n')) {
      const m = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
      if (!m) continue;
      const depth = m[1]!.length / 4;
      stack.length = depth;
      const url = (stack[depth - 1] ?? '') + m[2]!;
      stack[depth] = url;
      if (m[3]?.split(', ').includes(method)) routes.push({ method, url });
    }
  }
  return routes;
}

/** `/v1/shipments/:id` → `/v1/shipments/{id}`, as OpenAPI writes it. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** A concrete URL for a route: every path parameter becomes a fresh UUID. */
export function concreteUrl(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, () => uuidv7()).replace(/\*$/, 'x');
}

export const FORM = 'application/x-www-form-urlencoded';

export function form(fields: Record<string, string>): string {
  return new URLSearchParams(fields).toString();
}

/** POST /oauth/token with a form body (or the raw payload and headers given). */
export function tokenRequest(t: TestApp, body: Record<string, string> | string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { 'content-type': FORM, ...headers },
    payload: typeof body === 'string' ? body : form(body),
  });
}

/** A client-credentials access token for a new client of the account (all of its scopes unless given). */
export async function accessToken(t: TestApp, accountId: string, scopes?: Parameters<TestApp['newClient']>[1], requested?: string): Promise<string> {
  const client = await t.newClient(accountId, scopes);
  const res = await tokenRequest(t, { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, ...(requested ? { scope: requested } : {}) });
  if (res.statusCode !== 200) throw new Error(`token request failed: ${res.statusCode} ${res.body}`);
  return res.json().access_token;
}

/**
 * A JWT signed with the service's own access-token key, with the claims the service issues (for a
 * client of the account, created here), changed by `claims` and `header`. With no changes it is a
 * token the service accepts.
 */
export async function signWithServiceKey(t: TestApp, accountId: string, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}): Promise<string> {
  const { kid, privateKey } = await t.ctx.keys.signingKey('access_token');
  const { clientId } = await t.newClient(accountId);
  const now = Math.floor(Date.now() / 1000);
  const payload = {
    iss: t.ctx.config.authBaseUrl,
    aud: t.ctx.config.baseUrl,
    sub: clientId,
    iat: now,
    exp: now + 600,
    jti: uuidv7(),
    scope: 'read:shipments write:shipments',
    account_id: accountId,
    client_id: clientId,
    ...claims,
  };
  // In the low-S form the service signs and accepts (src/auth/ecdsa.ts).
  return withLowS(await new SignJWT(payload).setProtectedHeader({ alg: 'ES256', kid, typ: 'at+jwt', ...header } as { alg: string }).sign(privateKey));
}

export const b64url = (value: string | Buffer): string => Buffer.from(value).toString('base64url');

/** A port that was free a moment ago. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface Child {
  process: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first stdout text matching `pattern` (rejects if the process exits first). */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns a command in the project directory and collects what it writes. */
export function spawnChild(command: string, args: string[], env: Record<string, string>, options: { detached?: boolean } = {}): Child {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached });
  let out = '';
  let err = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpExecArray) => void; reject: (e: Error) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      const m = w.pattern.exec(out);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  };
  child.stdout!.on('data', (d) => {
    out += String(d);
    check();
  });
  child.stderr!.on('data', (d) => {
    err += String(d);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      // Let the pipes drain before telling.
      setImmediate(() => {
        for (const w of waiters.splice(0)) w.reject(new Error(`process exited (${code ?? signal}) before printing ${w.pattern}\nstdout: ${out}\nstderr: ${err}`));
        resolve({ code, signal });
      });
    });
  });
  return {
    process: child,
    stdout: () => out,
    stderr: () => err,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        waiters.push({ pattern, resolve, reject });
        check();
      }),
    exited,
  };
}

/** Runs `node src/cli/admin.ts …` (what `npm run admin` runs) and returns its output. */
export async function runAdmin(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnChild(process.execPath, ['src/cli/admin.ts', ...args], env);
  const { code } = await child.exited;
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

/** A DATABASE_URL that another process can open to reach the same database as `t`. */
export async function sharedDatabaseUrl(t: TestApp): Promise<string> {
  if (t.ctx.storage.dialect === 'sqlite') return t.ctx.config.databaseUrl;
  const { sql } = await import('kysely');
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(t.ctx.db);
  const url = new URL(t.ctx.config.databaseUrl);
  url.searchParams.set('options', `-c search_path=${rows[0]!.schema}`);
  return url.toString();
}

/** Checks responses against the document: the status must be declared and the body match its schema. */
export class Conformance {
  readonly #doc: Record<string, any>;
  readonly #ajv: Ajv2020;
  checked = 0;
  constructor(doc: Record<string, any>) {
    this.#doc = doc;
    this.#ajv = new Ajv2020({ strict: false, allErrors: true, formats: { password: true, binary: true } });
    addFormats(this.#ajv);
    this.#ajv.addSchema(doc, 'openapi');
  }

  /** Whether the document has this operation (a route's own URL, `:id` parameters). */
  describes(method: string, routeUrl: string): boolean {
    return Boolean(this.#doc.paths[openApiPath(routeUrl)]?.[method.toLowerCase()]);
  }

  /** A webhook delivery's body against the document's `webhooks` entry for its event kind. */
  checkWebhook(type: string, body: unknown): void {
    assert.ok(this.#doc.webhooks?.[type]?.post, `webhook ${type} is not in the document`);
    const pointer = ['webhooks', type, 'post', 'requestBody', 'content', 'application/json', 'schema'].map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    const validate = this.#ajv.getSchema(`openapi#/${pointer}`) ?? this.#ajv.compile({ $ref: `openapi#/${pointer}` });
    assert.ok(validate(body), `webhook ${type}: body does not match its declared schema: ${this.#ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`);
    this.checked++;
  }

  check(method: string, routeUrl: string, res: LightMyRequestResponse): void {
    const path = openApiPath(routeUrl);
    const where = `${method} ${path} → ${res.statusCode}`;
    const op = this.#doc.paths[path]?.[method.toLowerCase()];
    assert.ok(op, `${method} ${path} is not in the document`);
    const status = String(res.statusCode);
    const declared = op.responses[status] ?? op.responses[`${status[0]}XX`] ?? op.responses.default;
    assert.ok(declared, `${where} is not declared (declared: ${Object.keys(op.responses).join(', ')}); body ${res.body.slice(0, 200)}`);
    // HEAD: the GET's answer is dropped on the way out (what onSend sees still holds it); only the status counts.
    if (method === 'HEAD') return;
    const type = String(res.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (!declared.content) {
      assert.equal(res.body, '', `${where} declares no content but sent ${type}`);
      return;
    }
    if (res.body === '' && res.statusCode === 204) return;
    const media = Object.keys(declared.content).find((m) => m === type || m === '*/*' || (m.endsWith('/*') && type.startsWith(m.slice(0, -1))));
    assert.ok(media, `${where} sent ${type}, declared ${Object.keys(declared.content).join(', ')}`);
    if (!type.includes('json')) return;
    const pointer = ['paths', path, method.toLowerCase(), 'responses', op.responses[status] ? status : op.responses[`${status[0]}XX`] ? `${status[0]}XX` : 'default', 'content', media, 'schema']
      .map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1'))
      .join('/');
    const validate = this.#ajv.getSchema(`openapi#/${pointer}`) ?? this.#ajv.compile({ $ref: `openapi#/${pointer}` });
    const ok = validate(res.json());
    assert.ok(ok, `${where}: body does not match its declared schema: ${this.#ajv.errorsText(validate.errors)}\n${res.body.slice(0, 500)}`);
    this.checked++;
  }
}


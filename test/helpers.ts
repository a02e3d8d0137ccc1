// Shared test machinery: an app on a fresh database (SQLite in a new file, as the service runs it:
// WAL, the read connection and the checkpointer thread; or a private PostgreSQL schema), accounts and
// keys, and a log capture.
import { after, before, describe } from 'node:test';
import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import pg from 'pg';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/log.ts';
import { closeContext, openContext } from '../src/bootstrap.ts';
import { buildApp } from '../src/app.ts';
import type { AppContext } from '../src/context.ts';
import { createAccount, createApiKey, createClient } from '../src/auth/credentials.ts';
import { ALL_SCOPES, type Scope } from '../src/auth/scopes.ts';
import { Conformance } from './core/support.ts';

export const POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export interface DatabaseUnderTest {
  name: 'sqlite' | 'postgres';
  url: string;
}
export const DATABASES: DatabaseUnderTest[] = [
  { name: 'sqlite', url: 'sqlite::memory:' },
  { name: 'postgres', url: POSTGRES_URL },
];

/** Runs the same tests once on SQLite and once on PostgreSQL. */
export function forEachDatabase(fn: (database: DatabaseUnderTest) => void): void {
  for (const database of DATABASES) describe(database.name, () => fn(database));
}

let schemaCounter = 0;
function uniqueSchema(): string {
  return `t_${process.pid}_${++schemaCounter}_${Math.random().toString(36).slice(2, 8)}`;
}

export interface TestAccount {
  accountId: string;
  apiKey: string;
}

export interface TestApp extends TestAccount {
  app: FastifyInstance;
  ctx: AppContext;
  /** Every log line written by the app, as raw JSON text. */
  logs: string[];
  /** `app.inject` with the default account's API key. */
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  newAccount(scopes?: readonly Scope[]): Promise<TestAccount>;
  newClient(accountId: string, scopes?: readonly Scope[], redirectUris?: string[]): Promise<{ clientId: string; clientSecret: string }>;
  close(): Promise<void>;
}

export async function startTestApp(database: DatabaseUnderTest = DATABASES[0]!, env: Record<string, string> = {}): Promise<TestApp> {
  // SQLite: the in-memory default becomes a file of its own, as the service runs (an in-memory
  // database has no read connection); a file URL given by the test is used as it is.
  const dir = database.url === 'sqlite::memory:' ? mkdtempSync(join(tmpdir(), 'shipping-test-')) : undefined;
  const url = dir ? `sqlite:${join(dir, 'test.db')}` : database.url;
  const config = loadConfig({ APP_ENV: 'development', DATABASE_URL: url, PUBLIC_BASE_URL: 'http://localhost:8080', LOG_LEVEL: 'info', WORKER_IDLE_MS: '20', RATE_LIMIT_PER_SECOND: '0', ...env }, '0.0.0-test');
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  const schema = database.name === 'postgres' ? uniqueSchema() : undefined;
  const ctx = await openContext(config, createLogger('info', sink), { schema, servesRequests: true }).catch((err: unknown) => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    throw err;
  });
  const app = await buildApp(ctx);
  const nonconforming = checkEveryAnswer(app);
  await app.ready();
  const newAccount = async (scopes: readonly Scope[] = ALL_SCOPES): Promise<TestAccount> => {
    const account = await createAccount(ctx.db, `acct-${Math.random().toString(36).slice(2)}`);
    const { key } = await createApiKey(ctx.db, account.id, scopes, false);
    return { accountId: account.id, apiKey: key };
  };
  const main = await newAccount();
  return {
    ...main,
    app,
    ctx,
    logs,
    request: (options) => app.inject({ ...options, headers: { 'x-api-key': main.apiKey, ...(options.headers ?? {}) } }),
    newAccount,
    newClient: (accountId, scopes = ALL_SCOPES, redirectUris = []) => createClient(ctx.db, accountId, { scopes, redirectUris, name: 'Test client' }),
    async close() {
      await app.close();
      await closeContext(ctx);
      if (schema) await dropSchema(schema);
      if (dir) rmSync(dir, { recursive: true, force: true });
      if (nonconforming.length) throw new Error(`answers the OpenAPI document does not describe:\n${nonconforming.join('\n')}`);
    },
  };
}

/**
 * Every answer a test receives from an operation of the OpenAPI document must be declared for it and
 * match its schema (§9: "every real response conforms to it"); what does not is listed when the app
 * closes, failing the test file. Paths outside the document (the dashboard, the sign-in pages) and
 * methods a path does not take (404 with Allow) are not checked.
 */
function checkEveryAnswer(app: FastifyInstance): string[] {
  const problems: string[] = [];
  app.addHook('onSend', async (request, reply, payload) => {
    const route = request.routeOptions.url;
    if (!route || (typeof payload !== 'string' && payload !== null && payload !== undefined)) return payload;
    const doc = app.swagger() as Record<string, any>;
    const key = JSON.stringify(doc.servers ?? []) + (doc.info?.version ?? '');
    let conformance = conformances.get(key);
    if (!conformance) {
      conformance = new Conformance(doc);
      conformances.set(key, conformance);
    }
    if (!conformance.describes(request.method, route)) return payload;
    const body = typeof payload === 'string' ? payload : '';
    const headers = reply.getHeaders();
    try {
      conformance.check(request.method, route, { statusCode: reply.statusCode, headers, body, json: () => JSON.parse(body) } as unknown as LightMyRequestResponse);
    } catch (err) {
      problems.push(`${request.method} ${request.url}: ${(err as Error).message.split('\n')[0]}`);
    }
    return payload;
  });
  return problems;
}
const conformances = new Map<string, Conformance>();

/** How many answers `checkEveryAnswer` has checked in this process (its own test counts them). */
export function answersChecked(): number {
  return [...conformances.values()].reduce((n, c) => n + c.checked, 0);
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

export const sampleShipment = {
  carrier: 'UPS',
  service: 'worldwide_saver',
  from: { name: 'Jürgen Müller', company: 'Müller GmbH', street1: 'Hauptstraße 5', city: 'Berlin', postalCode: '10115', country: 'DE', phone: '+49 30 1234567' },
  to: { name: 'Ελένη Παπαδοπούλου', street1: '350 Fifth Avenue', street2: 'Suite 2100', city: 'New York', state: 'NY', postalCode: '10118', country: 'US' },
  parcel: { weight: { value: 1.2, unit: 'kg' }, length: 30, width: 20, height: 10, dimensionUnit: 'cm' },
  reference: 'Order #1001',
  // Berlin to New York crosses a customs border (§12).
  customs: {
    contentsType: 'merchandise',
    items: [{ description: 'Ceramic mug', quantity: 2, netWeight: { value: 0.8, unit: 'kg' }, value: { amount: 40, currency: 'EUR' }, hsCode: '691200', originCountry: 'DE' }],
    signer: 'Jürgen Müller',
  },
} as const;

/** A sender in the United States, for carriers that take parcels only there (USPS). */
export const US_SENDER = { name: 'Lager Süd Inc', street1: '4100 Distribution Dr', city: 'Memphis', state: 'TN', postalCode: '38118', country: 'US' } as const;

/** Creates a shipment through the API and returns its JSON. */
export async function createShipment(t: TestApp, overrides: Record<string, unknown> = {}, apiKey?: string): Promise<Record<string, any>> {
  const res = await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': apiKey ?? t.apiKey }, payload: { ...sampleShipment, ...overrides } });
  if (res.statusCode !== 201) throw new Error(`shipment creation failed: ${res.statusCode} ${res.body}`);
  return res.json();
}

export async function countRows(ctx: AppContext, table: string): Promise<number> {
  const row = await ctx.db.selectFrom(table as 'shipments').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Runs one SQL statement on a SQLite file from another process (a new Node, as the admin command line
 * or a worker process would be), and answers its rows.
 */
export function sqliteInOtherProcess(path: string, sql: string, ...params: string[]): Record<string, unknown>[] {
  const script =
    `const { DatabaseSync } = require('node:sqlite'); const d = new DatabaseSync(${JSON.stringify(path)}); d.exec('PRAGMA busy_timeout = 5000'); ` +
    `process.stdout.write(JSON.stringify(d.prepare(${JSON.stringify(sql)}).all(...${JSON.stringify(params)}))); d.close();`;
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`the other process failed: ${child.stderr}`);
  return JSON.parse(child.stdout) as Record<string, unknown>[];
}

/**
 * Moves this process's clocks forward without waiting: `Date`, `setTimeout` (node:test's mock
 * timers) and `performance.now()` (what the caches' lifetimes read) all advance together on `tick`.
 * Restored when the test ends. Only for tests whose point is a clock; everything else keeps real time.
 */
export function fakeClock(t: import('node:test').TestContext): { tick(ms: number): void } {
  const realNow = performance.now.bind(performance);
  const start = realNow();
  let elapsed = 0;
  t.mock.method(performance, 'now', () => start + elapsed);
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'], now: Date.now() });
  return {
    tick(ms: number) {
      elapsed += ms;
      t.mock.timers.tick(ms);
    },
  };
}

/**
 * The app of the tests around it: started in `before`, closed in `after`. The object it returns stands
 * for the started app inside the tests (using it outside one, before `before` ran, throws).
 */
export function withTestApp(database: DatabaseUnderTest = DATABASES[0]!, env: Record<string, string> = {}): TestApp {
  let started: TestApp | undefined;
  before(async () => {
    started = await startTestApp(database, env);
  });
  after(async () => started?.close());
  return new Proxy({} as TestApp, {
    get(_target, key) {
      if (!started) throw new Error('the test app is used outside a test (before it started)');
      const value = Reflect.get(started, key);
      return typeof value === 'function' ? value.bind(started) : value;
    },
  });
}

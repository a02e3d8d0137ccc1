// When PostgreSQL is gone, silent, or slower than DATABASE_TIMEOUT_MS, a request is answered 503
// UNAVAILABLE with Retry-After, never left hanging and never 500; the process keeps running, and
// answers again as soon as the database does. The service reaches PostgreSQL through a proxy here,
// which the tests stop, start again and hold silent. (SQLite's one way of being unavailable, a write
// lock held past the wait, is checked in test/core/sqlite-transactions.test.ts.)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import { DATABASES, POSTGRES_URL, dropSchema, sampleShipment, startTestApp, type TestApp } from '../helpers.ts';
import { BACKGROUND_TIMEOUT_FACTOR, MIGRATION_LOCK_KEY, isUnavailable, openStorage } from '../../src/db/index.ts';
import { HEALTH_CHECK_MS } from '../../src/health/routes.ts';

const postgres = DATABASES.find((d) => d.name === 'postgres')!;

const TIMEOUT_MS = 500;

/** A TCP proxy in front of PostgreSQL that can refuse, cut and hold connections. */
class DatabaseProxy {
  #server: Server | undefined;
  readonly #pairs = new Set<{ client: Socket; upstream: Socket }>();
  #held = false;
  /** Starts holding at the first chunk from the service that contains this text. */
  #holdAt: string | undefined;
  /** Connections the service closed itself (not the proxy). */
  closedByService = 0;
  readonly #queued: { pair: { client: Socket; upstream: Socket }; chunk: Buffer }[] = [];
  port = 0;

  async start(): Promise<void> {
    const target = new URL(POSTGRES_URL);
    this.#server = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      const pair = { client, upstream };
      this.#pairs.add(pair);
      client.on('data', (chunk: Buffer) => {
        if (this.#holdAt && chunk.includes(this.#holdAt)) {
          this.#held = true;
          this.#holdAt = undefined;
        }
        if (this.#held) this.#queued.push({ pair, chunk });
        else upstream.write(chunk);
      });
      client.on('end', () => this.closedByService++);
      upstream.on('data', (chunk) => client.write(chunk));
      const end = () => {
        client.destroy();
        upstream.destroy();
        this.#pairs.delete(pair);
      };
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve) => this.#server!.listen(this.port, '127.0.0.1', resolve));
    this.port = (this.#server.address() as { port: number }).port;
  }

  /** The server goes away: connections are cut and new ones refused. */
  async stop(): Promise<void> {
    const closed = new Promise((resolve) => this.#server!.close(resolve));
    for (const { client, upstream } of this.#pairs) {
      client.destroy();
      upstream.destroy();
    }
    await closed;
  }

  /** The server says nothing: what the service sends is kept back until `release`. */
  hold(): void {
    this.#held = true;
  }

  /** Holds from the first statement that contains `text` on. */
  holdAt(text: string): void {
    this.#holdAt = text;
  }

  release(): void {
    this.#held = false;
    this.#holdAt = undefined;
    for (const { pair, chunk } of this.#queued.splice(0)) if (!pair.upstream.destroyed) pair.upstream.write(chunk);
  }

  get url(): string {
    const target = new URL(POSTGRES_URL);
    return `postgres://${target.username}@127.0.0.1:${this.port}${target.pathname}`;
  }
}

function assertUnavailable(res: { statusCode: number; headers: Record<string, unknown>; body: string }): void {
  assert.equal(res.statusCode, 503, res.body);
  const body = JSON.parse(res.body) as { code: string; message: string };
  assert.equal(body.code, 'UNAVAILABLE');
  assert.match(body.message, /database/);
  assert.equal(res.headers['retry-after'], '1');
}

describe('PostgreSQL unavailable or too slow: 503, then answers again', () => {
  const proxy = new DatabaseProxy();
  let t: TestApp;
  let shipmentId: string;
  const read = () => t.request({ method: 'GET', url: `/v1/shipments/${shipmentId}` });
  // What would end the service's process: an error nobody listens for, thrown from a callback.
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);

  before(async () => {
    process.on('uncaughtException', onUncaught);
    await proxy.start();
    t = await startTestApp({ name: 'postgres', url: proxy.url }, { DATABASE_TIMEOUT_MS: String(TIMEOUT_MS), DATABASE_POOL_SIZE: '2' });
    const created = await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment });
    assert.equal(created.statusCode, 201, created.body);
    shipmentId = created.json<{ id: string }>().id;
  });
  after(async () => {
    proxy.release();
    await t?.close();
    await proxy.stop().catch(() => {});
    process.off('uncaughtException', onUncaught);
  });

  it('a statement that waits on a lock past DATABASE_TIMEOUT_MS is cancelled: 503, and nothing hangs', async () => {
    const [{ schema }] = (await sql<{ schema: string }>`select current_schema() as schema`.execute(t.ctx.db)).rows as [{ schema: string }];
    const locker = new pg.Client({ connectionString: POSTGRES_URL });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query(`lock table ${schema}.shipments in access exclusive mode`);
      const started = Date.now();
      assertUnavailable(await read());
      const took = Date.now() - started;
      assert.ok(took >= TIMEOUT_MS - 50 && took < TIMEOUT_MS + 3000, `answered after ${took} ms`);
      assert.ok(t.logs.some((line) => line.includes('statement timeout')), 'the cause is logged');
    } finally {
      await locker.query('rollback').catch(() => {});
      await locker.end();
    }
    assert.equal((await read()).statusCode, 200);
  });

  it('no connection free within DATABASE_TIMEOUT_MS: 503', async () => {
    let release!: () => void;
    const holding = new Promise<void>((resolve) => (release = resolve));
    let begun = 0;
    const allBegun = Promise.withResolvers<void>();
    // Both of the pool's connections held by transactions that wait.
    const transactions = [1, 2].map(() =>
      t.ctx.db.transaction().execute(async (tx) => {
        await tx.selectFrom('accounts').select('id').execute();
        if (++begun === 2) allBegun.resolve();
        await holding;
      }),
    );
    await allBegun.promise;
    try {
      const started = Date.now();
      // A write: the API key is remembered for a second, so a read might find all it needs without the database.
      const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment });
      assertUnavailable(res);
      assert.ok(Date.now() - started < TIMEOUT_MS + 3000);
    } finally {
      release();
      await Promise.all(transactions);
    }
    assert.equal((await read()).statusCode, 200);
  });

  it('the server goes away, even under a request in flight: 503 and the process lives; it answers again when the server is back', async () => {
    proxy.hold();
    // In flight: sent, held by the silent server, then its connection is cut.
    const inFlight = t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await proxy.stop();
    proxy.release();
    assertUnavailable(await inFlight);
    // Gone: every connection refused.
    assertUnavailable(await read());
    assertUnavailable(await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment }));
    await proxy.start();
    assert.equal((await read()).statusCode, 200);
    const created = await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment });
    assert.equal(created.statusCode, 201, created.body);
    assert.deepEqual(uncaught.map(String), [], 'a broken connection would have ended the process');
  });

  it('a server that stops answering altogether: 503 within DATABASE_TIMEOUT_MS and a little, then answers again', async () => {
    proxy.hold();
    try {
      const closed = proxy.closedByService;
      const started = Date.now();
      assertUnavailable(await read());
      const took = Date.now() - started;
      assert.ok(took < TIMEOUT_MS + 5000, `answered after ${took} ms`);
      // The connection that waited in vain is closed, never handed to the next request.
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(proxy.closedByService > closed, 'the service kept the connection the server never answered on');
    } finally {
      proxy.release();
    }
    const again = await read();
    assert.equal(again.statusCode, 200, `${again.body}\n${t.logs.slice(-3).join('')}`);
  });
});

describe('PostgreSQL silent in the middle of a transaction', () => {
  const proxy = new DatabaseProxy();
  let t: TestApp;
  before(async () => {
    await proxy.start();
    t = await startTestApp({ name: 'postgres', url: proxy.url }, { DATABASE_TIMEOUT_MS: String(TIMEOUT_MS) });
  });
  after(async () => {
    proxy.release();
    await t?.close();
    await proxy.stop().catch(() => {});
  });

  it('a write whose statement gets no answer is 503 (its ROLLBACK fails with the same cause), and nothing is stored', async () => {
    const before = (await t.request({ method: 'GET', url: '/v1/shipments?limit=100' })).json<unknown[]>().length;
    // BEGIN goes through; the shipment's INSERT is never answered.
    proxy.holdAt('insert into "shipments"');
    try {
      assertUnavailable(await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment }));
    } finally {
      proxy.release();
    }
    const after = await t.request({ method: 'GET', url: '/v1/shipments?limit=100' });
    assert.equal(after.statusCode, 200, after.body);
    assert.equal(after.json<unknown[]>().length, before, 'a shipment was stored by the failed request');
  });

  it('with an Idempotency-Key too: the 503 goes out though the key cannot be released, and the key is held for a while', async () => {
    const headers = { 'idempotency-key': `outage-${Date.now()}` };
    proxy.holdAt('insert into "shipments"');
    try {
      assertUnavailable(await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment, headers }));
    } finally {
      proxy.release();
    }
    assert.ok(t.logs.some((line) => line.includes('could not be stored')), 'the lost key is logged');
    // Its row could not be removed: a retry with it waits until the row counts as abandoned.
    const retry = await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment, headers });
    assert.equal(retry.statusCode, 409, retry.body);
  });
});

describe('the health check on a database that does not answer', () => {
  const proxy = new DatabaseProxy();
  let t: TestApp;
  before(async () => {
    await proxy.start();
    // A request may wait 10 s; the health check does not.
    t = await startTestApp({ name: 'postgres', url: proxy.url }, { DATABASE_TIMEOUT_MS: '10000' });
  });
  after(async () => {
    proxy.release();
    await t?.close();
    await proxy.stop().catch(() => {});
  });

  it(`answers 503 "unavailable" within ${HEALTH_CHECK_MS / 1000} s and a little, then "ok" when the database answers again`, async () => {
    proxy.hold();
    try {
      const started = Date.now();
      const res = await t.app.inject({ method: 'GET', url: '/v1/health' });
      const took = Date.now() - started;
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.json<{ status: string }>().status, 'unavailable');
      assert.ok(took >= HEALTH_CHECK_MS - 50 && took < HEALTH_CHECK_MS + 1500, `answered after ${took} ms`);
    } finally {
      proxy.release();
    }
    const res = await t.app.inject({ method: 'GET', url: '/v1/health' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json<{ status: string }>().status, 'ok');
  });
});

for (const database of DATABASES) {
  describe(`the health check on a database recreated empty under the service (${database.name})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(database);
    });
    after(() => t?.close());

    it('answers 503 "unavailable" while the service\'s tables are missing, and logs why; "ok" once they are back', async () => {
      await sql`alter table kysely_migration rename to kysely_migration_away`.execute(t.ctx.db);
      try {
        const res = await t.app.inject({ method: 'GET', url: '/v1/health' });
        assert.equal(res.statusCode, 503, res.body);
        assert.equal(res.json<{ status: string }>().status, 'unavailable');
        assert.ok(t.logs.some((line) => line.includes('none of the service')), 'the reason is logged');
      } finally {
        await sql`alter table kysely_migration_away rename to kysely_migration`.execute(t.ctx.db);
      }
      const res = await t.app.inject({ method: 'GET', url: '/v1/health' });
      assert.equal(res.statusCode, 200, res.body);
    });
  });
}

describe('a database that does not accept connections, or is gone', () => {
  it('is unavailable (503), not a fault (500)', async () => {
    const name = `outage_${process.pid}_${Date.now()}`;
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    const refusal = async () => {
      const client = new pg.Client({ connectionString: Object.assign(new URL(POSTGRES_URL), { pathname: `/${name}` }).href });
      try {
        await client.connect();
        await client.query('select 1');
        return undefined;
      } catch (err) {
        return err as Error & { code?: string; routine?: string };
      } finally {
        await client.end().catch(() => {});
      }
    };
    try {
      const gone = await refusal();
      assert.equal(gone?.code, '3D000', String(gone));
      assert.equal(isUnavailable(gone), true, String(gone));
      await admin.query(`create database ${name}`);
      await admin.query(`alter database ${name} allow_connections false`);
      const refused = await refusal();
      assert.equal(refused?.code, '55000', String(refused));
      assert.equal(isUnavailable(refused), true, String(refused));
      // Told apart whatever language the server speaks (lc_messages): by the function that raised it.
      assert.equal(refused?.routine, 'CheckMyDatabase', String(refused));
    } finally {
      await admin.query(`drop database if exists ${name}`);
      await admin.end();
    }
    assert.equal(isUnavailable(Object.assign(new Error(`die Datenbank »${name}« erlaubt gegenwärtig keine Verbindungen`), { code: '55000', routine: 'CheckMyDatabase' })), true);
    // Another "object not in prerequisite state" is a fault of the request.
    assert.equal(isUnavailable(Object.assign(new Error('lock was not available'), { code: '55000', routine: 'LockErrorCleanup' })), false);
  });
});

describe('isUnavailable', () => {
  it('tells a database that cannot answer from a request that went wrong', () => {
    assert.equal(isUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', syscall: 'connect' })), true);
    assert.equal(isUnavailable(Object.assign(new Error('connect ENOENT /run/postgresql/.s.PGSQL.5432'), { code: 'ENOENT', syscall: 'connect' })), true);
    assert.equal(isUnavailable(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })), true);
    assert.equal(isUnavailable(new Error('timeout exceeded when trying to connect')), true);
    // A file that is missing is a fault of the service, not an outage.
    assert.equal(isUnavailable(Object.assign(new Error("ENOENT: no such file or directory, open 'x'"), { code: 'ENOENT', syscall: 'open' })), false);
    assert.equal(isUnavailable(Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' })), false);
    assert.equal(isUnavailable(Object.assign(new Error('connection failure'), { code: '08006' })), true);
    // A protocol violation is what a malformed statement of ours gets too.
    assert.equal(isUnavailable(Object.assign(new Error('bind message supplies 1 parameters, but prepared statement requires 2'), { code: '08P01' })), false);
    assert.equal(isUnavailable(new TypeError('x is undefined')), false);
    assert.equal(isUnavailable(undefined), false);
  });
});

describe('DATABASE_TIMEOUT_MS limits what serves requests; background work gets ten times as long; migrations are not limited', () => {
  const schema = `outage_${process.pid}_${Date.now() % 100000}`;
  after(() => dropSchema(schema));

  it('a statement of a process that serves requests is cancelled after the limit; a background one runs on, until ten times the limit', async () => {
    const serving = await openStorage(POSTGRES_URL, { schema, servesRequests: true, timeoutMs: 200 });
    const background = await openStorage(POSTGRES_URL, { schema, timeoutMs: 200 });
    try {
      await assert.rejects(sql`select pg_sleep(0.5)`.execute(serving.db), (err: Error) => {
        assert.match(err.message, /statement timeout/);
        assert.equal(isUnavailable(err), true);
        return true;
      });
      await sql`select pg_sleep(0.5)`.execute(background.db);
      await assert.rejects(sql`select pg_sleep(2.5)`.execute(background.db), /statement timeout/);
    } finally {
      await serving.close();
      await background.close();
    }
  });

  it('a server gone silent fails a background statement after its limit and a little, rather than holding the jobs for ever', async () => {
    const proxy = new DatabaseProxy();
    await proxy.start();
    const background = await openStorage(proxy.url, { schema, timeoutMs: 200 });
    try {
      await sql`select 1`.execute(background.db);
      proxy.hold();
      const started = Date.now();
      await assert.rejects(sql`select 1`.execute(background.db), (err: Error) => isUnavailable(err));
      const took = Date.now() - started;
      // Ten times 200 ms, and the read timeout's 2 s margin: with the requests' own limit it would fail after 2.2 s.
      const limit = 200 * BACKGROUND_TIMEOUT_FACTOR + 2000;
      assert.ok(took >= limit - 100 && took < limit + 3000, `failed after ${took} ms, not about ${limit}`);
    } finally {
      proxy.release();
      await background.close();
      await proxy.stop();
    }
  });

  it('a process that serves requests starts while another holds the migrations\' lock past every limit', async () => {
    const other = new pg.Client({ connectionString: POSTGRES_URL });
    await other.connect();
    let t: TestApp | undefined;
    try {
      // Longer than the statement timeout and the client's read timeout (200 ms + 2 s) together.
      await other.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
      const released = new Promise((resolve) => setTimeout(resolve, 2700)).then(() => other.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]));
      const started = Date.now();
      t = await startTestApp(postgres, { DATABASE_TIMEOUT_MS: '200' });
      assert.ok(Date.now() - started >= 2600, 'the migrations did not wait for the lock');
      await released;
      assert.equal((await t.request({ method: 'GET', url: '/v1/shipments' })).statusCode, 200);
    } finally {
      await t?.close();
      await other.end();
    }
  });
});

// SQLite transactions take the write lock when they begin (BEGIN IMMEDIATE, src/db/sqlite.ts), so a
// transaction that reads and then writes never fails half-way because another process wrote between;
// a statement that meets another connection's lock waits for it without blocking the event loop; and
// reads outside a transaction go to a connection of their own, so they never wait for one, and get
// their turn of the event loop between a transaction's statements.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { withTestApp } from '../helpers.ts';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isUnavailable, migrate, nextCounter, openStorage, type Db } from '../../src/db/index.ts';
import { BUSY_WAIT_MS, CHECKPOINTER_THREAD_NAME } from '../../src/db/sqlite.ts';

describe('SQLite transactions', () => {
  const t = withTestApp();

  it('hold the write lock from their first statement on: another connection cannot begin a write meanwhile', async () => {
    const file = t.ctx.config.databaseUrl.slice('sqlite:'.length);
    const other = new DatabaseSync(file);
    other.exec('PRAGMA busy_timeout = 0');
    try {
      await t.ctx.db.transaction().execute(async (tx) => {
        // Nothing written yet, only read: a deferred transaction would hold no write lock here.
        await tx.selectFrom('accounts').select('id').execute();
        assert.throws(() => other.exec('BEGIN IMMEDIATE'), /database is locked/);
      });
      other.exec('BEGIN IMMEDIATE');
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
  });
});

describe('SQLite lock waits', () => {
  const t = withTestApp();

  it('wait for another connection’s write lock without blocking the event loop, then write', async () => {
    const file = t.ctx.config.databaseUrl.slice('sqlite:'.length);
    const other = new DatabaseSync(file);
    try {
      other.exec('BEGIN IMMEDIATE');
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 1);
      // SQLite's own busy handler would sleep inside this call, so the timer below could never release the lock.
      const write = nextCounter(t.ctx.db, 'lock-wait-test');
      const released = new Promise<void>((resolve) =>
        setTimeout(() => {
          if (other.isOpen && other.isTransaction) other.exec('COMMIT');
          resolve();
        }, 150),
      );
      const value = await write.finally(() => clearInterval(ticker));
      await released;
      assert.equal(value, 1);
      assert.ok(ticks >= 20, `the event loop ran ${ticks} timer ticks while the write waited`);
    } finally {
      if (other.isTransaction) other.exec('ROLLBACK');
      other.close();
    }
  });

  it(`give up after ${BUSY_WAIT_MS / 1000} s with "database is locked", having changed nothing (a request gets 503: isUnavailable)`, async () => {
    const file = t.ctx.config.databaseUrl.slice('sqlite:'.length);
    const other = new DatabaseSync(file);
    try {
      other.exec('BEGIN IMMEDIATE');
      const started = Date.now();
      await assert.rejects(t.ctx.db.transaction().execute((tx) => nextCounter(tx, 'lock-timeout-test')), (err: Error) => {
        assert.match(err.message, /database is locked/);
        assert.equal(isUnavailable(err), true);
        return true;
      });
      assert.ok(Date.now() - started >= BUSY_WAIT_MS - 50);
      other.exec('ROLLBACK');
      const row = await t.ctx.db.selectFrom('counters').selectAll().where('name', '=', 'lock-timeout-test').executeTakeFirst();
      assert.equal(row, undefined);
    } finally {
      if (other.isTransaction) other.exec('ROLLBACK');
      other.close();
    }
  });
});

describe('SQLite reads beside transactions', () => {
  const t = withTestApp();

  /**
   * Runs `statements` writes in one transaction, starts `beside` after the first (by the second, it
   * waits for its turn) and, after the second, a read as an arriving request would come (in a later
   * turn of the event loop). Returns how many of the writes were done when the read answered.
   */
  async function readDuring(db: Db, name: string, statements: number, beside?: () => Promise<unknown>): Promise<{ writesBeforeRead: number; other?: unknown }> {
    let done = 0;
    let writesBeforeRead = -1;
    let read: Promise<void> | undefined;
    let other: Promise<unknown> | undefined;
    const readNow = () =>
      new Promise<void>((resolve, reject) =>
        setImmediate(() =>
          db
            .selectFrom('accounts')
            .select('id')
            .execute()
            .then(() => {
              writesBeforeRead = done;
              resolve();
            }, reject),
        ),
      );
    await db.transaction().execute(async (tx) => {
      for (let i = 0; i < statements; i++) {
        await nextCounter(tx, name);
        done++;
        if (done === 1) other = beside?.();
        if (done === 2) read = readNow();
      }
    });
    await read;
    return { writesBeforeRead, other: await other };
  }

  it('answer between the statements of a transaction, not after all of them (each statement waits a turn of the event loop)', { timeout: 10_000 }, async () => {
    const { writesBeforeRead } = await readDuring(t.ctx.db, 'between-statements-test', 20);
    assert.ok(writesBeforeRead >= 2 && writesBeforeRead < 6, `the read answered after ${writesBeforeRead} of 20 writes`);
  });

  it('wait while other writes wait for their turn: those run back to back, without giving up the event loop', { timeout: 10_000 }, async () => {
    const { writesBeforeRead, other } = await readDuring(t.ctx.db, 'back-to-back-test', 20, () => nextCounter(t.ctx.db, 'back-to-back-test'));
    assert.equal(writesBeforeRead, 20, 'the transaction gave up the event loop while another write waited');
    assert.equal(other, 21);
  });

  it('wait for the whole transaction where the database was opened for background work, which serves no requests (jobs, workers, the admin command)', { timeout: 10_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlite-background-'));
    const storage = await openStorage(`sqlite:${join(dir, 'day.db')}`);
    try {
      await migrate(storage);
      const { writesBeforeRead } = await readDuring(storage.db, 'background-test', 20);
      assert.equal(writesBeforeRead, 20, 'a transaction of background work gave up the event loop while it held the write lock');
    } finally {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answer while a transaction waits for another connection’s write lock, and while writes take their turns', { timeout: 10_000 }, async () => {
    const file = t.ctx.config.databaseUrl.slice('sqlite:'.length);
    const other = new DatabaseSync(file);
    try {
      other.exec('BEGIN IMMEDIATE');
      const write = t.ctx.db.transaction().execute((tx) => nextCounter(tx, 'read-beside-test'));
      const second = nextCounter(t.ctx.db, 'read-beside-test');
      // Both writes now wait (the first for the lock, the second for its turn); a read does not.
      const started = performance.now();
      const accounts = await t.ctx.db.selectFrom('accounts').select('id').execute();
      assert.ok(performance.now() - started < 100, 'the read waited for the writes');
      assert.ok(accounts.some((a) => a.id === t.accountId));
      other.exec('COMMIT');
      assert.deepEqual([await write, await second].sort(), [1, 2]);
    } finally {
      if (other.isTransaction) other.exec('ROLLBACK');
      other.close();
    }
  });

  it('see what has committed, never a transaction’s writes before its commit; inside it, its own writes', { timeout: 10_000 }, async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inside: unknown;
    const tx = t.ctx.db.transaction().execute(async (trx) => {
      await nextCounter(trx, 'isolation-test');
      inside = (await trx.selectFrom('counters').select('value').where('name', '=', 'isolation-test').executeTakeFirst())?.value;
      await held;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const during = await t.ctx.db.selectFrom('counters').select('value').where('name', '=', 'isolation-test').executeTakeFirst();
    assert.equal(during, undefined, 'a read outside saw an uncommitted write');
    assert.equal(Number(inside), 1);
    release();
    await tx;
    const after = await t.ctx.db.selectFrom('counters').select('value').where('name', '=', 'isolation-test').executeTakeFirst();
    assert.equal(Number(after?.value), 1);
  });
});

describe("SQLite's checkpointer", () => {
  const threadNames = () => readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      return [readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim()];
    } catch {
      return []; // the thread ended meanwhile
    }
  });

  it('run on a thread the operating system lists as "checkpointer" while a file is open, and stop with it', async () => {
    const count = () => threadNames().filter((n) => n === CHECKPOINTER_THREAD_NAME).length;
    const before = count();
    const dir = mkdtempSync(join(tmpdir(), 'checkpointer-'));
    const storage = await openStorage(`sqlite:${join(dir, 'db.sqlite')}`);
    // The thread takes its name once it runs, a moment after it is started.
    const until = async (n: number) => {
      for (const deadline = Date.now() + 5000; count() !== n && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 10));
      return count();
    };
    try {
      assert.equal(await until(before + 1), before + 1, `threads: ${threadNames().join(', ')}`);
    } finally {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    }
    assert.equal(await until(before), before, 'the thread outlived its database');
  });
});

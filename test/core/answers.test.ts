// Answers reused until the next commit (src/db/answers.ts): the WAL-index header tells whether anything
// has committed since the last look, in any process, and a shipment read never answers what was true
// before a commit it could have seen. The HTTP tests run on both databases (PostgreSQL has no cache:
// they hold it to the same behaviour); the header's own tests need a SQLite file.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { AnswerCache, CommitWatch, type Commits } from '../../src/db/answers.ts';
import { updateShipmentStatus } from '../../src/shipments/store.ts';
import { createShipment, forEachDatabase, sqliteInOtherProcess, startTestApp, type TestApp } from '../helpers.ts';

/** A WAL database file with one table, and a second connection to it (as another process would hold). */
function walDatabase(): { path: string; writer: DatabaseSync; close(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'answers-test-'));
  const path = join(dir, 'a.db');
  const writer = new DatabaseSync(path);
  writer.exec('PRAGMA journal_mode = WAL');
  writer.exec('create table t (k text primary key, v text not null)');
  writer.exec("insert into t values ('a', 'one')");
  return {
    path,
    writer,
    close() {
      if (writer.isOpen) writer.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A WAL database and a watch on it, both closed after `fn`. */
function withWatch(fn: (db: ReturnType<typeof walDatabase>, watch: CommitWatch) => void): void {
  const db = walDatabase();
  const watch = new CommitWatch(db.path);
  try {
    fn(db, watch);
  } finally {
    watch.close();
    db.close();
  }
}

describe('CommitWatch (the WAL-index header)', () => {
  it('keeps its generation while nothing commits: reads and checkpoints are not commits', () => {
    withWatch((db, watch) => {
      const g = watch.generation();
      assert.ok(g >= 0);
      assert.equal(watch.generation(), g);
      const reader = new DatabaseSync(db.path);
      assert.equal((reader.prepare('select v from t').get() as { v: string }).v, 'one');
      reader.exec('PRAGMA wal_checkpoint(PASSIVE)');
      reader.close();
      assert.equal(watch.generation(), g);
    });
  });

  it('changes after a commit by another connection, and not after a rollback', () => {
    withWatch((db, watch) => {
      const g = watch.generation();
      db.writer.exec("update t set v = 'two' where k = 'a'");
      const g2 = watch.generation();
      assert.notEqual(g2, g);
      assert.equal(watch.generation(), g2, 'the same header twice is the same generation');
      db.writer.exec('begin');
      db.writer.exec("update t set v = 'three' where k = 'a'");
      db.writer.exec('rollback');
      assert.equal(watch.generation(), g2);
    });
  });

  it('changes after a commit by another process', () => {
    withWatch((db, watch) => {
      const g = watch.generation();
      sqliteInOtherProcess(db.path, "update t set v = 'elsewhere'");
      assert.notEqual(watch.generation(), g);
    });
  });

  it('answers -1 when there is no header to read (not in WAL mode), and after close', () => {
    const dir = mkdtempSync(join(tmpdir(), 'answers-test-'));
    try {
      const rollbackJournal = new DatabaseSync(join(dir, 'plain.db'));
      rollbackJournal.exec('create table t (k text)');
      const missing = new CommitWatch(join(dir, 'plain.db'));
      assert.equal(missing.generation(), -1);
      assert.equal(missing.generation(), -1);
      rollbackJournal.close();
      const db = walDatabase();
      const watch = new CommitWatch(db.path);
      assert.ok(watch.generation() >= 0);
      watch.close();
      assert.equal(watch.generation(), -1);
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds the header of the file a symbolic link points to, as SQLite does', () => {
    const db = walDatabase();
    const link = `${db.path}.link`;
    symlinkSync(db.path, link);
    const watch = new CommitWatch(link);
    try {
      const g = watch.generation();
      assert.ok(g >= 0);
      db.writer.exec("update t set v = 'two' where k = 'a'");
      assert.notEqual(watch.generation(), g);
    } finally {
      watch.close();
      db.close();
    }
  });

  it("leaves SQLite's locks in this process alone when it closes", () => {
    // Closing any descriptor of a file drops every POSIX lock the process holds on it. Here a read
    // transaction of this process uses the WAL, so another process's TRUNCATE checkpoint must find it busy.
    const db = walDatabase();
    const reader = new DatabaseSync(db.path);
    const truncate = () => sqliteInOtherProcess(db.path, 'PRAGMA wal_checkpoint(TRUNCATE)')[0] as { busy: number };
    try {
      db.writer.exec("insert into t values ('b', 'in the WAL')");
      reader.exec('begin');
      assert.equal((reader.prepare("select v from t where k = 'b'").get() as { v: string }).v, 'in the WAL');
      assert.equal(truncate().busy, 1, 'the open read transaction holds the WAL');
      const watch = new CommitWatch(db.path);
      assert.ok(watch.generation() >= 0);
      watch.close();
      assert.equal(truncate().busy, 1, 'still held after the watch closed');
      reader.exec('commit');
    } finally {
      reader.close();
      db.close();
    }
  });
});

describe('AnswerCache', () => {
  /** A cache over `db` whose loads read the value of `k` and are counted. */
  function cacheOver(db: { path: string }, maxChars?: number) {
    const watch = new CommitWatch(db.path);
    const reader = new DatabaseSync(db.path);
    const read = reader.prepare('select v from t where k = ?');
    let loads = 0;
    const cache = new AnswerCache(watch, maxChars);
    const get = (k: string) =>
      cache.get(`t ${k}`, () => {
        loads++;
        return (read.get(k) as { v: string } | undefined)?.v ?? null;
      });
    return {
      cache,
      get,
      get loads() {
        return loads;
      },
      close() {
        watch.close();
        reader.close();
      },
    };
  }

  /** A WAL database and a cache over it, both closed after `fn`. */
  function withCache(fn: (db: ReturnType<typeof walDatabase>, c: ReturnType<typeof cacheOver>) => void, maxChars?: number): void {
    const db = walDatabase();
    const c = cacheOver(db, maxChars);
    try {
      fn(db, c);
    } finally {
      c.close();
      db.close();
    }
  }

  it('reuses an answer until the next commit, then reads again and sees the commit', () => {
    withCache((db, c) => {
      assert.equal(c.get('a'), 'one');
      assert.equal(c.get('a'), 'one');
      assert.equal(c.loads, 1);
      db.writer.exec("update t set v = 'two' where k = 'a'");
      assert.equal(c.get('a'), 'two');
      assert.equal(c.loads, 2);
      // A commit that touches another row still drops every answer: the header does not say what changed.
      db.writer.exec("insert into t values ('b', 'bee')");
      assert.equal(c.get('a'), 'two');
      assert.equal(c.loads, 3);
    });
  });

  it('looks at the header before it reads: a commit during the read is seen by the next read', () => {
    withCache((db, c) => {
      // A read that sees 'one' and, before the answer is remembered, another connection commits.
      const value = c.cache.get('t a', () => {
        const v = c.get('a');
        db.writer.exec("update t set v = 'two' where k = 'a'");
        return v;
      });
      assert.equal(value, 'one');
      assert.equal(c.cache.get('t a', () => 'read again'), 'read again', 'the commit after the look drops the answer');
    });
  });

  it('does not remember a missing row: it shows as soon as it is committed', () => {
    withCache((db, c) => {
      assert.equal(c.get('z'), null);
      assert.equal(c.get('z'), null);
      assert.equal(c.loads, 2);
      db.writer.exec("insert into t values ('z', 'zed')");
      assert.equal(c.get('z'), 'zed');
    });
  });

  it('stays within its bound in characters, the oldest answers going first', () => {
    withCache((db, c) => {
      for (let i = 0; i < 40; i++) db.writer.prepare('insert into t values (?, ?)').run(`k${i}`, 'x'.repeat(100));
      for (let i = 0; i < 40; i++) c.get(`k${i}`);
      assert.equal(c.cache.size.answers, 16);
      assert.equal(c.cache.size.chars, 1600);
      const before = c.loads;
      c.get('k39');
      assert.equal(c.loads, before, 'the newest is kept');
      c.get('k0');
      assert.equal(c.loads, before + 1, 'the oldest went');
    }, 1600);
  });

  it('never answers from memory when the header cannot be read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'answers-test-'));
    try {
      let loads = 0;
      const plain = new DatabaseSync(join(dir, 'plain.db'));
      plain.exec('create table t (k text)');
      plain.close();
      const cache = new AnswerCache(new CommitWatch(join(dir, 'plain.db')));
      for (let i = 0; i < 3; i++) assert.equal(cache.get('k', () => (loads++, 'v')), 'v');
      assert.equal(loads, 3);
      assert.equal(cache.size.answers, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('AnswerCache.getAtEndOfTurn', () => {
  /** A header that never changes, counting the looks at it. */
  const counted = (): Commits & { looks: number } => {
    const commits = {
      looks: 0,
      generation(): number {
        commits.looks++;
        return 1;
      },
    };
    return commits;
  };
  const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

  it('answers every read of a turn at its end, after one look at the header, never synchronously', async () => {
    const commits = counted();
    const cache = new AnswerCache(commits);
    const answers: (string | null)[] = [];
    for (const k of ['a', 'b', 'a', 'c', 'a']) cache.getAtEndOfTurn(k, () => `value of ${k}`, (err, answer) => (assert.equal(err, null), answers.push(answer)));
    assert.deepEqual(answers, []);
    assert.equal(commits.looks, 0);
    await endOfTurn();
    assert.deepEqual(answers, ['value of a', 'value of b', 'value of a', 'value of c', 'value of a']);
    assert.equal(commits.looks, 1);
    // The next turn looks again, and finds the answer remembered.
    let again: string | null = null;
    cache.getAtEndOfTurn('a', () => 'read again', (_err, answer) => (again = answer));
    await endOfTurn();
    assert.equal(commits.looks, 2);
    assert.equal(again, 'value of a');
  });

  it('hands a failed read its own error and still answers the others', async () => {
    const cache = new AnswerCache(counted());
    const results: string[] = [];
    cache.getAtEndOfTurn('ok1', () => 'one', (err, answer) => results.push(`${err?.message ?? ''}|${answer}`));
    cache.getAtEndOfTurn('bad', () => { throw new Error('disk on fire'); }, (err, answer) => results.push(`${err?.message ?? ''}|${answer}`));
    cache.getAtEndOfTurn('ok2', () => 'two', (err, answer) => results.push(`${err?.message ?? ''}|${answer}`));
    await endOfTurn();
    assert.deepEqual(results, ['|one', 'disk on fire|null', '|two']);
  });

  it('remembers an answer read through a promise, unless a look during the read saw a commit', async () => {
    let generation = 1;
    const cache = new AnswerCache({ generation: () => generation });
    const ask = (key: string, load: () => Promise<string | null>) => new Promise<string | null>((resolve, reject) => cache.getAtEndOfTurn(key, load, (err, answer) => (err ? reject(err) : resolve(answer))));
    let loads = 0;
    const load = async () => (loads++, 'answer');
    assert.equal(await ask('a', load), 'answer');
    assert.equal(await ask('a', load), 'answer');
    assert.equal(loads, 1, 'remembered');

    let release!: () => void;
    const slow = ask('b', () => new Promise((resolve) => (release = () => resolve('read before the commit'))));
    await endOfTurn(); // the look for 'b' is done and its read is under way
    generation = 2; // a commit, seen by the next look while 'b' is still being read
    assert.equal(await ask('a', load), 'answer');
    assert.equal(loads, 2, 'the commit dropped the remembered answer');
    release();
    assert.equal(await slow, 'read before the commit');
    assert.equal(await ask('b', async () => 'read again'), 'read again', 'not remembered under the newer generation');
    await assert.rejects(ask('c', async () => { throw new Error('no such row'); }), /no such row/);
  });

  it('sees a commit made before the read was asked for, in the same turn', async () => {
    const db = walDatabase();
    const watch = new CommitWatch(db.path);
    const reader = new DatabaseSync(db.path);
    const read = reader.prepare('select v from t where k = ?');
    const load = () => (read.get('a') as { v: string }).v;
    try {
      const cache = new AnswerCache(watch);
      assert.equal(cache.get('a', load), 'one');
      db.writer.exec("update t set v = 'two' where k = 'a'");
      const answer = await new Promise((resolve) => cache.getAtEndOfTurn('a', load, (_err, text) => resolve(text)));
      assert.equal(answer, 'two');
    } finally {
      watch.close();
      reader.close();
      db.close();
    }
  });
});

forEachDatabase((database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database);
  });
  after(async () => t.close());

  const status = async (id: string, apiKey?: string) => {
    const res = await t.request({ method: 'GET', url: `/v1/shipments/${id}`, headers: apiKey ? { 'x-api-key': apiKey } : {} });
    return { code: res.statusCode, body: res.json() as Record<string, unknown> };
  };

  describe('a shipment read after a write', () => {
    it('shows a write committed by the service at once', async () => {
      const s = await createShipment(t);
      assert.equal((await status(s.id)).body.status, 'created');
      assert.equal((await status(s.id)).body.status, 'created');
      await updateShipmentStatus(t.ctx.db, s.id, 'in_transit', new Date().toISOString());
      const after = await status(s.id);
      assert.equal(after.body.status, 'in_transit');
      assert.notEqual(after.body.updatedAt, s.updatedAt);
    });

    it("stays another account's 404 after its owner's read", async () => {
      const s = await createShipment(t);
      assert.equal((await status(s.id)).code, 200);
      const other = await t.newAccount();
      const res = await status(s.id, other.apiKey);
      assert.equal(res.code, 404);
      assert.equal(res.body.code, 'NOT_FOUND');
    });

    if (database.name === 'sqlite') it('shows a write committed by another process at once', async () => {
      const s = await createShipment(t);
      assert.equal((await status(s.id)).body.status, 'created');
      sqliteInOtherProcess(t.ctx.config.databaseUrl.slice('sqlite:'.length), "update shipments set status = 'delivered' where id = ?", s.id);
      assert.equal((await status(s.id)).body.status, 'delivered');
    });
  });
});

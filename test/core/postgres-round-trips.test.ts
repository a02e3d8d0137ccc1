// On PostgreSQL a transaction's BEGIN is held and written with its first statement (src/db/postgres.ts):
// one write and one round trip less, and a transaction still commits all or nothing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { Kysely, sql } from 'kysely';
import type pg from 'pg';
import { postgresDialect, postgresPool } from '../../src/db/postgres.ts';
import { dropSchema, POSTGRES_URL } from '../helpers.ts';

interface Things {
  things: { id: number; name: string };
}

describe('PostgreSQL transactions', () => {
  const schema = `t_${process.pid}_round_trips`;
  let pool: pg.Pool;
  let db: Kysely<Things>;

  before(async () => {
    const admin = postgresPool(POSTGRES_URL);
    await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await admin.end();
    pool = postgresPool(POSTGRES_URL, schema);
    db = new Kysely<Things>({ dialect: postgresDialect(pool) });
    await sql`create table things (id integer primary key, name text not null)`.execute(db);
  });
  after(async () => {
    await db.destroy();
    await dropSchema(schema);
  });

  /** Counts the socket writes a client makes while `fn` runs. */
  async function writesDuring(client: pg.PoolClient, fn: () => Promise<unknown>): Promise<number> {
    const stream = (client as unknown as { connection: { stream: Socket } }).connection.stream as Socket & {
      _write: (...args: unknown[]) => void;
      _writev: (...args: unknown[]) => void;
    };
    const write = stream._write;
    const writev = stream._writev;
    let writes = 0;
    stream._write = (...args) => {
      writes++;
      write.apply(stream, args);
    };
    stream._writev = (...args) => {
      writes++;
      writev.apply(stream, args);
    };
    try {
      await fn();
    } finally {
      stream._write = write;
      stream._writev = writev;
    }
    return writes;
  }

  it('writes BEGIN and the first statement in one write, and both run', async () => {
    const client = await pool.connect();
    try {
      const writes = await writesDuring(client, async () => {
        await client.query('begin', []);
        await client.query('insert into things (id, name) values ($1, $2)', [1, 'one']);
      });
      assert.equal(writes, 1);
      // In a transaction: another connection does not see the row yet.
      const other = await pool.query('select count(*) as n from things');
      assert.equal(other.rows[0].n, 0);
      await client.query('rollback');
    } finally {
      client.release();
    }
    assert.equal((await pool.query('select count(*) as n from things')).rows[0].n, 0);
  });

  it('commits every statement of a transaction, or none when a later one fails', async () => {
    await db.transaction().execute(async (tx) => {
      await tx.insertInto('things').values({ id: 10, name: 'ten' }).execute();
      await tx.insertInto('things').values({ id: 11, name: 'eleven' }).execute();
    });
    await assert.rejects(
      db.transaction().execute(async (tx) => {
        await tx.insertInto('things').values({ id: 12, name: 'twelve' }).execute();
        await tx.insertInto('things').values({ id: 10, name: 'again' }).execute();
      }),
      (err: { code?: string }) => err.code === '23505',
    );
    const rows = await db.selectFrom('things').select('id').where('id', '>=', 10).orderBy('id').execute();
    assert.deepEqual(
      rows.map((r) => r.id),
      [10, 11],
    );
  });

  it('rejects a transaction whose first statement fails, changes nothing, and the connection goes on', async () => {
    for (let i = 0; i < 12; i++) {
      await assert.rejects(
        db.transaction().execute(async (tx) => {
          await sql`insert into things (id, name) values (${20 + i}, ${null})`.execute(tx);
        }),
        (err: { code?: string }) => err.code === '23502',
      );
    }
    assert.equal((await db.selectFrom('things').select('id').where('id', '>=', 20).execute()).length, 0);
    // Every connection of the pool is still usable, in and out of transactions.
    await Promise.all(Array.from({ length: 12 }, (_, i) => db.transaction().execute((tx) => tx.insertInto('things').values({ id: 40 + i, name: 'ok' }).execute())));
    assert.equal((await db.selectFrom('things').select('id').where('id', '>=', 40).execute()).length, 12);
  });

  it('commits a transaction that ran no statement', async () => {
    await db.transaction().execute(async () => {});
    assert.equal((await pool.query('select 1 as one')).rows[0].one, 1);
  });
});

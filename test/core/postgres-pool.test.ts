// DATABASE_POOL_SIZE: the most connections a PostgreSQL pool of the process opens. With one, a
// statement waits while a transaction holds the connection; with two, it does not; the API works
// either way. (SQLite has its own two connections and ignores the setting.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DATABASES, sampleShipment, startTestApp } from '../helpers.ts';

const postgres = DATABASES.find((d) => d.name === 'postgres')!;

/** Whether a read finishes while another transaction holds a connection, within `ms`. */
async function readsBesideATransaction(poolSize: string, ms: number): Promise<boolean> {
  const t = await startTestApp(postgres, { DATABASE_POOL_SIZE: poolSize });
  try {
    let release!: () => void;
    let begun!: () => void;
    const holding = new Promise<void>((resolve) => (release = resolve));
    const inside = new Promise<void>((resolve) => (begun = resolve));
    const transaction = t.ctx.db.transaction().execute(async (tx) => {
      await tx.selectFrom('accounts').select('id').execute();
      begun();
      await holding;
    });
    await inside;
    const read = t.ctx.db.selectFrom('accounts').select('id').execute().then(() => true);
    const finished = await Promise.race([read, new Promise<false>((resolve) => setTimeout(() => resolve(false), ms))]);
    release();
    await transaction;
    assert.equal(await read, true, 'the read finishes once the transaction has ended');
    // The API over a pool of this size: a write and a read back.
    const created = await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment });
    assert.equal(created.statusCode, 201, created.body);
    const back = await t.request({ method: 'GET', url: `/v1/shipments/${created.json<{ id: string }>().id}` });
    assert.equal(back.statusCode, 200, back.body);
    return finished;
  } finally {
    await t.close();
  }
}

describe('DATABASE_POOL_SIZE on PostgreSQL', () => {
  it('one connection: a read waits for the transaction that holds it', async () => {
    assert.equal(await readsBesideATransaction('1', 300), false);
  });

  it('two connections: the read goes beside the transaction', async () => {
    assert.equal(await readsBesideATransaction('2', 5_000), true);
  });
});

// Prepared hot reads (src/db/prepared.ts): on a SQLite file they run on the read connection, which sees
// exactly what has been committed; inside a transaction they see the transaction's own writes. Both
// databases.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { findShipment, insertShipment, type ShipmentRow } from '../../src/shipments/store.ts';
import { getShipment } from '../../src/shipments/service.ts';
import { migrate, openStorage } from '../../src/db/index.ts';
import { uuidv7 } from '../../src/db/ids.ts';
import { forEachDatabase, startTestApp, type TestApp } from '../helpers.ts';

function row(accountId: string): ShipmentRow {
  const now = new Date().toISOString();
  const address = JSON.stringify({ name: 'Ana', street1: '1 Rua', city: 'Lisboa', postalCode: '1000-001', country: 'PT' });
  return {
    id: uuidv7(), account_id: accountId, carrier: 'UPS', service: 'ground', from_address: address, to_address: address,
    parcel: '{"weight":{"value":1,"unit":"kg"}}', reference: null, status: 'created', label_id: null, tracking_number: null, created_at: now, updated_at: now,
  };
}

forEachDatabase((database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database);
  });
  after(async () => t.close());

  describe('prepared reads', () => {
    it('see a write only once its transaction has committed, and a transaction sees its own writes', async () => {
      const r = row(t.accountId);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let inserted!: () => void;
      const written = new Promise<void>((resolve) => (inserted = resolve));
      const tx = t.ctx.db.transaction().execute(async (trx) => {
        await insertShipment(trx, r);
        assert.equal((await findShipment(trx, t.accountId, r.id))?.id, r.id, 'the transaction reads its own write');
        inserted();
        await held;
      });
      await written;
      // On SQLite a read through the service's one connection would wait for the transaction (and a
      // synchronous read on it would see the uncommitted row); the read connection sees the last commit.
      if (database.name === 'sqlite') assert.equal(await findShipment(t.ctx.db, t.accountId, r.id), undefined, 'uncommitted rows are invisible');
      release();
      await tx;
      assert.deepEqual({ ...(await findShipment(t.ctx.db, t.accountId, r.id)) }, r);
      assert.equal(await findShipment(t.ctx.db, 'another-account', r.id), undefined);
    });

    it('never see a rolled-back write', async () => {
      const r = row(t.accountId);
      await assert.rejects(
        t.ctx.db.transaction().execute(async (trx) => {
          await insertShipment(trx, r);
          throw new Error('roll back');
        }),
        /roll back/,
      );
      assert.equal(await findShipment(t.ctx.db, t.accountId, r.id), undefined);
    });

    // The read connection is SQLite's alone; PostgreSQL reads go through Kysely's pool.
    if (database.name === 'sqlite') it('follow a column added by another process while they run (SQLite prepares `select *` again)', async () => {
      const r = row(t.accountId);
      await insertShipment(t.ctx.db, r);
      assert.equal((await findShipment(t.ctx.db, t.accountId, r.id))?.id, r.id);
      const other = new DatabaseSync(t.ctx.config.databaseUrl.slice('sqlite:'.length));
      try {
        other.exec("alter table shipments add column added_later text not null default 'yes'");
      } finally {
        other.close();
      }
      const again = (await findShipment(t.ctx.db, t.accountId, r.id)) as unknown as Record<string, unknown>;
      assert.equal(again.id, r.id);
      assert.equal(again.added_later, 'yes');
    });
  });
});

describe('prepared reads on an in-memory SQLite database (one connection, no read connection)', () => {
  it('go through Kysely: nothing at once, the promise answers', async () => {
    const storage = await openStorage('sqlite::memory:');
    try {
      await migrate(storage);
      await storage.db.insertInto('accounts').values({ id: 'acct', name: 'memory', created_at: new Date().toISOString() }).execute();
      const r = row('acct');
      await insertShipment(storage.db, r);
      assert.equal((await findShipment(storage.db, 'acct', r.id))?.id, r.id);
      assert.equal((await getShipment(storage.db, 'acct', r.id)).id, r.id);
    } finally {
      await storage.close();
    }
  });
});

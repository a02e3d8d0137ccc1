// The fan-out hands the deliveries it creates to the worker's delivery engine, already claimed:
// they are sent without a claim of their own, only as many as the engine has room for, never one
// that another worker created, and the slots it held come back either way.
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import assert from 'node:assert/strict';
import { createShipment, forEachDatabase, startTestApp, type TestAccount, type TestApp } from '../helpers.ts';
import { DeliveryEngine, fanOut } from '../../src/webhooks/jobs.ts';
import { startReceiver, type Receiver } from './receiver.ts';

forEachDatabase((database) => {
  let t: TestApp;
  let rx: Receiver;
  let acct: TestAccount;
  let hookId: string;
  before(async () => {
    t = await startTestApp(database);
    rx = await startReceiver();
    acct = await t.newAccount();
    const res = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': acct.apiKey }, payload: { url: `${rx.url}/hooks`, events: ['shipment.created'] } });
    assert.equal(res.statusCode, 201, res.body);
    hookId = res.json().id;
  });
  after(async () => {
    await rx.close();
    await t.close();
  });

  const rows = () => t.ctx.db.selectFrom('webhook_deliveries').select(['id', 'event_id', 'status', 'attempt_count', 'next_attempt_at', 'locked_until']).where('webhook_id', '=', hookId).orderBy('id').execute();

  describe('fan-out with the delivery engine', { timeout: 30_000 }, () => {
    it('creates as many deliveries leased as the engine has room for, sends them without a claim, and leaves the rest due', async () => {
      for (let i = 0; i < 3; i++) await createShipment(t, {}, acct.apiKey);
      const engine = new DeliveryEngine(2);
      try {
        const result = await fanOut(t.ctx, engine);
        assert.deepEqual(result, { events: 3, deliveries: 3, claimed: 2 });
        // Sent by the fan-out alone: no claim has run.
        const received = await rx.waitFor(2);
        assert.equal(received.length, 2);
        await engine.settle();
        const after = await rows();
        assert.equal(after.length, 3);
        const sent = after.filter((r) => r.status === 'succeeded');
        assert.equal(sent.length, 2);
        for (const r of sent) assert.equal(r.attempt_count, 1);
        const [left] = after.filter((r) => r.status === 'pending');
        assert.ok(left, 'the third delivery is still pending');
        assert.equal(left.attempt_count, 0);
        assert.equal(left.locked_until, null, 'not leased: the engine had no room for it');
        assert.ok(left.next_attempt_at !== null && left.next_attempt_at <= new Date().toISOString(), 'due now, for a claim');
        assert.deepEqual(new Set(received.map((r) => JSON.parse(r.body).id)), new Set(sent.map((r) => r.event_id)));
        // The engine's own claim takes the rest (its slots came back when the first two finished).
        assert.equal(await engine.run(t.ctx), 1);
        await engine.settle();
        assert.equal((await rx.waitFor(3)).length, 3);
        assert.ok((await rows()).every((r) => r.status === 'succeeded' && r.attempt_count === 1));
      } finally {
        await engine.close();
      }
    });

    it('never sends a delivery it did not create (an event fanned out again), and gives back the slots it held', async () => {
      const before = rx.received.length;
      const shipment = await createShipment(t, {}, acct.apiKey);
      // Another worker's fan-out created this event's delivery; the event looks undispatched again.
      assert.deepEqual(await fanOut(t.ctx), { events: 1, deliveries: 1, claimed: 0 });
      const event = await t.ctx.db.selectFrom('domain_events').select('id').where('shipment_id', '=', shipment.id).executeTakeFirstOrThrow();
      await t.ctx.db.updateTable('domain_events').set({ dispatched_at: null }).where('id', '=', event.id).execute();
      const engine = new DeliveryEngine(1);
      try {
        assert.deepEqual(await fanOut(t.ctx, engine), { events: 1, deliveries: 1, claimed: 0 });
        await engine.settle();
        assert.equal(rx.received.length, before, 'nothing sent by the fan-out');
        // Its one slot is free again: the claim takes the existing delivery and sends it once.
        assert.equal(await engine.run(t.ctx), 1);
        await engine.settle();
        assert.equal(rx.received.length, before + 1);
        const mine = (await rows()).filter((r) => r.event_id === event.id);
        assert.equal(mine.length, 1);
        assert.equal(mine[0]!.status, 'succeeded');
        assert.equal(mine[0]!.attempt_count, 1);
      } finally {
        await engine.close();
      }
    });

    it('a lease is taken once: a second take is refused and holds nothing', async () => {
      const engine = new DeliveryEngine(1);
      try {
        const lease = await engine.lease(t.ctx);
        assert.equal(lease.take(1), 1);
        assert.throws(() => lease.take(1), /taken once/);
        lease.start([], [], []);
        // The one slot is free again: the next lease gets it.
        const next = await engine.lease(t.ctx);
        assert.equal(next.take(1), 1);
        next.start([], [], []);
      } finally {
        await engine.close();
      }
    });

    it('starts nothing when its transaction rolls back, and gives its slots back for the next fan-out', async () => {
      const before = rx.received.length;
      await createShipment(t, {}, acct.apiKey);
      // Every insert of a delivery fails: the fan-out's transaction rolls back after it took its slot.
      const postgres = t.ctx.storage.dialect === 'postgres';
      if (postgres) {
        await sql`create function refuse_delivery() returns trigger language plpgsql as $$ begin raise exception 'refused'; end $$`.execute(t.ctx.db);
        await sql`create trigger refuse_delivery before insert on webhook_deliveries for each row execute function refuse_delivery()`.execute(t.ctx.db);
      } else {
        await sql`create trigger refuse_delivery before insert on webhook_deliveries begin select raise(abort, 'refused'); end`.execute(t.ctx.db);
      }
      const engine = new DeliveryEngine(1);
      try {
        await assert.rejects(fanOut(t.ctx, engine), /refused/);
        await engine.settle();
        assert.equal(rx.received.length, before, 'nothing sent from a rolled-back fan-out');
        assert.equal((await rows()).length, 4, 'no delivery row was left behind');
        await sql.raw(postgres ? 'drop trigger refuse_delivery on webhook_deliveries' : 'drop trigger refuse_delivery').execute(t.ctx.db);
        // The event is still undispatched; the engine's one slot is free again, so the fan-out sends it.
        assert.deepEqual(await fanOut(t.ctx, engine), { events: 1, deliveries: 1, claimed: 1 });
        await engine.settle();
        assert.equal(rx.received.length, before + 1);
      } finally {
        await engine.close();
        if (postgres) await sql`drop function if exists refuse_delivery() cascade`.execute(t.ctx.db);
        else await sql`drop trigger if exists refuse_delivery`.execute(t.ctx.db);
      }
    });
  });
});

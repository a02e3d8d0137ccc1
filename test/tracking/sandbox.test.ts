import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { openContext } from '../../src/bootstrap.ts';
import { createLogger } from '../../src/log.ts';
import { jobs, startWorker, type Job } from '../../src/worker.ts';
import { SANDBOX_SCRIPTS, sandboxOutcome } from '../../src/tracking/sandbox.ts';
import type { AppContext } from '../../src/context.ts';
import { countRows, forEachDatabase, startTestApp, type TestApp } from '../helpers.ts';
import { createLabel, domainEvents, lookup, postEvents, type TrackedLabel } from './fixtures.ts';

const sandboxJob = (): Job => {
  const job = jobs().find((j) => j.name === 'sandbox-carrier');
  assert.ok(job, 'the worker runs the sandbox carrier');
  return job;
};

/** Polls until `done` holds; the sandbox runs in accelerated time, so this is seconds at most. */
async function until(done: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function history(t: TestApp, label: TrackedLabel) {
  const res = await lookup(t, label.id, 'format=detailed&sort=oldest_first&limit=100');
  assert.equal(res.statusCode, 200);
  return res.json() as { status: string; events: { status: string; location: string; carrier: string; timestamp: string }[] };
}

const finished = (t: TestApp, labels: TrackedLabel[]) => async () => {
  for (const l of labels) if ((await history(t, l)).events.length < 4) return false;
  return true;
};

describe('sandbox triggers', () => {
  it('are the shipment reference containing SANDBOX_EXCEPTION or SANDBOX_RETURNED, in any case; anything else is delivered', () => {
    assert.equal(sandboxOutcome(null), 'delivered');
    assert.equal(sandboxOutcome('Order #1001'), 'delivered');
    assert.equal(sandboxOutcome('SANDBOX_DELIVERED'), 'delivered');
    assert.equal(sandboxOutcome('order 7 sandbox_exception'), 'exception');
    assert.equal(sandboxOutcome('SANDBOX_RETURNED please'), 'returned');
  });
});

forEachDatabase((database) => {
  describe('the sandbox carrier', () => {
    it('moves new labels pre_transit → in_transit → out_for_delivery → delivered, or to the triggered exception or return, through the same ingestion as the API', async () => {
      const t = await startTestApp(database, { SANDBOX_STEP_SECONDS: '0.05' });
      const worker = startWorker(t.ctx, [sandboxJob()]);
      try {
        const delivered = await createLabel(t);
        const exception = await createLabel(t, { carrier: 'FedEx', service: 'international_priority', reference: 'Order 7 SANDBOX_EXCEPTION' });
        const returned = await createLabel(t, { carrier: 'DHL', service: 'express_worldwide', reference: 'sandbox_returned' });
        await until(finished(t, [delivered, exception, returned]), 'three parcels to finish');

        const d = await history(t, delivered);
        assert.deepEqual(d.events.map((e) => e.status), ['pre_transit', 'in_transit', 'out_for_delivery', 'delivered']);
        assert.equal(d.status, 'delivered');
        assert.deepEqual(d.events.map((e) => e.location), ['Berlin, DE', 'Berlin, DE', 'New York, NY, US', 'New York, NY, US']);
        assert.ok(d.events.every((e) => e.carrier === 'UPS'));
        const times = d.events.map((e) => Date.parse(e.timestamp));
        assert.ok(times.every((x, i) => i === 0 || x > times[i - 1]!), 'steps happen one after the other');

        const x = await history(t, exception);
        assert.deepEqual(x.events.map((e) => e.status), ['pre_transit', 'in_transit', 'out_for_delivery', 'exception']);
        const r = await history(t, returned);
        assert.deepEqual(r.events.map((e) => e.status), ['pre_transit', 'in_transit', 'exception', 'returned']);

        // The same domain events as events sent through the API.
        assert.deepEqual((await domainEvents(t, delivered.shipmentId)).map((e) => e.type), ['shipment.created', 'shipment.in_transit', 'shipment.in_transit', 'shipment.delivered']);
        assert.deepEqual((await domainEvents(t, exception.shipmentId)).map((e) => e.type), ['shipment.created', 'shipment.in_transit', 'shipment.in_transit', 'shipment.exception']);
        assert.deepEqual((await domainEvents(t, returned.shipmentId)).map((e) => e.type), ['shipment.created', 'shipment.in_transit', 'shipment.exception', 'shipment.exception']);
        const last = (await domainEvents(t, delivered.shipmentId)).at(-1)!.data;
        assert.equal(last.status, 'delivered');
        assert.equal(last.event.status, 'delivered');
        assert.deepEqual(last.label, { id: delivered.id, trackingNumber: delivered.trackingNumber, carrier: 'UPS' });
        const shipment = (await t.request({ method: 'GET', url: `/v1/shipments/${returned.shipmentId}` })).json();
        assert.equal(shipment.status, 'returned');
      } finally {
        await worker.stop();
        await t.close();
      }
    });

    it('does each step once with two worker loops at once (two connection pools on PostgreSQL)', async () => {
      const t = await startTestApp(database, { SANDBOX_STEP_SECONDS: '0' });
      let second: AppContext = t.ctx;
      if (database.name === 'postgres') {
        const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(t.ctx.db);
        second = await openContext(t.ctx.config, createLogger('silent'), { schema: rows[0]!.schema });
      }
      const labels: TrackedLabel[] = [];
      for (let i = 0; i < 6; i++) labels.push(await createLabel(t, { reference: i % 3 === 1 ? 'SANDBOX_EXCEPTION' : i % 3 === 2 ? 'SANDBOX_RETURNED' : `Order ${i}` }));
      const workers = [startWorker(t.ctx, [sandboxJob()]), startWorker(second, [sandboxJob()])];
      try {
        await until(finished(t, labels), 'six parcels to finish');
      } finally {
        for (const w of workers) await w.stop();
        if (second !== t.ctx) await second.storage.close();
      }
      try {
        for (const [i, label] of labels.entries()) {
          const outcome = i % 3 === 1 ? 'exception' : i % 3 === 2 ? 'returned' : 'delivered';
          const h = await history(t, label);
          assert.deepEqual(h.events.map((e) => e.status), SANDBOX_SCRIPTS[outcome].map((s) => s.status), `label ${i}`);
          assert.equal((await domainEvents(t, label.shipmentId)).length, 4, 'created plus three status changes, none twice');
        }
        assert.equal(await countRows(t.ctx, 'tracking_events'), 24);
        const parcels = await t.ctx.db.selectFrom('sandbox_parcels').select(['step', 'next_at']).execute();
        assert.equal(parcels.length, 6);
        assert.ok(parcels.every((p) => p.step === 4 && p.next_at === null));
      } finally {
        await t.close();
      }
    });

    it('stops moving a label once events for it come in through the API, or once it is invalidated', async () => {
      const t = await startTestApp(database, { SANDBOX_STEP_SECONDS: '0' });
      const job = sandboxJob();
      try {
        const takenOver = await createLabel(t);
        const invalidated = await createLabel(t);
        // One run does at most one step of a parcel: run until the first step is done.
        while ((await history(t, takenOver)).events.length === 0) await job.run(t.ctx);
        assert.equal(await countRows(t.ctx, 'sandbox_parcels'), 2, 'both labels are taken on');
        assert.deepEqual((await history(t, takenOver)).events.map((e) => e.status), ['pre_transit']);
        const res = await postEvents(t, [{ trackingNumber: takenOver.trackingNumber, status: 'exception', timestamp: new Date(Date.now() + 60_000).toISOString(), location: 'Customs, DE' }]);
        assert.equal(res.statusCode, 202);
        assert.equal((await t.request({ method: 'PUT', url: `/v1/labels/${invalidated.id}/invalidate` })).statusCode, 204);
        while ((await job.run(t.ctx)) > 0);
        assert.deepEqual((await history(t, takenOver)).events.map((e) => e.status), ['pre_transit', 'exception']);
        assert.deepEqual((await history(t, invalidated)).events.map((e) => e.status), ['pre_transit']);
        // Invalidated before the sandbox saw it: never taken on.
        const late = await createLabel(t);
        await t.request({ method: 'PUT', url: `/v1/labels/${late.id}/invalidate` });
        while ((await job.run(t.ctx)) > 0);
        assert.deepEqual((await history(t, late)).events, []);
      } finally {
        await t.close();
      }
    });

    it('never takes on a label whose events came through the API before its first look, and still takes on the others', async () => {
      const t = await startTestApp(database, { SANDBOX_STEP_SECONDS: '0' });
      const job = sandboxJob();
      try {
        const moved = await createLabel(t);
        const reported = await createLabel(t);
        const res = await postEvents(t, [{ trackingNumber: reported.trackingNumber, status: 'exception', timestamp: new Date().toISOString(), location: 'Boston, MA, US' }]);
        assert.equal(res.statusCode, 202);
        while ((await job.run(t.ctx)) > 0);
        const r = await history(t, reported);
        assert.equal(r.status, 'exception');
        assert.deepEqual(r.events.map((e) => e.status), ['exception'], 'no sandbox event after the API took the label over');
        assert.deepEqual((await history(t, moved)).events.map((e) => e.status), ['pre_transit', 'in_transit', 'out_for_delivery', 'delivered']);
        const kinds = (await domainEvents(t, reported.shipmentId)).map((e) => e.type);
        assert.ok(!kinds.includes('shipment.delivered') && !kinds.includes('shipment.in_transit'), kinds.join(', '));
      } finally {
        await t.close();
      }
    });

    it('is off with SANDBOX_TRACKING=0', async () => {
      const t = await startTestApp(database, { SANDBOX_TRACKING: '0', SANDBOX_STEP_SECONDS: '0' });
      try {
        const label = await createLabel(t);
        assert.equal(await sandboxJob().run(t.ctx), 0);
        assert.equal(await countRows(t.ctx, 'sandbox_parcels'), 0);
        const h = await history(t, label);
        assert.equal(h.status, 'pre_transit');
        assert.deepEqual(h.events, []);
      } finally {
        await t.close();
      }
    });
  });
});

// A committed domain event wakes this process's fan-out at once (both drivers announce after commit),
// so a delivery never waits for the worker's idle sleep; an event still inside its transaction wakes
// nothing, and one that rolls back is never delivered.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createShipment, forEachDatabase, startTestApp, type TestApp } from '../helpers.ts';
import { startWorker, type Worker } from '../../src/worker.ts';
import { webhookJobs } from '../../src/webhooks/jobs.ts';
import { onDomainEventWritten, recordDomainEvent } from '../../src/db/events.ts';
import { startReceiver, type Receiver } from './receiver.ts';

forEachDatabase((database) => {
  let t: TestApp;
  let worker: Worker;
  let rx: Receiver;
  before(async () => {
    // The idle sleep is a minute: only the wake-up can make a delivery arrive within the test's seconds.
    t = await startTestApp(database, { WORKER_IDLE_MS: '60000' });
    rx = await startReceiver();
    const res = await t.request({ method: 'POST', url: '/v1/webhooks', payload: { url: `${rx.url}/hooks`, events: ['shipment.created'] } });
    assert.equal(res.statusCode, 201, res.body);
    worker = startWorker(t.ctx, webhookJobs());
    // Let both jobs find nothing and fall asleep, and their busy second after starting run out.
    await new Promise((r) => setTimeout(r, 1300));
  });
  after(async () => {
    await worker.stop();
    await rx.close();
    await t.close();
  });

  it('announces an event at its commit, not at its insert, and a rolled-back event not at all', async () => {
    let wakes = 0;
    const unsubscribe = onDomainEventWritten(() => wakes++);
    try {
      await t.ctx.db.transaction().execute(async (tx) => {
        await recordDomainEvent(tx, { accountId: t.accountId, type: 'batch.completed', subjectId: 'b1', data: {} });
        await recordDomainEvent(tx, { accountId: t.accountId, type: 'batch.completed', subjectId: 'b2', data: {} });
        assert.equal(wakes, 0, 'nothing is announced before the commit');
      });
      assert.equal(wakes, 1, 'one wake-up for the transaction');
      await assert.rejects(
        t.ctx.db.transaction().execute(async (tx) => {
          await recordDomainEvent(tx, { accountId: t.accountId, type: 'batch.completed', subjectId: 'b3', data: {} });
          throw new Error('rolled back');
        }),
        /rolled back/,
      );
      assert.equal(wakes, 1, 'a rollback announces nothing');
    } finally {
      unsubscribe();
    }
  });

  it('delivers a new shipment’s webhook within seconds while the worker sleeps for a minute', async () => {
    const started = Date.now();
    const shipment = await createShipment(t);
    const [req] = await rx.waitFor(1);
    assert.equal(JSON.parse(req!.body).data.id, shipment.id);
    assert.ok(Date.now() - started < 30_000);
  });
});

// §11: a batch survives a crash. A worker process is killed with SIGKILL in the middle of a batch; a
// new one finishes it, and every item was done exactly once: one shipment per inline item, one label
// per shipment, no tracking number twice, the counts adding up. On both databases.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forEachDatabase, sampleShipment, withTestApp, type TestApp } from '../helpers.ts';
import { sharedDatabaseUrl, spawnChild, type Child } from '../core/support.ts';

const ITEMS = 150;

async function until(done: () => Promise<boolean>, what: string, child: Child, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (child.process.exitCode !== null || child.process.signalCode !== null) throw new Error(`the worker exited (${child.process.exitCode ?? child.process.signalCode}) before ${what}\nstdout: ${child.stdout()}\nstderr: ${child.stderr()}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\nstdout: ${child.stdout()}\nstderr: ${child.stderr()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function worker(url: string): Child {
  return spawnChild(process.execPath, ['src/main.ts'], { ROLE: 'worker', DATABASE_URL: url, APP_ENV: 'development', SANDBOX_TRACKING: '0', LOG_LEVEL: 'info', WORKER_IDLE_MS: '20', PUBLIC_BASE_URL: 'http://localhost:8080' });
}

async function batchOf(t: TestApp, id: string) {
  return (await t.request({ method: 'GET', url: `/v1/batches/${id}` })).json() as { status: string; counts: { total: number; succeeded: number; failed: number }; items: { shipmentId: string | null; labelId: string | null; trackingNumber: string | null; error: unknown }[] };
}

forEachDatabase((database) => {
  describe('a batch and a worker killed with SIGKILL', () => {
    const t = withTestApp(database);

    it('a restarted worker finishes the batch with every item done once', async () => {
      const acct = await t.newAccount();
      const items = Array.from({ length: ITEMS }, (_, i) => ({ shipment: { ...sampleShipment, reference: `crash ${i}` } }));
      const created = await t.app.inject({ method: 'POST', url: '/v1/batches', headers: { 'x-api-key': acct.apiKey }, payload: { items } });
      assert.equal(created.statusCode, 202, created.body);
      const id = created.json().id as string;
      const progress = async () => (await t.ctx.db.selectFrom('batches').select(['next_index', 'status']).where('id', '=', id).executeTakeFirstOrThrow());
      const url = await sharedDatabaseUrl(t);

      const first = worker(url);
      try {
        await until(async () => Number((await progress()).next_index) >= 10, 'the first worker to do some items', first);
      } finally {
        first.process.kill('SIGKILL');
        await first.exited;
      }
      const atKill = await progress();
      assert.equal(atKill.status, 'processing', `killed in the middle (at item ${atKill.next_index} of ${ITEMS})`);

      const second = worker(url);
      try {
        await until(async () => (await progress()).status === 'completed', 'the second worker to finish the batch', second);
      } finally {
        second.process.kill('SIGTERM');
        await second.exited;
      }
      const batch = await batchOf({ ...t, request: (o) => t.app.inject({ ...o, headers: { 'x-api-key': acct.apiKey } }) } as TestApp, id);
      assert.deepEqual(batch.counts, { total: ITEMS, succeeded: ITEMS, failed: 0 });
      assert.ok(batch.items.every((i) => i.labelId && i.trackingNumber && i.error === null));
      const shipments = await t.ctx.db.selectFrom('shipments').select(['id', 'reference']).where('account_id', '=', acct.accountId).execute();
      assert.equal(shipments.length, ITEMS, 'one shipment per item');
      assert.equal(new Set(shipments.map((s) => s.reference)).size, ITEMS, 'each item\'s shipment once');
      const labels = await t.ctx.db.selectFrom('labels').select(['id', 'shipment_id', 'tracking_number']).where('account_id', '=', acct.accountId).execute();
      assert.equal(labels.length, ITEMS, 'one label per item');
      assert.equal(new Set(labels.map((l) => l.shipment_id)).size, ITEMS);
      assert.deepEqual(new Set(labels.map((l) => l.id)), new Set(batch.items.map((i) => i.labelId)));
      // Items were done in order: label ids (time-ordered) follow the items' order.
      const ids = batch.items.map((i) => i.labelId!);
      assert.deepEqual(ids, [...ids].sort());
      const events = await t.ctx.db.selectFrom('domain_events').select('id').where('account_id', '=', acct.accountId).where('type', '=', 'batch.completed').execute();
      assert.equal(events.length, 1, 'batch.completed once');
    });
  });
});

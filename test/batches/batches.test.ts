// §11 batches: validation up front naming the index, items done in order by the worker with
// failures of their own recorded on the item, `batch.completed`, and the lists; on both databases.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { processBatches } from '../../src/batches/service.ts';
import { insertLabelFor } from '../../src/labels/service.ts';
import { getShipment } from '../../src/shipments/service.ts';
import { countRows, createShipment, forEachDatabase, sampleShipment, withTestApp, type TestApp } from '../helpers.ts';

/** Runs the worker's batch job until nothing is left. */
export async function runBatches(t: TestApp): Promise<void> {
  while ((await processBatches(t.ctx)) > 0);
}

const US_TO = sampleShipment.to;

forEachDatabase((database) => {
  describe('POST /v1/batches', () => {
    const t = withTestApp(database);

    it('a malformed item is 400 naming its index, and nothing is created', async () => {
      const shipments = await countRows(t.ctx, 'shipments');
      const cases: [unknown, string][] = [
        [[], 'items'],
        [Array.from({ length: 1001 }, () => ({ shipmentId: '0195f3a0-7c4e-7d2a-9b1e-3f5a6c7d8e9f' })), 'items'],
        [[{ shipmentId: '0195f3a0-7c4e-7d2a-9b1e-3f5a6c7d8e9f' }, {}], 'items[1]'],
        [[{ shipmentId: 'nope' }], 'items[0].shipmentId'],
        [[{ shipment: sampleShipment }, { shipment: sampleShipment }, { shipment: { ...sampleShipment, to: { ...US_TO, country: 'usa' } } }], 'items[2].shipment.to.country'],
        [[{ shipment: sampleShipment }, { shipment: { ...sampleShipment, to: { ...US_TO, postalCode: '94105' } } }], 'items[1].shipment.to.postalCode'],
        [[{ shipment: { ...sampleShipment, service: 'priority_mail' } }], 'items[0].shipment.service'],
        [[{ shipment: sampleShipment, shipmentId: '0195f3a0-7c4e-7d2a-9b1e-3f5a6c7d8e9f' }], 'items[0]'],
      ];
      for (const [items, field] of cases) {
        const res = await t.request({ method: 'POST', url: '/v1/batches', payload: { items } });
        assert.equal(res.statusCode, 400, `${field}: ${res.body.slice(0, 300)}`);
        assert.equal(res.json().code, 'INVALID_INPUT');
        assert.equal(res.json().details[0].field, field, res.body.slice(0, 300));
      }
      // Every problem of the shape at once, each field once: an unknown field is named, not only counted.
      const many = await t.request({ method: 'POST', url: '/v1/batches', payload: { items: [{ shipmentId: '0195f3a0-7c4e-7d2a-9b1e-3f5a6c7d8e9f', foo: 1 }, { shipmentId: 'nope' }], format: 'DOC' } });
      assert.equal(many.statusCode, 400);
      assert.deepEqual(
        many.json().details,
        [
          { field: 'items[0]', message: 'must have at most 1 field' },
          { field: 'items[0].foo', message: 'is not a known field' },
          { field: 'items[1].shipmentId', message: 'must be a UUID (in lower case, as ids are issued)' },
          { field: 'format', message: many.json().details[3]?.message },
        ],
        many.body,
      );
      assert.match(many.json().details[3].message, /^must be one of PDF, PNG, ZPL/);
      assert.equal(await countRows(t.ctx, 'batches'), 0);
      assert.equal(await countRows(t.ctx, 'batch_items'), 0);
      assert.equal(await countRows(t.ctx, 'shipments'), shipments);
    });

    it('the worker labels the items in order; an item that fails for its own reason fails alone; batch.completed is recorded', async () => {
      const acct = await t.newAccount();
      const as = (method: 'GET' | 'POST', url: string, payload?: object) => t.app.inject({ method, url, headers: { 'x-api-key': acct.apiKey }, ...(payload ? { payload } : {}) });
      const webhook = await as('POST', '/v1/webhooks', { url: 'https://example.com/hooks', events: ['batch.completed'] });
      assert.equal(webhook.statusCode, 201, webhook.body);
      const a = await createShipment(t, {}, acct.apiKey);
      const labelled = await createShipment(t, {}, acct.apiKey);
      assert.equal((await as('POST', '/v1/labels', { shipmentId: labelled.id })).statusCode, 201);
      const foreign = await createShipment(t);
      const unknown = '0195f3a0-7c4e-7d2a-9b1e-3f5a6c7d8e9f';
      const created = await as('POST', '/v1/batches', {
        format: 'ZPL',
        items: [{ shipmentId: a.id }, { shipment: { ...sampleShipment, reference: 'inline' } }, { shipmentId: unknown }, { shipmentId: labelled.id }, { shipmentId: a.id }, { shipmentId: foreign.id }],
      });
      assert.equal(created.statusCode, 202, created.body);
      const batch = created.json();
      assert.equal(batch.status, 'processing');
      assert.deepEqual(batch.counts, { total: 6, succeeded: 0, failed: 0 });
      assert.equal(batch.completedAt, null);
      assert.equal(batch.format, 'ZPL');
      assert.equal(batch.size, '4x6');
      assert.equal(batch.name, null, 'a batch made without a name has none');

      await runBatches(t);
      const done = (await as('GET', `/v1/batches/${batch.id}`)).json();
      assert.equal(done.status, 'completed');
      assert.ok(done.completedAt);
      assert.deepEqual(done.counts, { total: 6, succeeded: 2, failed: 4 });
      assert.deepEqual(done.items.map((i: { index: number }) => i.index), [0, 1, 2, 3, 4, 5]);
      const [first, inline, missing, busy, again, theirs] = done.items;
      assert.equal(first.shipmentId, a.id);
      assert.ok(first.labelId && first.trackingNumber && first.error === null);
      assert.ok(inline.shipmentId && inline.labelId && inline.error === null);
      const inlineShipment = (await as('GET', `/v1/shipments/${inline.shipmentId}`)).json();
      assert.equal(inlineShipment.reference, 'inline');
      assert.deepEqual(inlineShipment.label, { id: inline.labelId, trackingNumber: inline.trackingNumber, carrier: 'UPS' });
      assert.deepEqual(missing, { index: 2, shipmentId: unknown, labelId: null, trackingNumber: null, error: { code: 'NOT_FOUND', message: `shipment ${unknown} not found` } });
      assert.equal(busy.error.code, 'CONFLICT');
      assert.equal(again.error.code, 'CONFLICT', 'item 4 finds the label item 0 made: items are done in order');
      assert.equal(theirs.error.code, 'NOT_FOUND', "another account's shipment is not found");
      const label = await t.ctx.db.selectFrom('labels').select(['format', 'tracking_number']).where('id', '=', first.labelId).executeTakeFirstOrThrow();
      assert.deepEqual({ ...label }, { format: 'ZPL', tracking_number: first.trackingNumber }, "the batch's format");

      const events = await t.ctx.db.selectFrom('domain_events').select(['type', 'data', 'shipment_id']).where('account_id', '=', acct.accountId).where('type', '=', 'batch.completed').execute();
      assert.equal(events.length, 1);
      const { items: _items, ...withoutItems } = done;
      assert.deepEqual(JSON.parse(events[0]!.data), withoutItems);

      // Lists: newest first, without items; another account does not see it.
      const second = (await as('POST', '/v1/batches', { items: [{ shipment: sampleShipment }] })).json();
      const list = await as('GET', '/v1/batches?limit=1');
      assert.deepEqual(list.json().map((b: { id: string }) => b.id), [second.id]);
      assert.match(String(list.headers.link), /rel="next"/);
      assert.equal(list.json()[0].items, undefined);
      assert.equal((await t.request({ method: 'GET', url: `/v1/batches/${batch.id}` })).statusCode, 404);
      assert.ok(!(await t.request({ method: 'GET', url: '/v1/batches' })).json().some((b: { id: string }) => b.id === batch.id));
    });

    it('batches take turns: a one-item batch of another account is done one run later, not after a large one', async () => {
      await runBatches(t);
      const big = await t.newAccount();
      const small = await t.newAccount();
      const post = (account: { apiKey: string }, n: number) => t.app.inject({ method: 'POST', url: '/v1/batches', headers: { 'x-api-key': account.apiKey }, payload: { items: Array.from({ length: n }, () => ({ shipment: sampleShipment })) } });
      const large = (await post(big, 30)).json();
      const one = (await post(small, 1)).json();
      const state = async (account: { apiKey: string }, id: string) => (await t.app.inject({ method: 'GET', url: `/v1/batches/${id}`, headers: { 'x-api-key': account.apiKey } })).json();
      if (database.name === 'postgres') {
        // A worker that finds the large batch held by another turns to the next batch.
        await t.ctx.db.transaction().execute(async (tx) => {
          await sql`select id from batches where id = ${large.id} for update`.execute(tx);
          assert.equal(await processBatches(t.ctx), 1);
        });
        assert.equal((await state(small, one.id)).status, 'completed');
        await runBatches(t);
        assert.equal((await state(big, large.id)).counts.succeeded, 30);
        return;
      }
      assert.equal(await processBatches(t.ctx), 25, 'the first run: the older batch, up to 25 items');
      assert.equal(await processBatches(t.ctx), 1, 'the next run: the next batch in turn');
      assert.equal((await state(small, one.id)).status, 'completed');
      assert.deepEqual((await state(big, large.id)).counts, { total: 30, succeeded: 25, failed: 0 });
      await runBatches(t);
      assert.equal((await state(big, large.id)).status, 'completed');
    });

    it('a label made for an item\'s shipment at the same moment: the item fails alone with CONFLICT at once, and the batch goes on', async () => {
      // SQLite has one writer, so only PostgreSQL can interleave the two.
      if (database.name !== 'postgres') return;
      await runBatches(t);
      const acct = await t.newAccount();
      const [raced, other] = [await createShipment(t, {}, acct.apiKey), await createShipment(t, {}, acct.apiKey)];
      const batch = (await t.app.inject({ method: 'POST', url: '/v1/batches', headers: { 'x-api-key': acct.apiKey }, payload: { items: [{ shipmentId: raced.id }, { shipmentId: other.id }] } })).json();
      // POST /v1/labels for the same shipment, its transaction held open after its insert.
      let release!: () => void;
      const held = new Promise<void>((resolve) => { release = resolve; });
      let inserted!: () => void;
      const labelled = new Promise<void>((resolve) => { inserted = resolve; });
      const api = t.ctx.db.transaction().execute(async (tx) => {
        await insertLabelFor(t.ctx, tx, acct.accountId, await getShipment(tx, acct.accountId, raced.id), { format: 'PDF', size: '4x6' });
        inserted();
        await held;
      });
      await labelled;
      // The item reads its shipment without a label, then waits for the tracking counter the other holds.
      const run = processBatches(t.ctx);
      for (let i = 0; i < 200; i++) {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`.execute(t.ctx.db);
        if (rows[0]!.n > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      release();
      await api;
      assert.equal(await run, 2, 'both items in one run: the raced one done again at once');
      const done = (await t.app.inject({ method: 'GET', url: `/v1/batches/${batch.id}`, headers: { 'x-api-key': acct.apiKey } })).json();
      assert.equal(done.status, 'completed');
      assert.equal(done.items[0].error.code, 'CONFLICT', JSON.stringify(done.items[0]));
      assert.ok(done.items[1].labelId);
    });

    it('a batch may be named: trimmed, blank is none, too long is 400 naming it', async () => {
      const acct = await t.newAccount();
      const shipment = await createShipment(t, {}, acct.apiKey);
      const post = (name: string) => t.app.inject({ method: 'POST', url: '/v1/batches', headers: { 'x-api-key': acct.apiKey }, payload: { items: [{ shipmentId: shipment.id }], name } });
      const named = await post('  morning-orders.csv ');
      assert.equal(named.statusCode, 202, named.body);
      assert.equal(named.json().name, 'morning-orders.csv');
      const got = (await t.app.inject({ method: 'GET', url: `/v1/batches/${named.json().id}`, headers: { 'x-api-key': acct.apiKey } })).json();
      assert.equal(got.name, 'morning-orders.csv');
      const listed = (await t.app.inject({ method: 'GET', url: '/v1/batches', headers: { 'x-api-key': acct.apiKey } })).json();
      assert.equal(listed[0].name, 'morning-orders.csv');
      assert.equal((await post('   ')).json().name, null);
      const before = await countRows(t.ctx, 'batches');
      const long = await post('x'.repeat(201));
      assert.equal(long.statusCode, 400);
      assert.equal(long.json().details[0].field, 'name');
      assert.equal(await countRows(t.ctx, 'batches'), before);
    });

    it('an Idempotency-Key makes a retried batch the same batch', async () => {
      const headers = { 'idempotency-key': `batch-${Math.random()}` };
      const one = await t.request({ method: 'POST', url: '/v1/batches', headers, payload: { items: [{ shipment: sampleShipment }] } });
      const two = await t.request({ method: 'POST', url: '/v1/batches', headers, payload: { items: [{ shipment: sampleShipment }] } });
      assert.equal(one.statusCode, 202);
      assert.equal(two.json().id, one.json().id);
      assert.equal(two.headers['idempotent-replayed'], 'true');
    });
  });
});

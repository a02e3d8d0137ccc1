import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { carrierStatusCode, estimateDelivery } from '../../src/carriers/index.ts';
import { nextBusinessDay } from '../../src/tracking/service.ts';
import { EVERY_PROBLEM_VALUES } from '../../src/http/validators.ts';
import { countRows, forEachDatabase, withTestApp, US_SENDER } from '../helpers.ts';
import { createLabel, domainEvents, lookup, postEvents, type TrackedLabel } from './fixtures.ts';

const ev = (label: TrackedLabel, status: string, timestamp: string, more: Record<string, unknown> = {}) => ({
  trackingNumber: label.trackingNumber,
  status,
  timestamp,
  location: 'Memphis, TN, US',
  ...more,
});

forEachDatabase((database) => {
  const t = withTestApp(database);

  const storedEvents = async (labelId: string) =>
    t.ctx.db.selectFrom('tracking_events').selectAll().where('label_id', '=', labelId).orderBy('timestamp').orderBy('id').execute();
  const shipmentOf = async (label: TrackedLabel) => (await t.request({ method: 'GET', url: `/v1/shipments/${label.shipmentId}` })).json();

  describe('POST /v1/tracking/events', () => {
    it('stores the batch and answers 202 with the number of new events', async () => {
      const label = await createLabel(t);
      const res = await postEvents(t, [
        ev(label, 'pre_transit', '2026-03-02T08:00:00Z', { location: 'Berlin, DE', description: 'Label created' }),
        ev(label, 'in_transit', '2026-03-02T12:30:00.250+01:00', { carrier: 'DHL' }),
      ]);
      assert.equal(res.statusCode, 202, res.body);
      assert.deepEqual(res.json(), { accepted: 2 });
      const rows = await storedEvents(label.id);
      assert.deepEqual(
        rows.map((r) => [r.timestamp, r.status, r.carrier, r.carrier_code, r.location, r.description, r.account_id]),
        [
          ['2026-03-02T08:00:00.000Z', 'pre_transit', 'UPS', 'M', 'Berlin, DE', 'Label created', t.accountId],
          // Normalised to UTC; the carrier given wins over the label's; the description defaults to the carrier's wording.
          ['2026-03-02T11:30:00.250Z', 'in_transit', 'DHL', carrierStatusCode('DHL', 'in_transit').code, 'Memphis, TN, US', carrierStatusCode('DHL', 'in_transit').description, t.accountId],
        ],
      );
    });

    it('accepts a tracking number written with spaces or hyphens, as printed', async () => {
      const label = await createLabel(t);
      const printed = label.trackingNumber.replace(/^(.{2})(.{3})(.{3})/, '$1 $2-$3 ').toLowerCase();
      const res = await postEvents(t, [{ ...ev(label, 'in_transit', '2026-03-02T08:00:00Z'), trackingNumber: printed }]);
      assert.equal(res.statusCode, 202, res.body);
      assert.equal((await storedEvents(label.id)).length, 1);
    });

    it('stores the same event once: in a later batch, in the same batch, and written with another offset', async () => {
      const label = await createLabel(t);
      const a = ev(label, 'in_transit', '2026-03-02T10:00:00+02:00');
      const b = ev(label, 'out_for_delivery', '2026-03-03T07:00:00Z');
      assert.deepEqual((await postEvents(t, [a, b, a])).json(), { accepted: 2 });
      assert.deepEqual((await postEvents(t, [a, b])).json(), { accepted: 0 });
      // 08:00Z, written differently; the carrier given explicitly is the label's own.
      assert.deepEqual((await postEvents(t, [{ ...a, timestamp: '2026-03-02T03:00:00.000-05:00', carrier: 'UPS' }])).json(), { accepted: 0 });
      // A different description alone does not make a different event.
      assert.deepEqual((await postEvents(t, [{ ...b, description: 'On the truck' }])).json(), { accepted: 0 });
      // Another location, status, carrier or time does.
      const more = await postEvents(t, [
        { ...a, location: 'Atlanta, GA, US' },
        { ...a, status: 'exception' },
        { ...a, carrier: 'FedEx' },
        { ...a, timestamp: '2026-03-02T08:00:00.001Z' },
      ]);
      assert.deepEqual(more.json(), { accepted: 4 });
      assert.equal((await storedEvents(label.id)).length, 6);
      const types = (await domainEvents(t, label.shipmentId)).map((e) => e.type);
      const again = await postEvents(t, [a, b]);
      assert.deepEqual(again.json(), { accepted: 0 });
      assert.deepEqual((await domainEvents(t, label.shipmentId)).map((e) => e.type), types, 'a duplicate emits nothing');
    });

    it('takes 1000 events in one batch', async () => {
      const label = await createLabel(t);
      const batch = Array.from({ length: 1000 }, (_, i) => ev(label, 'in_transit', new Date(Date.UTC(2026, 2, 2) + i * 60_000).toISOString(), { location: `Hub ${i % 7}` }));
      const res = await postEvents(t, batch);
      assert.equal(res.statusCode, 202, res.body);
      assert.deepEqual(res.json(), { accepted: 1000 });
    });
  });

  describe('POST /v1/tracking/events: all or none', () => {
    it('answers an unknown tracking number with 404 naming it, and stores nothing of the batch', async () => {
      const label = await createLabel(t);
      const before = { events: await countRows(t.ctx, 'tracking_events'), domain: await countRows(t.ctx, 'domain_events'), tracking: await countRows(t.ctx, 'label_tracking') };
      const res = await postEvents(t, [ev(label, 'in_transit', '2026-03-02T08:00:00Z'), ev(label, 'delivered', '2026-03-03T08:00:00Z'), { ...ev(label, 'in_transit', '2026-03-02T09:00:00Z'), trackingNumber: '1Z999AA10123456784' }]);
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { code: 'NOT_FOUND', message: 'tracking number 1Z999AA10123456784 not found' });
      assert.equal(await countRows(t.ctx, 'tracking_events'), before.events);
      assert.equal(await countRows(t.ctx, 'domain_events'), before.domain);
      assert.equal(await countRows(t.ctx, 'label_tracking'), before.tracking);
      assert.equal((await shipmentOf(label)).status, 'created');
    });

    it("answers another account's tracking number with 404 exactly like an unknown one", async () => {
      const mine = await createLabel(t);
      const other = await t.newAccount();
      const theirs = await createLabel(t, {}, other.apiKey);
      const before = await countRows(t.ctx, 'tracking_events');
      const res = await postEvents(t, [ev(mine, 'in_transit', '2026-03-02T08:00:00Z'), ev(theirs, 'in_transit', '2026-03-02T08:00:00Z')]);
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { code: 'NOT_FOUND', message: `tracking number ${theirs.trackingNumber} not found` });
      assert.equal(await countRows(t.ctx, 'tracking_events'), before);
    });

    const bad: [string, (l: TrackedLabel) => unknown, RegExp][] = [
      ['no events', () => ({ events: [] }), /events/],
      ['1001 events', (l) => ({ events: Array.from({ length: 1001 }, (_, i) => ev(l, 'in_transit', new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString())) }), /events/],
      ['an unknown status', (l) => ({ events: [ev(l, 'in_transit', '2026-03-02T08:00:00Z'), ev(l, 'lost', '2026-03-02T09:00:00Z')] }), /events\[1\]\.status.*pre_transit, in_transit, out_for_delivery, delivered, exception, returned/],
      ['a time without offset', (l) => ({ events: [ev(l, 'in_transit', '2026-03-02T08:00:00')] }), /events\[0\]\.timestamp/],
      ['a date only', (l) => ({ events: [ev(l, 'in_transit', '2026-03-02')] }), /events\[0\]\.timestamp/],
      ['an impossible date', (l) => ({ events: [ev(l, 'in_transit', '2026-02-30T08:00:00Z')] }), /events\[0\]\.timestamp/],
      ['an offset without colon', (l) => ({ events: [ev(l, 'in_transit', '2026-03-02T08:00:00+0200')] }), /events\[0\]\.timestamp/],
      ['an unknown carrier', (l) => ({ events: [ev(l, 'in_transit', '2026-03-02T08:00:00Z', { carrier: 'TNT' })] }), /events\[0\]\.carrier/],
      ['no location', (l) => ({ events: [{ trackingNumber: l.trackingNumber, status: 'in_transit', timestamp: '2026-03-02T08:00:00Z' }] }), /events\[0\]\.location/],
      ['an unknown field', (l) => ({ events: [ev(l, 'in_transit', '2026-03-02T08:00:00Z', { colour: 'red' })] }), /events\[0\]\.colour/],
      ['a control character', (l) => ({ events: [ev(l, 'in_transit', '2026-03-02T08:00:00Z', { location: 'A\u0000B' })] }), /events\[0\]\.location/],
      ['no events field', () => ({}), /events/],
      ['a time more than 24 hours ahead', (l) => ({ events: [ev(l, 'in_transit', '2026-03-02T08:00:00Z'), ev(l, 'delivered', new Date(Date.now() + 24 * 3600_000 + 60_000).toISOString())] }), /events\[1\]\.timestamp is more than 24 hours ahead of the service's clock/],
      ['a time in year 9999', (l) => ({ events: [ev(l, 'delivered', '9999-12-31T23:59:59Z')] }), /events\[0\]\.timestamp is more than 24 hours ahead/],
    ];
    for (const [name, body, field] of bad) {
      it(`rejects ${name} with 400 INVALID_INPUT naming the field, and stores nothing`, async () => {
        const label = await createLabel(t);
        const before = await countRows(t.ctx, 'tracking_events');
        const res = await t.request({ method: 'POST', url: '/v1/tracking/events', payload: body(label) as object });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().code, 'INVALID_INPUT');
        assert.match(res.json().message, field);
        assert.equal(await countRows(t.ctx, 'tracking_events'), before);
      });
    }

    it('takes the largest batch the schema allows: 1000 events with the longest texts in a three-byte script (about 2.2 MB)', async () => {
      const label = await createLabel(t);
      const events = Array.from({ length: 1000 }, (_, i) =>
        ev(label, 'in_transit', new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(), { location: '東'.repeat(200), description: '京'.repeat(500) }),
      );
      const payload = JSON.stringify({ events });
      assert.ok(Buffer.byteLength(payload) > 2 * 1024 * 1024, 'over the default 1 MiB limit twice');
      const res = await t.request({ method: 'POST', url: '/v1/tracking/events', payload, headers: { 'content-type': 'application/json' } });
      assert.equal(res.statusCode, 202, res.body.slice(0, 200));
      assert.deepEqual(res.json(), { accepted: 1000 });
      // Past 4 MiB it is 413, naming the limit.
      const huge = await t.request({ method: 'POST', url: '/v1/tracking/events', payload: `{"events":[${' '.repeat(4 * 1024 * 1024)}]}`, headers: { 'content-type': 'application/json' } });
      assert.equal(huge.statusCode, 413);
      assert.match(huge.json().message, /4 MiB/);
    });

    it('lists every problem of a refused batch (at most 100), but of a body too large to walk only the first', async () => {
      const small = await t.request({ method: 'POST', url: '/v1/tracking/events', payload: { events: Array.from({ length: 1001 }, () => ({})) } });
      assert.equal(small.statusCode, 400);
      const fields = small.json().details.map((d: { field: string }) => d.field);
      assert.equal(fields.length, 100);
      assert.deepEqual(fields.slice(0, 2), ['events', 'events[0].trackingNumber']);
      // More values than EVERY_PROBLEM_VALUES: walking all of them for every problem would hold the event loop.
      const big = await t.request({ method: 'POST', url: '/v1/tracking/events', payload: { events: Array.from({ length: EVERY_PROBLEM_VALUES + 1 }, () => ({})) } });
      assert.equal(big.statusCode, 400);
      assert.deepEqual(big.json().details, [{ field: 'events', message: 'must have at most 1000 items' }]);
    });

    it("takes a time up to 24 hours ahead of the service's clock (a carrier's clock or time zone off by hours)", async () => {
      const label = await createLabel(t);
      const ahead = new Date(Date.now() + 23 * 3600_000).toISOString();
      const res = await postEvents(t, [ev(label, 'out_for_delivery', ahead)]);
      assert.deepEqual(res.json(), { accepted: 1 });
      assert.equal((await shipmentOf(label)).status, 'out_for_delivery');
    });

    it('needs write:tracking', async () => {
      const label = await createLabel(t);
      const reader = await t.newAccount(['read:labels', 'write:labels']);
      const res = await postEvents(t, [ev(label, 'in_transit', '2026-03-02T08:00:00Z')], reader.apiKey);
      assert.equal(res.statusCode, 403);
      assert.match(res.headers['www-authenticate'] as string, /scope="write:tracking"/);
    });
  });

  describe('POST /v1/tracking/events: status changes and the events they emit', () => {
    it('emits one domain event per status change, in event-time order, each with the shipment as GET shows it, its label and the tracking event', async () => {
      const label = await createLabel(t);
      // Sent out of order: event time decides, not position in the batch.
      const res = await postEvents(t, [
        ev(label, 'delivered', '2026-03-04T15:00:00Z', { location: 'New York, NY, US' }),
        ev(label, 'pre_transit', '2026-03-02T08:00:00Z', { location: 'Berlin, DE' }),
        ev(label, 'in_transit', '2026-03-02T18:00:00Z', { location: 'Leipzig, DE' }),
        ev(label, 'in_transit', '2026-03-03T06:00:00Z', { location: 'Newark, NJ, US' }),
        ev(label, 'out_for_delivery', '2026-03-04T07:00:00-05:00', { location: 'New York, NY, US' }),
      ]);
      assert.deepEqual(res.json(), { accepted: 5 });
      const emitted = (await domainEvents(t, label.shipmentId)).slice(1);
      assert.deepEqual(
        emitted.map((e) => [e.type, e.data.status, e.data.event.status, e.data.event.timestamp]),
        [
          ['shipment.in_transit', 'in_transit', 'in_transit', '2026-03-02T18:00:00.000Z'],
          ['shipment.in_transit', 'out_for_delivery', 'out_for_delivery', '2026-03-04T12:00:00.000Z'],
          ['shipment.delivered', 'delivered', 'delivered', '2026-03-04T15:00:00.000Z'],
        ],
      );
      const shipment = await shipmentOf(label);
      assert.equal(shipment.status, 'delivered');
      const { event, ...last } = emitted[2]!.data;
      assert.deepEqual(last, shipment);
      assert.deepEqual(last.label, { id: label.id, trackingNumber: label.trackingNumber, carrier: 'UPS' });
      assert.deepEqual(event, { timestamp: '2026-03-04T15:00:00.000Z', location: 'New York, NY, US', status: 'delivered', carrier: 'UPS', description: carrierStatusCode('UPS', 'delivered').description });
    });

    it('pre_transit changes the shipment status but emits nothing', async () => {
      const label = await createLabel(t);
      await postEvents(t, [ev(label, 'pre_transit', '2026-03-02T08:00:00Z')]);
      assert.equal((await shipmentOf(label)).status, 'pre_transit');
      assert.deepEqual((await domainEvents(t, label.shipmentId)).map((e) => e.type), ['shipment.created']);
    });

    it('exception and returned emit shipment.exception; a repeated status emits nothing more', async () => {
      const label = await createLabel(t);
      await postEvents(t, [ev(label, 'in_transit', '2026-03-02T08:00:00Z'), ev(label, 'in_transit', '2026-03-02T09:00:00Z', { location: 'Louisville, KY, US' })]);
      await postEvents(t, [ev(label, 'exception', '2026-03-03T08:00:00Z')]);
      await postEvents(t, [ev(label, 'exception', '2026-03-03T09:00:00Z', { location: 'Atlanta, GA, US' }), ev(label, 'returned', '2026-03-05T08:00:00Z')]);
      assert.deepEqual(
        (await domainEvents(t, label.shipmentId)).map((e) => [e.type, e.data.status]),
        [['shipment.created', 'created'], ['shipment.in_transit', 'in_transit'], ['shipment.exception', 'exception'], ['shipment.exception', 'returned']],
      );
      assert.equal((await shipmentOf(label)).status, 'returned');
    });

    it('an event older than the latest is history: stored, but it changes no status and emits nothing', async () => {
      const label = await createLabel(t);
      await postEvents(t, [ev(label, 'delivered', '2026-03-04T15:00:00Z')]);
      const res = await postEvents(t, [ev(label, 'out_for_delivery', '2026-03-04T08:00:00Z'), ev(label, 'in_transit', '2026-03-03T08:00:00Z')]);
      assert.deepEqual(res.json(), { accepted: 2 });
      assert.equal((await shipmentOf(label)).status, 'delivered');
      assert.deepEqual((await domainEvents(t, label.shipmentId)).map((e) => e.type), ['shipment.created', 'shipment.delivered']);
      assert.equal((await lookup(t, label.id, 'format=detailed')).json().status, 'delivered');
      // A later event does change it again.
      await postEvents(t, [ev(label, 'returned', '2026-03-06T08:00:00Z')]);
      assert.equal((await lookup(t, label.id, 'format=detailed')).json().status, 'returned');
    });

    it("an invalidated label's events are stored and shown, but no longer speak for the shipment", async () => {
      const label = await createLabel(t);
      assert.equal((await t.request({ method: 'PUT', url: `/v1/labels/${label.id}/invalidate` })).statusCode, 204);
      const res = await postEvents(t, [ev(label, 'in_transit', '2026-03-02T08:00:00Z')]);
      assert.deepEqual(res.json(), { accepted: 1 });
      assert.equal((await lookup(t, label.id, 'format=detailed')).json().status, 'in_transit');
      assert.equal((await shipmentOf(label)).status, 'created');
      assert.deepEqual((await domainEvents(t, label.shipmentId)).map((e) => e.type), ['shipment.created']);
    });

    it('a new label after an invalidated one speaks for the shipment from the start: its status is created again until the new label moves', async () => {
      const label = await createLabel(t);
      await postEvents(t, [ev(label, 'pre_transit', '2026-03-02T08:00:00Z')]);
      assert.equal((await shipmentOf(label)).status, 'pre_transit');
      assert.equal((await t.request({ method: 'PUT', url: `/v1/labels/${label.id}/invalidate` })).statusCode, 204);
      assert.equal((await shipmentOf(label)).status, 'created', 'no parcel of it is on its way: created again, not awaiting pickup');
      const res = await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: label.shipmentId } });
      assert.equal(res.statusCode, 201, res.body);
      const next = { ...label, id: res.json().id, trackingNumber: res.json().trackingNumber };
      const shipment = await shipmentOf(label);
      assert.equal(shipment.status, 'created');
      assert.equal(shipment.label.id, next.id);
      await postEvents(t, [ev(next, 'in_transit', '2026-03-03T08:00:00Z')]);
      assert.equal((await shipmentOf(label)).status, 'in_transit');
      assert.deepEqual((await domainEvents(t, label.shipmentId)).map((e) => e.type), ['shipment.created', 'shipment.in_transit']);
    });

    it('a scan that waits for an invalidation committing meanwhile moves nothing: the shipment keeps its status, no webhook (PostgreSQL)', async (ctx) => {
      if (database.name !== 'postgres') return ctx.skip('SQLite runs one writer at a time: the two cannot interleave');
      const label = await createLabel(t);
      // The invalidation's writes, held open: the label, then the shipment's label cleared.
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let holder!: (pid: number) => void;
      const backend = new Promise<number>((resolve) => {
        holder = resolve;
      });
      const invalidation = t.ctx.db.transaction().execute(async (tx) => {
        await tx.updateTable('labels').set({ status: 'invalidated', invalidated_at: new Date().toISOString() }).where('id', '=', label.id).execute();
        await tx.updateTable('shipments').set({ label_id: null, tracking_number: null }).where('id', '=', label.shipmentId).execute();
        holder((await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(tx)).rows[0]!.pid);
        await held;
      });
      const pid = await backend;
      // The batch read the label as active before the invalidation commits, and waits for the shipment's row.
      const posting = postEvents(t, [ev(label, 'in_transit', '2026-03-02T08:00:00Z')]);
      const waiting = async () => Number((await sql<{ n: string }>`select count(*) as n from pg_stat_activity where ${pid} = any(pg_blocking_pids(pid))`.execute(t.ctx.db)).rows[0]!.n);
      for (let i = 0; i < 500 && (await waiting()) === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(await waiting(), 1, 'the batch waits for the invalidation');
      release();
      await invalidation;
      assert.equal((await posting).statusCode, 202);
      const shipment = await shipmentOf(label);
      assert.equal(shipment.status, 'created', 'an invalidated label no longer speaks for the shipment');
      assert.equal(shipment.label, undefined);
      assert.deepEqual((await domainEvents(t, label.shipmentId)).map((e) => e.type), ['shipment.created']);
      assert.equal((await lookup(t, label.id, 'format=detailed')).json().status, 'in_transit', "the scan is the invalidated label's history");
    });

    it('a label whose parcel the carrier has scanned is not invalidated: 409 naming the status, nothing changed', async () => {
      for (const status of ['in_transit', 'out_for_delivery', 'delivered', 'exception', 'returned'] as const) {
        const label = await createLabel(t);
        await postEvents(t, [ev(label, 'pre_transit', '2026-03-02T07:00:00Z'), ev(label, status, '2026-03-02T08:00:00Z')]);
        const res = await t.request({ method: 'PUT', url: `/v1/labels/${label.id}/invalidate` });
        assert.equal(res.statusCode, 409, `${status}: ${res.body}`);
        assert.equal(res.json().code, 'CONFLICT');
        assert.match(res.json().message, new RegExp(`label ${label.id}'s parcel is already ${status.replaceAll('_', ' ')} \\(shipment ${label.shipmentId}\\): the carrier has scanned it`));
        const got = (await t.request({ method: 'GET', url: `/v1/labels/${label.id}` })).json();
        assert.equal(got.status, 'active', `${status}: the label is as it was`);
        const shipment = await shipmentOf(label);
        assert.equal(shipment.status, status);
        assert.equal(shipment.label?.id, label.id, `${status}: the shipment keeps its label`);
        assert.equal((await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: label.shipmentId } })).statusCode, 409, 'no second label');
      }
    });

    it('a batch over several labels updates each of them', async () => {
      const a = await createLabel(t);
      const b = await createLabel(t, { carrier: 'USPS', service: 'priority_mail', from: US_SENDER });
      const res = await postEvents(t, [ev(a, 'in_transit', '2026-03-02T08:00:00Z'), ev(b, 'delivered', '2026-03-02T08:00:00Z'), ev(a, 'exception', '2026-03-02T09:00:00Z')]);
      assert.deepEqual(res.json(), { accepted: 3 });
      assert.deepEqual((await domainEvents(t, a.shipmentId)).map((e) => e.type), ['shipment.created', 'shipment.in_transit', 'shipment.exception']);
      assert.deepEqual((await domainEvents(t, b.shipmentId)).map((e) => e.type), ['shipment.created', 'shipment.delivered']);
      assert.equal((await shipmentOf(a)).status, 'exception');
      assert.equal((await shipmentOf(b)).status, 'delivered');
    });

    it('batches at once over the same new labels all land: each label gets one tracking state and every event', async () => {
      const labels = [await createLabel(t), await createLabel(t), await createLabel(t)];
      const batch = (order: TrackedLabel[], hour: number) => order.map((l) => ev(l, 'in_transit', `2026-03-02T${String(hour).padStart(2, '0')}:00:00Z`));
      const answers = await Promise.all([postEvents(t, batch(labels, 8)), postEvents(t, batch(labels.toReversed(), 9)), postEvents(t, batch([labels[1]!, labels[0]!, labels[2]!], 10))]);
      assert.deepEqual(answers.map((r) => [r.statusCode, r.json().accepted]), [[202, 3], [202, 3], [202, 3]]);
      const states = await t.ctx.db.selectFrom('label_tracking').select(['label_id', 'last_event_at']).where('label_id', 'in', labels.map((l) => l.id)).execute();
      assert.deepEqual(states.map((s) => s.last_event_at).sort(), Array(3).fill('2026-03-02T10:00:00.000Z'));
      for (const l of labels) {
        assert.equal((await storedEvents(l.id)).length, 3);
        // The first batch to commit changed the status; the others repeat it.
        assert.deepEqual((await domainEvents(t, l.shipmentId)).map((e) => e.type), ['shipment.created', 'shipment.in_transit']);
      }
    });

    it('batches at once over overlapping labels, some with a tracking state and some without, all land (no deadlock)', async () => {
      for (let round = 0; round < 20; round++) {
        const labels: TrackedLabel[] = [];
        for (let i = 0; i < 6; i++) labels.push(await createLabel(t));
        // Twelve batches at once over overlapping subsets: the small ones commit while the larger ones are under way.
        let seed = 42 + round;
        const rnd = () => {
          seed = (seed * 1103515245 + 12345) % 2 ** 31;
          return seed / 2 ** 31;
        };
        const sets = Array.from({ length: 12 }, () => labels.toSorted(() => rnd() - 0.5).slice(0, 1 + Math.floor(rnd() * 4)));
        const answers = await Promise.all(sets.map((set, i) => postEvents(t, set.map((l) => ev(l, 'in_transit', `2026-03-02T08:${String(i).padStart(2, '0')}:00Z`)))));
        assert.deepEqual(answers.map((r) => r.statusCode), sets.map(() => 202), answers.map((r) => r.body).join('\n'));
      }
    });
  });

  describe('estimatedDelivery', () => {
    // A label issued at `at`, so that the events of its journey are in the past (no event may be more
    // than 24 hours ahead of the service's clock).
    const issuedAt = async (at: string) => {
      const label = await createLabel(t, { service: 'next_day_air', from: US_SENDER, customs: undefined });
      await t.ctx.db.updateTable('labels').set({ created_at: at }).where('id', '=', label.id).execute();
      return { ...label, createdAt: at };
    };

    it('starts at the transit time in business days, and is revised by out_for_delivery, exception, delivered and returned', async () => {
      const label = await issuedAt(new Date(Date.now() - 14 * 86400_000).toISOString());
      const estimate = async () => (await lookup(t, label.id, 'format=detailed')).json().estimatedDelivery;
      const initial = estimateDelivery('UPS', 'next_day_air', new Date(label.createdAt)).toISOString();
      assert.equal(await estimate(), initial);
      // In transit keeps it.
      await postEvents(t, [ev(label, 'in_transit', new Date(Date.parse(label.createdAt) + 1000).toISOString())]);
      assert.equal(await estimate(), initial);
      // An exception pushes it one business day.
      const exceptionAt = new Date(Date.parse(label.createdAt) + 2000).toISOString();
      await postEvents(t, [ev(label, 'exception', exceptionAt)]);
      const pushed = nextBusinessDay(Date.parse(initial));
      assert.equal(await estimate(), pushed);
      assert.ok(Date.parse(pushed) > Date.parse(initial));
      assert.ok(![0, 6].includes(new Date(pushed).getUTCDay()));
      // Out for delivery: that day, at the end of the delivery day (20:00 UTC).
      const ofdAt = new Date(Date.parse(pushed) - 10 * 3600_000).toISOString();
      await postEvents(t, [ev(label, 'out_for_delivery', ofdAt)]);
      assert.equal(await estimate(), `${ofdAt.slice(0, 10)}T20:00:00.000Z`);
      // Delivered: the delivery time.
      const deliveredAt = new Date(Date.parse(pushed) - 9 * 3600_000).toISOString();
      await postEvents(t, [ev(label, 'delivered', deliveredAt)]);
      assert.equal(await estimate(), deliveredAt);
      // Returned: no delivery expected.
      await postEvents(t, [ev(label, 'returned', new Date(Date.parse(pushed) + 86400_000).toISOString())]);
      assert.equal(await estimate(), null);
    });

    it('an exception after the estimate has passed pushes it from the exception', async () => {
      // Issued on Friday 2024-12-20: next day air is expected on Monday the 23rd.
      const label = await issuedAt('2024-12-20T10:00:00.000Z');
      assert.equal((await lookup(t, label.id, 'format=detailed')).json().estimatedDelivery, '2024-12-23T20:00:00.000Z');
      await postEvents(t, [ev(label, 'exception', '2025-01-01T09:00:00Z')]); // a Wednesday
      assert.equal((await lookup(t, label.id, 'format=detailed')).json().estimatedDelivery, '2025-01-02T20:00:00.000Z');
      await postEvents(t, [ev(label, 'in_transit', '2025-01-02T09:00:00Z'), ev(label, 'exception', '2025-01-02T10:00:00Z')]);
      assert.equal((await lookup(t, label.id, 'format=detailed')).json().estimatedDelivery, '2025-01-03T20:00:00.000Z');
      await postEvents(t, [ev(label, 'in_transit', '2025-01-03T09:00:00Z'), ev(label, 'exception', '2025-01-03T10:00:00Z')]);
      // Friday's exception: Monday.
      assert.equal((await lookup(t, label.id, 'format=detailed')).json().estimatedDelivery, '2025-01-06T20:00:00.000Z');
    });
  });
});

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { carrierStatusCode, estimateDelivery, trackingUrl, type Carrier, type TrackingStatus } from '../../src/carriers/index.ts';
import { forEachDatabase, startTestApp, type TestApp } from '../helpers.ts';
import { createLabel, lookup, postEvents, type TrackedLabel } from './fixtures.ts';

interface ModelEvent {
  timestamp: string;
  location: string;
  status: TrackingStatus;
  carrier: Carrier;
  description: string;
}

// A UPS parcel handed to USPS for the last mile: 16 events, one an hour, sent with mixed offsets.
function history(): ModelEvent[] {
  const out: ModelEvent[] = [];
  for (let i = 0; i < 16; i++) {
    const carrier: Carrier = i < 9 ? 'UPS' : 'USPS';
    const status: TrackingStatus = i === 0 ? 'pre_transit' : i === 14 ? 'out_for_delivery' : i === 15 ? 'delivered' : 'in_transit';
    out.push({
      timestamp: new Date(Date.UTC(2026, 0, 5, 6 + i)).toISOString(),
      location: `Hub ${i}`,
      status,
      carrier,
      description: carrierStatusCode(carrier, status).description,
    });
  }
  return out;
}

/** The same instant written with an offset of `hours`. */
function withOffset(utcIso: string, hours: number): string {
  const local = new Date(Date.parse(utcIso) + hours * 3600_000).toISOString().slice(0, 19);
  const sign = hours < 0 ? '-' : '+';
  return `${local}${sign}${String(Math.abs(hours)).padStart(2, '0')}:00`;
}

/** What the endpoint must answer: filter, then sort, then limit. */
function expected(all: ModelEvent[], q: { carrier?: Carrier; since?: string; sort?: 'newest_first' | 'oldest_first'; limit?: number }): ModelEvent[] {
  let list = all.filter((e) => (!q.carrier || e.carrier === q.carrier) && (!q.since || Date.parse(e.timestamp) > Date.parse(q.since)));
  list = [...list].sort((a, b) => a.timestamp.localeCompare(b.timestamp));
  if ((q.sort ?? 'newest_first') === 'newest_first') list.reverse();
  return list.slice(0, q.limit ?? 10);
}

forEachDatabase((database) => {
  let t: TestApp;
  let label: TrackedLabel;
  const events = history();
  before(async () => {
    t = await startTestApp(database);
    label = await createLabel(t);
    // Sent newest first and with offsets from -08:00 to +09:00: storage normalises to UTC.
    const sent = [...events].reverse().map((e, i) => ({ trackingNumber: label.trackingNumber, status: e.status, timestamp: withOffset(e.timestamp, (i % 18) - 8), location: e.location, carrier: e.carrier }));
    const res = await postEvents(t, sent);
    assert.equal(res.statusCode, 202, res.body);
    assert.deepEqual(res.json(), { accepted: 16 });
  });
  after(async () => t.close());

  const eventsOf = async (query: string): Promise<ModelEvent[]> => {
    const res = await lookup(t, label.id, `format=detailed&${query}`);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().events;
  };

  describe('GET /v1/labels/{id}/trackingnumber: format', () => {
    it('basic (the default) gives exactly trackingNumber, carrier and trackingUrl', async () => {
      const res = await lookup(t, label.id);
      assert.equal(res.statusCode, 200);
      assert.match(res.headers['content-type'] as string, /^application\/json/);
      const basic = { trackingNumber: label.trackingNumber, carrier: 'UPS', trackingUrl: trackingUrl('UPS', label.trackingNumber) };
      assert.deepEqual(res.json(), basic);
      assert.deepEqual((await lookup(t, label.id, 'format=basic&limit=3&carrier=USPS&sort=oldest_first')).json(), basic);
    });

    it('detailed adds status (of the latest event), estimatedDelivery and the 10 newest events', async () => {
      const res = await lookup(t, label.id, 'format=detailed');
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ['carrier', 'estimatedDelivery', 'events', 'status', 'trackingNumber', 'trackingUrl']);
      assert.equal(body.status, 'delivered');
      assert.equal(body.estimatedDelivery, events[15]!.timestamp, 'once delivered, the estimate is the delivery time');
      assert.deepEqual(body.events, expected(events, {}));
      assert.equal(body.events.length, 10);
    });

    it("carrier-specific adds each carrier's own code for the status and for every event, in the same order", async () => {
      const res = await lookup(t, label.id, 'format=carrier-specific&limit=100&sort=oldest_first');
      assert.equal(res.statusCode, 200);
      const body = res.json();
      assert.deepEqual(body.events, expected(events, { limit: 100, sort: 'oldest_first' }));
      assert.deepEqual(body.carrierDetails.carrier, 'UPS');
      assert.deepEqual(body.carrierDetails.status, { code: 'D', description: carrierStatusCode('UPS', 'delivered').description });
      assert.equal(body.carrierDetails.events.length, 16);
      body.carrierDetails.events.forEach((d: Record<string, string>, i: number) => {
        const e = events[i]!;
        const own = carrierStatusCode(e.carrier, e.status);
        assert.deepEqual(d, { timestamp: e.timestamp, carrier: e.carrier, code: own.code, description: own.description });
      });
      // A USPS delivery scan carries the USPS code, not the UPS one.
      assert.notEqual(body.carrierDetails.events[15].code, 'D');
    });

    it('rejects an unknown format with 400 naming the parameter and its values', async () => {
      const res = await lookup(t, label.id, 'format=full');
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().code, 'INVALID_INPUT');
      assert.match(res.json().message, /format/);
      assert.match(res.json().message, /basic, detailed, carrier-specific/);
    });
  });

  describe('GET /v1/labels/{id}/trackingnumber: limit', () => {
    it('caps the events at 1 and at 100, default 10', async () => {
      assert.deepEqual(await eventsOf('limit=1'), expected(events, { limit: 1 }));
      assert.deepEqual(await eventsOf('limit=100'), expected(events, { limit: 100 }));
      assert.equal((await eventsOf('limit=100')).length, 16);
      assert.equal((await eventsOf('')).length, 10);
    });

    for (const bad of ['0', '101', '-1', '1.5', 'ten', '', '5&limit=6']) {
      it(`rejects limit=${bad} with 400 naming limit`, async () => {
        const res = await lookup(t, label.id, `format=detailed&limit=${bad}`);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().code, 'INVALID_INPUT');
        assert.match(res.json().message, /\blimit\b/);
      });
    }
  });

  describe('GET /v1/labels/{id}/trackingnumber: carrier', () => {
    it('keeps the events reported by that carrier only (filter before limit)', async () => {
      const usps = await eventsOf('carrier=USPS');
      assert.deepEqual(usps, expected(events, { carrier: 'USPS' }));
      assert.equal(usps.length, 7);
      assert.ok(usps.every((e) => e.carrier === 'USPS'));
      // The 3 oldest UPS events, not the UPS events among the 3 oldest overall.
      assert.deepEqual(await eventsOf('carrier=UPS&sort=oldest_first&limit=3'), expected(events, { carrier: 'UPS', sort: 'oldest_first', limit: 3 }));
      assert.deepEqual(await eventsOf('carrier=DHL'), []);
    });

    it('leaves status and estimatedDelivery alone: they describe the parcel, not the filtered list', async () => {
      const body = (await lookup(t, label.id, 'format=detailed&carrier=UPS')).json();
      assert.equal(body.status, 'delivered');
      assert.equal(body.estimatedDelivery, events[15]!.timestamp);
    });

    for (const bad of ['TNT', 'ups', '']) {
      it(`rejects carrier=${bad} with 400 naming carrier`, async () => {
        const res = await lookup(t, label.id, `format=detailed&carrier=${bad}`);
        assert.equal(res.statusCode, 400);
        assert.match(res.json().message, /\bcarrier\b/);
      });
    }
  });

  describe('GET /v1/labels/{id}/trackingnumber: events_since', () => {
    it('keeps events strictly after the given time', async () => {
      const at = events[12]!.timestamp;
      const after = await eventsOf(`events_since=${at}&limit=100`);
      assert.deepEqual(after, expected(events, { since: at, limit: 100 }));
      assert.equal(after.length, 3);
      assert.ok(!after.some((e) => e.timestamp === at), 'an event exactly at events_since is not after it');
      const justBefore = new Date(Date.parse(at) - 1).toISOString();
      assert.equal((await eventsOf(`events_since=${justBefore}&limit=100`)).length, 4);
    });

    it('reads any offset: 10:00+02:00 is 08:00Z, not 10:00Z', async () => {
      // Events are hourly from 06:00Z on 2026-01-05.
      const plusTwo = await eventsOf(`events_since=${encodeURIComponent('2026-01-05T10:00:00+02:00')}&limit=100`);
      const zulu = await eventsOf('events_since=2026-01-05T10:00:00Z&limit=100');
      assert.deepEqual(plusTwo, expected(events, { since: '2026-01-05T08:00:00Z', limit: 100 }));
      assert.deepEqual(zulu, expected(events, { since: '2026-01-05T10:00:00Z', limit: 100 }));
      assert.equal(plusTwo.length, zulu.length + 2);
      const minus = await eventsOf(`events_since=${encodeURIComponent('2026-01-05T05:30:00-04:30')}&limit=100`);
      assert.deepEqual(minus, zulu);
      // Fractions of a second and a lower-case separator are RFC 3339 too.
      assert.deepEqual(await eventsOf('events_since=2026-01-05t09:59:59.999z&limit=100'), expected(events, { since: '2026-01-05T09:59:59.999Z', limit: 100 }));
    });

    it('takes an unencoded + (which arrives as a space) as the offset sign', async () => {
      assert.deepEqual(await eventsOf('events_since=2026-01-05T10:00:00+02:00&limit=100'), expected(events, { since: '2026-01-05T08:00:00Z', limit: 100 }));
    });

    it('combines with carrier, sort and limit: filter, then sort, then limit', async () => {
      const q = { carrier: 'UPS' as const, since: '2026-01-05T08:00:00Z', sort: 'oldest_first' as const, limit: 2 };
      const got = await eventsOf(`carrier=UPS&events_since=2026-01-05T08:00:00Z&sort=oldest_first&limit=2`);
      assert.deepEqual(got, expected(events, q));
      assert.deepEqual(got.map((e) => e.timestamp), ['2026-01-05T09:00:00.000Z', '2026-01-05T10:00:00.000Z']);
      assert.deepEqual(await eventsOf('events_since=2030-01-01T00:00:00Z'), []);
      assert.deepEqual(await eventsOf('events_since=9999-12-31T23:00:00-05:00'), []);
      assert.equal((await eventsOf('events_since=0001-01-01T00:00:00%2B01:00&limit=100')).length, 16);
    });

    for (const bad of ['2026-01-05T10:00:00', '2026-01-05', 'yesterday', '2026-13-01T00:00:00Z', '2026-02-30T00:00:00Z', '2026-01-05T10:00:00%2B0200', '2026-01-05T24:00:00Z', '']) {
      it(`rejects events_since=${bad} with 400 naming events_since`, async () => {
        const res = await lookup(t, label.id, `format=detailed&events_since=${bad}`);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().code, 'INVALID_INPUT');
        assert.match(res.json().message, /events_since/);
      });
    }
  });

  describe('GET /v1/labels/{id}/trackingnumber: sort', () => {
    it('orders newest_first (default) or oldest_first', async () => {
      assert.deepEqual(await eventsOf('sort=newest_first&limit=100'), expected(events, { limit: 100 }));
      assert.deepEqual(await eventsOf('limit=100'), expected(events, { limit: 100 }));
      assert.deepEqual(await eventsOf('sort=oldest_first&limit=100'), expected(events, { sort: 'oldest_first', limit: 100 }));
      assert.deepEqual((await eventsOf('sort=oldest_first&limit=1'))[0]!.status, 'pre_transit');
      assert.deepEqual((await eventsOf('sort=newest_first&limit=1'))[0]!.status, 'delivered');
    });

    it('rejects any other order with 400 naming sort', async () => {
      const res = await lookup(t, label.id, 'format=detailed&sort=asc');
      assert.equal(res.statusCode, 400);
      assert.match(res.json().message, /\bsort\b/);
    });

    it('rejects unknown parameters with 400 naming them', async () => {
      const res = await lookup(t, label.id, 'format=detailed&order=asc');
      assert.equal(res.statusCode, 400);
      assert.match(res.json().message, /\border\b/);
    });
  });

  describe('GET /v1/labels/{id}/trackingnumber: every combination', () => {
    it('answers like the model for any mix of carrier, events_since, sort and limit', async () => {
      const since = fc.option(fc.tuple(fc.integer({ min: -2, max: 18 }), fc.integer({ min: -1, max: 1 }), fc.integer({ min: -9, max: 9 })), { nil: undefined });
      await fc.assert(
        fc.asyncProperty(
          fc.option(fc.constantFrom<Carrier>('UPS', 'USPS', 'DHL'), { nil: undefined }),
          since,
          fc.option(fc.constantFrom('newest_first' as const, 'oldest_first' as const), { nil: undefined }),
          fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
          async (carrier, sinceParts, sort, limit) => {
            // A time near an event (exactly on it, or 1 ms either side), written with some offset.
            const sinceUtc = sinceParts ? new Date(Date.UTC(2026, 0, 5, 6 + sinceParts[0]) + sinceParts[1]).toISOString() : undefined;
            const params = new URLSearchParams();
            if (carrier) params.set('carrier', carrier);
            if (sinceUtc) params.set('events_since', sinceParts![1] === 0 ? withOffset(sinceUtc, sinceParts![2]) : sinceUtc);
            if (sort) params.set('sort', sort);
            if (limit) params.set('limit', String(limit));
            assert.deepEqual(await eventsOf(params.toString()), expected(events, { carrier, since: sinceUtc, sort, limit }));
          },
        ),
        { numRuns: 40 },
      );
    });
  });

  describe('GET /v1/labels/{id}/trackingnumber: a label without events', () => {
    it('is pre_transit with no events and the service transit time from label creation', async () => {
      const fresh = await createLabel(t, { carrier: 'FedEx', service: 'international_economy' });
      const res = await lookup(t, fresh.id, 'format=carrier-specific');
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {
        trackingNumber: fresh.trackingNumber,
        carrier: 'FedEx',
        trackingUrl: trackingUrl('FedEx', fresh.trackingNumber),
        status: 'pre_transit',
        estimatedDelivery: estimateDelivery('FedEx', 'international_economy', new Date(fresh.createdAt)).toISOString(),
        events: [],
        carrierDetails: { carrier: 'FedEx', status: carrierStatusCode('FedEx', 'pre_transit'), events: [] },
      });
    });
  });

  describe('GET /v1/labels/{id}/trackingnumber: access', () => {
    it('answers an unknown or another account\'s label with 404 naming it, and a malformed id with 400', async () => {
      const unknown = '01890a5d-ac96-774b-bcce-b302099a8057';
      const res = await lookup(t, unknown, 'format=detailed');
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { code: 'NOT_FOUND', message: `label ${unknown} not found` });
      const other = await t.newAccount();
      const foreign = await lookup(t, label.id, 'format=detailed', other.apiKey);
      assert.equal(foreign.statusCode, 404);
      assert.deepEqual(foreign.json(), { code: 'NOT_FOUND', message: `label ${label.id} not found` });
      assert.equal((await lookup(t, 'nope', 'format=detailed')).statusCode, 400);
    });

    it('needs read:labels', async () => {
      const reader = await t.newAccount(['read:shipments']);
      const res = await lookup(t, label.id, '', reader.apiKey);
      assert.equal(res.statusCode, 403);
      assert.match(res.headers['www-authenticate'] as string, /scope="read:labels"/);
      const noKey = await t.app.inject({ method: 'GET', url: `/v1/labels/${label.id}/trackingnumber` });
      assert.equal(noKey.statusCode, 401);
    });
  });
});

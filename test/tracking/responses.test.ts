// The lookup reuses the JSON it built for a label while the label's events_version is unchanged
// (src/tracking/responses.ts). Events stored by any writer, including one that never passes through this
// app's route (another process, the sandbox carrier), show in the next lookup. Both databases.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ingestEvents, type IncomingEvent } from '../../src/tracking/service.ts';
import { TrackingResponses } from '../../src/tracking/responses.ts';
import type { TrackingStatus } from '../../src/carriers/index.ts';
import { forEachDatabase, sqliteInOtherProcess, startTestApp, type TestApp } from '../helpers.ts';
import { createLabel, lookup, postEvents } from './fixtures.ts';

describe('TrackingResponses', () => {
  it('answers only for the version an answer was built for, and never goes back to an older one', () => {
    const r = new TrackingResponses();
    r.set('L', 1, 'q', 'one');
    assert.equal(r.get('L', 1, 'q'), 'one');
    assert.equal(r.get('L', 2, 'q'), undefined);
    assert.equal(r.get('L', 1, 'other'), undefined);
    r.set('L', 2, 'q', 'two');
    assert.equal(r.get('L', 1, 'q'), undefined);
    assert.equal(r.get('L', 2, 'q'), 'two');
    // A lookup that read the older version and finished late does not replace the newer answer.
    r.set('L', 1, 'q', 'late');
    assert.equal(r.get('L', 2, 'q'), 'two');
  });

  it('holds at most its budget of JSON, dropping the oldest labels first', () => {
    const r = new TrackingResponses(16 * 100);
    const answer = 'x'.repeat(100);
    for (let i = 0; i < 40; i++) r.set(`L${i}`, 1, 'q', answer);
    assert.ok(r.chars <= 16 * 100, `holds ${r.chars} characters`);
    assert.equal(r.get('L39', 1, 'q'), answer, 'the newest is kept');
    assert.equal(r.get('L0', 1, 'q'), undefined, 'the oldest is gone');
    // Replacing an answer or a version does not count twice.
    r.set('L39', 1, 'q', answer);
    r.set('L39', 2, 'q', answer);
    assert.equal(r.chars, 16 * 100);
    // An answer too large for a sixteenth of the budget is not kept at all.
    r.set('big', 1, 'q', 'x'.repeat(101));
    assert.equal(r.get('big', 1, 'q'), undefined);
  });
});

const hour = (h: number) => new Date(Date.UTC(2026, 2, 1, h)).toISOString();

forEachDatabase((database) => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp(database);
  });
  after(async () => t.close());

  describe('the lookup after events stored outside this route', () => {
    it('shows a history event (older than the latest, no status change) and a status change at once', async () => {
      const label = await createLabel(t);
      const send = (events: Omit<IncomingEvent, 'trackingNumber'>[]) => ingestEvents(t.ctx, t.accountId, events.map((e) => ({ ...e, trackingNumber: label.trackingNumber })));
      assert.equal((await postEvents(t, [{ trackingNumber: label.trackingNumber, status: 'in_transit', timestamp: hour(10), location: 'Hub A' }])).statusCode, 202);
      const first = (await lookup(t, label.id, 'format=detailed')).json();
      assert.deepEqual(first.events.map((e: { location: string }) => e.location), ['Hub A']);
      assert.deepEqual((await lookup(t, label.id, 'format=detailed')).json(), first, 'the same answer while nothing changed');

      await send([{ status: 'in_transit', timestamp: hour(8), location: 'Hub Early' }]);
      const second = (await lookup(t, label.id, 'format=detailed')).json();
      assert.deepEqual(second.events.map((e: { location: string }) => e.location), ['Hub A', 'Hub Early']);
      assert.equal(second.status, 'in_transit');

      await send([{ status: 'delivered', timestamp: hour(12), location: 'Door' }]);
      const third = (await lookup(t, label.id, 'format=carrier-specific&sort=oldest_first')).json();
      assert.equal(third.status, 'delivered');
      assert.equal(third.estimatedDelivery, hour(12));
      assert.deepEqual(third.events.map((e: { location: string }) => e.location), ['Hub Early', 'Hub A', 'Door']);
      assert.equal(third.carrierDetails.events.length, 3);
    });

    if (database.name === 'sqlite') it('shows a change committed by another process at once', async () => {
      const label = await createLabel(t);
      assert.equal((await postEvents(t, [{ trackingNumber: label.trackingNumber, status: 'in_transit', timestamp: hour(10), location: 'Hub A' }])).statusCode, 202);
      assert.equal((await lookup(t, label.id, 'format=detailed')).json().status, 'in_transit');
      assert.equal((await lookup(t, label.id, 'format=detailed')).json().status, 'in_transit');
      // As any writer of tracking must, the other process adds one to the label's events_version.
      sqliteInOtherProcess(t.ctx.config.databaseUrl.slice('sqlite:'.length), "update label_tracking set status = 'delivered', events_version = events_version + 1 where label_id = ?", label.id);
      assert.equal((await lookup(t, label.id, 'format=detailed')).json().status, 'delivered');
    });

    it('matches a model of the history after any sequence of batches and queries', async () => {
      const statuses: TrackingStatus[] = ['in_transit', 'out_for_delivery', 'exception', 'in_transit'];
      const step = fc.record({
        // Distinct hours, so the order is fully defined by time.
        hours: fc.uniqueArray(fc.integer({ min: 0, max: 200 }), { minLength: 0, maxLength: 3 }),
        status: fc.constantFrom(...statuses),
        query: fc.record({ limit: fc.integer({ min: 1, max: 5 }), sort: fc.constantFrom('newest_first', 'oldest_first'), format: fc.constantFrom('detailed', 'carrier-specific') }),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 6 }), async (steps) => {
          const label = await createLabel(t);
          const stored = new Map<number, string>();
          for (const s of steps) {
            const fresh = s.hours.filter((h) => !stored.has(h));
            if (fresh.length > 0) {
              await ingestEvents(t.ctx, t.accountId, fresh.map((h) => ({ trackingNumber: label.trackingNumber, status: s.status, timestamp: hour(h), location: `Hub ${h}` })));
              for (const h of fresh) stored.set(h, `Hub ${h}`);
            }
            const q = s.query;
            const res = await lookup(t, label.id, `format=${q.format}&limit=${q.limit}&sort=${q.sort}`);
            assert.equal(res.statusCode, 200, res.body);
            let hours = [...stored.keys()].sort((a, b) => a - b);
            if (q.sort === 'newest_first') hours = hours.reverse();
            const expected = hours.slice(0, q.limit).map((h) => `Hub ${h}`);
            assert.deepEqual(res.json().events.map((e: { location: string }) => e.location), expected);
          }
        }),
        { numRuns: 15 },
      );
    });
  });
});

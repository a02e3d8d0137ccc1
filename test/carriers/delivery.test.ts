import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { CARRIERS, SERVICES, estimateDelivery, findService } from '../../src/carriers/index.ts';

const DAY = 24 * 60 * 60 * 1000;
const isWeekday = (date: Date) => date.getUTCDay() !== 0 && date.getUTCDay() !== 6;

const carrierAndService = fc
  .constantFrom(...CARRIERS)
  .chain((carrier) => fc.tuple(fc.constant(carrier), fc.constantFrom(...SERVICES[carrier].map((s) => s.code))));

const anyDate = fc.date({
  min: new Date('1970-01-01T00:00:00Z'),
  max: new Date('2100-12-31T23:59:59Z'),
  noInvalidDate: true,
});

describe('estimateDelivery', () => {
  it('adds business days and ends the day at 20:00 UTC', () => {
    // Monday 2025-01-06, 09:30 UTC
    const monday = new Date('2025-01-06T09:30:00Z');
    assert.equal(estimateDelivery('UPS', 'next_day_air', monday).toISOString(), '2025-01-07T20:00:00.000Z');
    assert.equal(estimateDelivery('UPS', '3_day_select', monday).toISOString(), '2025-01-09T20:00:00.000Z');
    assert.equal(estimateDelivery('UPS', 'ground', monday).toISOString(), '2025-01-13T20:00:00.000Z');
  });

  it('skips Saturday and Sunday', () => {
    const friday = new Date('2025-01-03T23:59:00Z');
    const saturday = new Date('2025-01-04T12:00:00Z');
    const sunday = new Date('2025-01-05T12:00:00Z');
    for (const from of [friday, saturday, sunday]) {
      assert.equal(estimateDelivery('FedEx', 'priority_overnight', from).toISOString(), '2025-01-06T20:00:00.000Z');
      assert.equal(estimateDelivery('DHL', 'express_worldwide', from).toISOString(), '2025-01-08T20:00:00.000Z');
    }
    // Thursday + 2 business days = Monday.
    const thursday = new Date('2025-01-02T08:00:00Z');
    assert.equal(estimateDelivery('USPS', 'priority_mail_express', thursday).toISOString(), '2025-01-06T20:00:00.000Z');
  });

  it('lands on a weekday at 20:00 UTC, after exactly transitDays weekdays following the start day', () => {
    fc.assert(
      fc.property(carrierAndService, anyDate, ([carrier, service], from) => {
        const due = estimateDelivery(carrier, service, from);
        assert.ok(isWeekday(due));
        assert.equal(due.getUTCHours(), 20);
        assert.equal(due.getUTCMinutes() + due.getUTCSeconds() + due.getUTCMilliseconds(), 0);
        assert.ok(due > from);
        const startOfFromDay = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate());
        let weekdays = 0;
        for (let t = startOfFromDay + DAY; t <= due.getTime(); t += DAY) if (isWeekday(new Date(t))) weekdays++;
        assert.equal(weekdays, findService(carrier, service)!.transitDays);
        // No more days than its weekdays and a weekend for every five of them (started on a Friday).
        const n = findService(carrier, service)!.transitDays;
        assert.ok(due.getTime() - startOfFromDay < (n + 2 * Math.ceil(n / 5) + 1) * DAY);
      }),
      { numRuns: 2000 },
    );
  });

  it('does not change the date it is given', () => {
    const from = new Date('2025-01-03T10:00:00Z');
    estimateDelivery('UPS', 'ground', from);
    assert.equal(from.toISOString(), '2025-01-03T10:00:00.000Z');
  });

  it('throws RangeError for an unknown service or an invalid date', () => {
    assert.throws(() => estimateDelivery('UPS', 'express_12', new Date()), RangeError);
    assert.throws(() => estimateDelivery('UPS', 'ground', new Date(Number.NaN)), RangeError);
  });
});

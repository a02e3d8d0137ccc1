import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Carrier, TrackingStatus } from '../../src/carriers/index.ts';
import { CARRIERS, TRACKING_STATUSES, carrierStatusCode } from '../../src/carriers/index.ts';

// Codes in the order of TRACKING_STATUSES.
const EXPECTED: Record<Carrier, string[]> = {
  UPS: ['M', 'I', 'O', 'D', 'X', 'RS'],
  USPS: ['MA', '10', 'OF', '01', '05', '31'],
  FedEx: ['OC', 'IT', 'OD', 'DL', 'DE', 'RS'],
  DHL: ['PU', 'PL', 'WC', 'OK', 'NH', 'RT'],
};

describe('tracking statuses (docs/tracking.md)', () => {
  it('are the six documented ones, in order', () => {
    const documented = ['pre_transit', 'in_transit', 'out_for_delivery', 'delivered', 'exception', 'returned'];
    assert.deepEqual(TRACKING_STATUSES, documented);
  });
});

describe('carrierStatusCode', () => {
  it('gives each carrier its own code and a description for every status', () => {
    for (const carrier of CARRIERS) {
      for (const [i, status] of TRACKING_STATUSES.entries()) {
        const { code, description } = carrierStatusCode(carrier, status);
        assert.equal(code, EXPECTED[carrier][i], `${carrier} ${status}`);
        assert.ok(description.length > 0);
      }
    }
  });

  it('gives distinct codes per carrier, so a report names its status unambiguously', () => {
    for (const carrier of CARRIERS) {
      const codes = TRACKING_STATUSES.map((status) => carrierStatusCode(carrier, status).code);
      assert.equal(new Set(codes).size, codes.length, carrier);
    }
  });

  it('returns a copy the caller may change without affecting the table', () => {
    const first = carrierStatusCode('UPS', 'delivered');
    first.code = 'changed';
    assert.equal(carrierStatusCode('UPS', 'delivered').code, 'D');
  });

  it('throws RangeError for an unknown status', () => {
    assert.throws(() => carrierStatusCode('UPS', 'lost' as TrackingStatus), RangeError);
    assert.throws(() => carrierStatusCode('UPS', 'toString' as TrackingStatus), RangeError);
  });
});

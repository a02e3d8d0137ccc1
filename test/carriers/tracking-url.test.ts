import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Carrier } from '../../src/carriers/index.ts';
import { CARRIERS, trackingUrl } from '../../src/carriers/index.ts';

/** Where each carrier's public tracking page takes the number. */
const PAGES: Record<Carrier, { origin: string; pathname: string; param: string }> = {
  UPS: { origin: 'https://www.ups.com', pathname: '/track', param: 'tracknum' },
  USPS: { origin: 'https://tools.usps.com', pathname: '/go/TrackConfirmAction', param: 'tLabels' },
  FedEx: { origin: 'https://www.fedex.com', pathname: '/fedextrack/', param: 'trknbr' },
  DHL: { origin: 'https://www.dhl.com', pathname: '/en/express/tracking.html', param: 'AWB' },
};

describe('trackingUrl', () => {
  it('is the carrier public tracking page for the worked examples', () => {
    assert.equal(trackingUrl('UPS', '1Z5R89390357567127'), 'https://www.ups.com/track?tracknum=1Z5R89390357567127');
    assert.equal(
      trackingUrl('USPS', '9400111206206406260787'),
      'https://tools.usps.com/go/TrackConfirmAction?tLabels=9400111206206406260787',
    );
    assert.equal(trackingUrl('FedEx', '986578788855'), 'https://www.fedex.com/fedextrack/?trknbr=986578788855');
    assert.equal(
      trackingUrl('DHL', '3318810025'),
      'https://www.dhl.com/en/express/tracking.html?AWB=3318810025&brand=DHL',
    );
  });

  it('URL-encodes the number so any string comes back intact as the one query value', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CARRIERS),
        fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('a&b=c', '1Z 5R8#x', '?%+/é東')),
        (carrier, text) => {
          const url = new URL(trackingUrl(carrier, text));
          const page = PAGES[carrier];
          assert.equal(url.origin, page.origin);
          assert.equal(url.pathname, page.pathname);
          assert.equal(url.hash, '');
          assert.deepEqual(url.searchParams.getAll(page.param), [text.toWellFormed()]);
          const expectedParams = carrier === 'DHL' ? [page.param, 'brand'] : [page.param];
          assert.deepEqual([...url.searchParams.keys()], expectedParams);
          if (carrier === 'DHL') assert.equal(url.searchParams.get('brand'), 'DHL');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('encodes spaces, ampersands and plus signs as percent escapes', () => {
    assert.equal(trackingUrl('UPS', '1Z 5R8&+'), 'https://www.ups.com/track?tracknum=1Z%205R8%26%2B');
  });
});

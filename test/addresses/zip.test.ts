// The compact ZIP table answers exactly what the zipcodes package answers, and lets the package go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { loadZipCodes, zipLookup } from '../../src/addresses/zip.ts';

const require = createRequire(import.meta.url);

test('every five-digit ZIP code of the zipcodes package has its city and state, and nothing else is found', () => {
  loadZipCodes();
  assert.equal(Object.keys(require.cache).filter((f) => f.includes('/node_modules/zipcodes/')).length, 0, 'the package is out of the module cache');
  const pkg = require('zipcodes') as { codes: Record<string, { city: string; state: string; country: string }>; lookup(zip: string): { city: string; state: string; country: string } | undefined };
  let us = 0;
  for (let n = 0; n < 100_000; n++) {
    const zip = String(n).padStart(5, '0');
    const expected = pkg.lookup(zip);
    const got = zipLookup(zip);
    if (expected?.country === 'US') {
      us++;
      assert.deepEqual(got, { city: expected.city, state: expected.state }, zip);
    } else assert.equal(got, undefined, zip);
  }
  assert.ok(us > 40_000, `${us} US ZIP codes`);
  assert.deepEqual(zipLookup('10118'), { city: 'New York', state: 'NY' });
  for (const notZip of ['', '1011', '101180', 'ABCDE', 'T0A12', '1e4', ' 1011', '-1000']) assert.equal(zipLookup(notZip), undefined, notZip);
});

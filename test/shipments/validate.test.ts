// POST /v1/addresses/validate on real addresses of twelve countries, on both databases.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { countRows, forEachDatabase, withTestApp } from '../helpers.ts';

const a = (fields: Record<string, string>) => ({ name: 'Recipient', ...fields });

const CASES: { address: Record<string, string>; status: string; matched?: Record<string, string>; codes: string[] }[] = [
  {
    address: a({ name: 'The White House', street1: '1600 pennsylvania avenue northwest', city: 'Washington', state: 'DC', postalCode: '20500', country: 'US' }),
    status: 'verified',
    matched: { name: 'THE WHITE HOUSE', street1: '1600 PENNSYLVANIA AVE NW', city: 'WASHINGTON', state: 'DC', postalCode: '20500' },
    codes: ['standardized'],
  },
  {
    address: a({ street1: '500 Market Street', street2: 'Suite 200', city: 'SF', state: 'CA', postalCode: '94105', country: 'US' }),
    status: 'warning',
    matched: { street1: '500 MARKET ST', street2: 'STE 200', city: 'SAN FRANCISCO' },
    codes: ['city_changed'],
  },
  { address: a({ street1: '1 Main St', city: 'Washington', state: 'DC', postalCode: '94105', country: 'US' }), status: 'error', codes: ['postal_code_state_mismatch'] },
  { address: a({ street1: '1 Main St', city: 'Nowhere', state: 'XX', postalCode: '20500', country: 'US' }), status: 'error', codes: ['state_invalid'] },
  { address: a({ street1: '10 Downing St', city: 'London', postalCode: 'sw1a2aa', country: 'GB' }), status: 'verified', matched: { postalCode: 'SW1A 2AA' }, codes: ['standardized'] },
  { address: a({ street1: 'Königstraße 1', city: 'Stuttgart', postalCode: '70173', country: 'DE' }), status: 'verified', matched: { postalCode: '70173', city: 'Stuttgart' }, codes: [] },
  { address: a({ street1: 'Königstraße 1', city: 'Stuttgart', postalCode: '7017', country: 'DE' }), status: 'error', codes: ['postal_code_invalid'] },
  { address: a({ street1: '24 Sussex Dr', city: 'Ottawa', state: 'ON', postalCode: 'k1m1m4', country: 'CA' }), status: 'verified', matched: { postalCode: 'K1M 1M4' }, codes: ['standardized'] },
  { address: a({ street1: '24 Sussex Dr', city: 'Ottawa', postalCode: 'K1M 1M4', country: 'CA' }), status: 'error', codes: ['state_required'] },
  { address: a({ street1: 'Dam  1', city: 'Amsterdam', postalCode: '1012js', country: 'NL' }), status: 'verified', matched: { street1: 'Dam 1', postalCode: '1012 JS' }, codes: ['standardized'] },
  { address: a({ street1: '1-1 Marunouchi', city: 'Chiyoda-ku, Tokyo', postalCode: '100-0005', country: 'JP' }), status: 'verified', matched: { postalCode: '100-0005' }, codes: [] },
  { address: a({ street1: '55 Rue du Faubourg Saint-Honoré', city: 'Paris', postalCode: '75008', country: 'FR' }), status: 'verified', codes: [] },
  { address: a({ street1: '1 Macquarie St', city: 'Sydney', state: 'NSW', postalCode: '2000', country: 'AU' }), status: 'verified', codes: [] },
  // A Canadian or Australian postal code of another province or state; a border postcode serves both.
  { address: a({ street1: '1 Macquarie St', city: 'Sydney', state: 'VIC', postalCode: '2000', country: 'AU' }), status: 'error', codes: ['postal_code_state_mismatch'] },
  { address: a({ street1: '1 Main St', city: 'Queanbeyan', state: 'NSW', postalCode: '2620', country: 'AU' }), status: 'verified', codes: [] },
  { address: a({ street1: '1 Main St', city: 'Hume', state: 'ACT', postalCode: '2620', country: 'AU' }), status: 'verified', codes: [] },
  { address: a({ street1: '24 Sussex Dr', city: 'Ottawa', state: 'QC', postalCode: 'K1M 1M4', country: 'CA' }), status: 'error', codes: ['postal_code_state_mismatch'] },
  { address: a({ street1: '1 Federal Rd', city: 'Iqaluit', state: 'NU', postalCode: 'X0A 0H0', country: 'CA' }), status: 'verified', codes: [] },
  { address: a({ street1: 'Piazza del Colosseo 1', city: 'Roma', postalCode: '00184', country: 'IT' }), status: 'verified', codes: [] },
  { address: a({ street1: 'Plaza Mayor 1', city: 'Madrid', postalCode: '28012', country: 'ES' }), status: 'verified', codes: [] },
  { address: a({ street1: 'Bahnhofstrasse 1', city: 'Zürich', postalCode: '8001', country: 'CH' }), status: 'verified', codes: [] },
  { address: a({ street1: 'Rua Augusta 1', city: 'Lisboa', postalCode: '1100-048', country: 'PT' }), status: 'verified', codes: [] },
  // An armed-forces address keeps the APO, FPO or DPO it was sent with (USPS's own example of an APO
  // address has a ZIP code the data calls FPO); any other city still becomes the ZIP code's.
  { address: a({ street1: 'PSC 802 Box 74', city: 'APO', state: 'AE', postalCode: '09499-0074', country: 'US' }), status: 'warning', matched: { city: 'APO', state: 'AE' }, codes: ['street_unchecked', 'standardized'] },
  { address: a({ street1: 'Unit 8900 Box 4321', city: 'dpo', state: 'AE', postalCode: '09498', country: 'US' }), status: 'warning', matched: { city: 'DPO' }, codes: ['street_unchecked', 'standardized'] },
  // The separator each post writes, put back when it was left out (or sent as the wrong one).
  { address: a({ street1: '1-1 Marunouchi', city: 'Chiyoda-ku, Tokyo', postalCode: '1000005', country: 'JP' }), status: 'verified', matched: { postalCode: '100-0005' }, codes: ['standardized'] },
  { address: a({ street1: 'Avenida Paulista 1000', city: 'Sao Paulo', postalCode: '01310100', country: 'BR' }), status: 'verified', matched: { postalCode: '01310-100' }, codes: ['standardized'] },
  { address: a({ street1: 'ul. Marszałkowska 1', city: 'Warszawa', postalCode: '00950', country: 'PL' }), status: 'verified', matched: { postalCode: '00-950' }, codes: ['standardized'] },
  { address: a({ street1: '1 Republic St', city: 'Valletta', postalCode: 'vlt1117', country: 'MT' }), status: 'verified', matched: { postalCode: 'VLT 1117' }, codes: ['standardized'] },
  { address: a({ street1: '1 Front St', city: 'Hamilton', postalCode: 'hm12', country: 'BM' }), status: 'verified', matched: { postalCode: 'HM 12' }, codes: ['standardized'] },
  { address: a({ street1: 'Bridle Road', city: 'Bootle', postalCode: 'gir0aa', country: 'GB' }), status: 'verified', matched: { postalCode: 'GIR 0AA' }, codes: ['standardized'] },
  { address: a({ street1: 'Dam 1', city: 'Amsterdam', postalCode: '0012 AB', country: 'NL' }), status: 'error', codes: ['postal_code_invalid'] },
  { address: a({ street1: 'Brīvības iela 1', city: 'Rīga', postalCode: '1050', country: 'LV' }), status: 'verified', matched: { postalCode: 'LV-1050' }, codes: ['standardized'] },
  { address: a({ street1: 'Brīvības iela 1', city: 'Rīga', postalCode: 'lv1050', country: 'LV' }), status: 'verified', matched: { postalCode: 'LV-1050' }, codes: ['standardized'] },
  { address: a({ street1: 'Rua Augusta 1', city: 'Lisboa', postalCode: '1100048', country: 'PT' }), status: 'verified', matched: { postalCode: '1100-048' }, codes: ['standardized'] },
  { address: a({ street1: 'Upper Merrion St', city: 'Dublin 2', postalCode: 'd02x285', country: 'IE' }), status: 'verified', matched: { postalCode: 'D02 X285' }, codes: ['standardized'] },
  { address: a({ street1: 'Drottninggatan 1', city: 'Stockholm', postalCode: '11151', country: 'SE' }), status: 'verified', matched: { postalCode: '111 51' }, codes: ['standardized'] },
  // The country code in either case, with spaces around it: checked, and given in capitals (§16).
  { address: a({ street1: '10 Downing St', city: 'London', postalCode: 'sw1a2aa', country: 'gb' }), status: 'verified', matched: { country: 'GB', postalCode: 'SW1A 2AA' }, codes: ['standardized'] },
  { address: a({ street1: 'Königstraße 1', city: 'Stuttgart', postalCode: '70173', country: ' de ' }), status: 'verified', matched: { country: 'DE' }, codes: ['standardized'] },
  { address: a({ street1: '1 Main St', city: 'Nowhere', postalCode: '12345', country: 'xx' }), status: 'error', codes: ['country_invalid'] },
  // What a label could not print is an error, as a shipment refuses it: only emoji (printed as nothing), a script no font has.
  { address: a({ name: '🎁', street1: '🎁🎁', city: 'Stuttgart', postalCode: '70173', country: 'DE' }), status: 'error', codes: ['text_unprintable', 'text_unprintable'] },
  { address: a({ street1: '99 ถนนสุขุมวิท', city: 'Bangkok', postalCode: '10110', country: 'TH' }), status: 'error', codes: ['text_unprintable'] },
  { address: a({ street1: 'Václavské náměstí 1', city: 'Praha 1', postalCode: '110-00', country: 'CZ' }), status: 'verified', matched: { postalCode: '110 00' }, codes: ['standardized'] },
  { address: a({ street1: '1600 Pennsylvania Ave NW', city: 'Washington', state: 'DC', postalCode: '205000003', country: 'US' }), status: 'verified', matched: { postalCode: '20500-0003' }, codes: ['standardized'] },
  { address: a({ street1: '1-1 Marunouchi', city: 'Chiyoda-ku, Tokyo', postalCode: '100000', country: 'JP' }), status: 'error', codes: ['postal_code_invalid'] },
];

forEachDatabase((database) => {
  describe('POST /v1/addresses/validate', () => {
    const t = withTestApp(database);
    const validate = (addresses: unknown[]) => t.request({ method: 'POST', url: '/v1/addresses/validate', payload: { addresses } });

    it('answers every address in order: verified, warning or error, the standardised form, messages naming the field', async () => {
      const before = await countRows(t.ctx, 'shipments');
      const res = await validate(CASES.map((c) => c.address));
      assert.equal(res.statusCode, 200, res.body);
      const results = res.json();
      assert.equal(results.length, CASES.length);
      CASES.forEach((c, i) => {
        const r = results[i];
        const where = `${i}: ${JSON.stringify(c.address)} → ${JSON.stringify(r)}`;
        assert.equal(r.status, c.status, where);
        assert.deepEqual(r.original, c.address, where);
        assert.deepEqual(r.messages.map((m: { code: string }) => m.code), c.codes, where);
        if (c.status === 'error') {
          assert.equal(r.matched, null, where);
          assert.ok(r.messages.every((m: { field: string | null }) => m.field), where);
        } else {
          for (const [k, v] of Object.entries(c.matched ?? {})) assert.equal(r.matched[k], v, `${where} ${k}`);
        }
      });
      assert.equal(await countRows(t.ctx, 'shipments'), before, 'nothing is stored');
    });

    it('takes 250 addresses, refuses 251 and an empty list', async () => {
      const one = CASES[5]!.address;
      assert.equal((await validate(Array(250).fill(one))).json().length, 250);
      assert.equal((await validate(Array(251).fill(one))).statusCode, 400);
      assert.equal((await validate([])).statusCode, 400);
    });

    it('a malformed element is 400 naming its index', async () => {
      const res = await validate([CASES[0]!.address, CASES[5]!.address, { ...CASES[5]!.address, country: 'D1' }]);
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().details[0].field, 'addresses[2].country');
      assert.equal(res.json().details[0].message, 'must be a two-letter ISO 3166-1 country code, like DE or US');
    });
  });
});

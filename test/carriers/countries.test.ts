import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ISO_NUMERIC_COUNTRY } from '../../src/carriers/index.ts';

describe('ISO_NUMERIC_COUNTRY', () => {
  it('maps at least 60 alpha-2 codes to distinct 3-digit numeric codes', () => {
    const entries = Object.entries(ISO_NUMERIC_COUNTRY);
    assert.ok(entries.length >= 60, `${entries.length} countries`);
    for (const [alpha2, numeric] of entries) {
      assert.match(alpha2, /^[A-Z]{2}$/);
      assert.match(numeric, /^\d{3}$/);
    }
    assert.equal(new Set(entries.map(([, numeric]) => numeric)).size, entries.length);
  });

  it('has the common destinations with their ISO 3166-1 numbers', () => {
    const expected = {
      US: '840', CA: '124', MX: '484', GB: '826', DE: '276', FR: '250', GR: '300', RU: '643', JP: '392', CN: '156',
      IT: '380', ES: '724', NL: '528', BE: '056', AU: '036', BR: '076', IN: '356', KR: '410', AT: '040', CH: '756',
    };
    for (const [alpha2, numeric] of Object.entries(expected)) {
      assert.equal(ISO_NUMERIC_COUNTRY[alpha2], numeric, alpha2);
    }
  });

  it('knows every alpha-2 code as a region name (no invented codes)', () => {
    const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
    for (const alpha2 of Object.keys(ISO_NUMERIC_COUNTRY)) assert.ok(names.of(alpha2), alpha2);
  });
});

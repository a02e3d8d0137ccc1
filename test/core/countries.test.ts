import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import isoCountries from 'i18n-iso-countries';
import { countryCodes, countryName, countryNumeric, isCountryCode } from '../../src/countries.ts';

describe('ISO 3166-1 numeric codes printed in MaxiCode and routing barcodes', () => {
  it('prints the common name where ISO\'s is inverted or long: no "X, THE …" and no parenthesised alternative on a country line', () => {
    assert.equal(countryName('VA'), 'VATICAN CITY');
    assert.equal(countryName('VG'), 'BRITISH VIRGIN ISLANDS');
    assert.equal(countryName('CD'), 'DEMOCRATIC REPUBLIC OF THE CONGO');
    const awkward = countryCodes().filter((c) => /\(|, (THE|STATE|FEDERATED|BRITISH|U\.S\.)/.test(countryName(c)));
    assert.deepEqual(awkward, ['MF', 'SX'], 'Saint Martin\'s two parts are told apart by their parentheses');
  });

  it('has the common destinations with their ISO 3166-1 numbers', () => {
    const expected = {
      US: '840', CA: '124', MX: '484', GB: '826', DE: '276', FR: '250', GR: '300', RU: '643', JP: '392', CN: '156',
      IT: '380', ES: '724', NL: '528', BE: '056', AU: '036', BR: '076', IN: '356', KR: '410', AT: '040', CH: '756',
    };
    for (const [alpha2, numeric] of Object.entries(expected)) assert.equal(countryNumeric(alpha2), numeric, alpha2);
  });

  it('knows every country Intl knows, with a distinct 3-digit number and a name', () => {
    const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
    const seen = new Map<string, string>();
    for (let a = 65; a <= 90; a++) {
      for (let b = 65; b <= 90; b++) {
        const code = String.fromCharCode(a, b);
        const numeric = countryNumeric(code);
        if (numeric === '999') continue;
        assert.match(numeric, /^\d{3}$/, code);
        assert.ok(!seen.has(numeric), `${code} and ${seen.get(numeric)} share ${numeric}`);
        seen.set(numeric, code);
        assert.notEqual(countryName(code), code, code);
        assert.ok(names.of(code), `${code} is not a region Intl knows`);
      }
    }
    assert.ok(seen.size >= 240, `${seen.size} countries`);
  });
});

describe('the country table', () => {
  it('has exactly the codes and numbers of ISO 3166-1 as the i18n-iso-countries package has them (Kosovo, XK, is user-assigned, not ISO)', () => {
    const theirs = Object.entries(isoCountries.getNumericCodes()).filter(([, alpha2]) => alpha2 !== 'XK');
    assert.deepEqual(countryCodes().sort(), theirs.map(([, alpha2]) => alpha2).sort());
    for (const [numeric, alpha2] of theirs) assert.equal(countryNumeric(alpha2), numeric, alpha2);
  });

  it('knows only assigned codes: not the EU, the UK spelling, user-assigned or private-use codes', () => {
    for (const code of ['EU', 'UK', 'ZZ', 'XA', 'QO', 'XK', 'AA', 'us']) assert.equal(isCountryCode(code), false, code);
    for (const code of ['US', 'GB', 'DE', 'JP', 'GR', 'AX']) assert.equal(isCountryCode(code), true, code);
  });
});

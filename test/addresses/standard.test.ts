// US street lines in USPS Publication 28's form (src/addresses/standard.ts), against the path they
// replaced, parse-address's parseLocation, kept here only as the oracle: the same line wherever that
// path kept every word of a realistic line, and every word kept where it lost some (docs/addresses.md).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { standardise, UNIT_WORDS, uspsLine } from '../../src/addresses/standard.ts';

const require = createRequire(import.meta.url);
const parser = require('parse-address') as { parseLocation(text: string): Record<string, string | undefined> | null };
const streetTypes = require('street-types') as { suffix: string; abbrs: string[]; standardAbbr: string }[];
const { directionsMap } = require('@sroussey/parse-address/dist/maps/us/directions.js') as { directionsMap: Record<string, string> };

/** The line as the service standardised it before: parseLocation's parts, unit words from Appendix C2. */
function oldUspsLine(text: string): { line: string; parsed: boolean } {
  const clean = text.toUpperCase().replace(/[.,#]/g, ' ').replace(/\s+/g, ' ').trim();
  const p = parser.parseLocation(clean);
  if (!p?.number || !p.street) return { line: clean, parsed: false };
  const unit = p.sec_unit_type ? (UNIT_WORDS[p.sec_unit_type.toUpperCase()] ?? p.sec_unit_type.toUpperCase()) : undefined;
  const parts = [p.number, p.prefix, p.street, p.type, p.suffix, unit, p.sec_unit_num].filter((x): x is string => Boolean(x));
  return { line: parts.join(' ').toUpperCase(), parsed: true };
}

// Publication 28's suffixes that parse-address did not know (read as part of the name, or lost), and
// KEY, a unit designator of Appendix C2 that it read as the suffix KY: documented differences.
const UNKNOWN_TO_PARSE_ADDRESS = ['RAMP', 'WAYS', 'TRAILER', 'TRLR', 'TRLRS'];
const standardAbbreviations = new Set(streetTypes.map((t) => t.standardAbbr.trim()));
/** [spelling, USPS abbreviation] of every street suffix; a standard abbreviation stays itself (MDW). */
const SUFFIXES = streetTypes.flatMap((t) =>
  [t.suffix, ...t.abbrs]
    .map((s) => s.trim())
    .filter((s) => !standardAbbreviations.has(s) || s === t.standardAbbr.trim())
    .filter((s) => !UNKNOWN_TO_PARSE_ADDRESS.includes(s))
    .map((s): [string, string] => [s, t.standardAbbr.trim()]),
);
const SUFFIX_SPELLINGS = new Set(streetTypes.flatMap((t) => [t.suffix, ...t.abbrs].map((s) => s.trim())));
const DIRECTIONALS = Object.entries(directionsMap).flatMap(([word, abbreviation]): [string, string][] => [[word.toUpperCase(), abbreviation], [abbreviation, abbreviation]]);
const UNITS = Object.entries(UNIT_WORDS)
  .filter(([word]) => word !== 'KEY')
  .flatMap(([word, abbreviation]): [string, string][] => [[word, abbreviation], [abbreviation, abbreviation]]);
/** Words of street names; some are suffixes, directionals or unit words too, as in real names. */
const NAME_WORDS = ['MAIN', 'OAK', 'PENNSYLVANIA', 'MARKET', 'FIFTH', 'MARTIN LUTHER KING', 'SAINT MARKS', 'WILKES-BARRE', 'BROADWAY', 'CHURCH', 'PARK', 'LAKE', 'CENTER', 'SPRING', 'FOREST', 'FRONT', 'NORTH', 'UNION'];
const ORDINAL = fc.integer({ min: 1, max: 130 }).map((n) => `${n}${n % 100 >= 11 && n % 100 <= 13 ? 'TH' : ['TH', 'ST', 'ND', 'RD'][n % 10] ?? 'TH'}`);

/** A word as someone types it: capitals, small letters, or capitalised, sometimes with a full stop. */
const typed = (word: string) => fc.constantFrom(word, word.toLowerCase(), word.charAt(0) + word.slice(1).toLowerCase()).chain((w) => fc.constantFrom(w, w.length <= 4 ? `${w}.` : w));
const pair = (pairs: [string, string][]) => fc.constantFrom(...pairs).chain(([word, usps]) => typed(word).map((written) => ({ written, usps })));

interface Street {
  line: string;
  /** The line in USPS's form, from the parts it was made of. */
  usps: string;
}

/** Number, optional pre-directional, 1–3 name words (ordinals too), suffix, optional post-directional, optional unit. */
const street: fc.Arbitrary<Street> = fc
  .record({
    number: fc.oneof(fc.integer({ min: 1, max: 99999 }).map(String), fc.constantFrom('100-12', '123A', 'W123N4567')),
    pre: fc.option(pair(DIRECTIONALS)),
    names: fc.array(fc.oneof(fc.constantFrom(...NAME_WORDS), ORDINAL).chain(typed), { minLength: 1, maxLength: 3 }),
    suffix: pair(SUFFIXES),
    post: fc.option(pair(DIRECTIONALS)),
    unit: fc.option(fc.record({ designator: pair(UNITS), number: fc.option(fc.constantFrom('5', '12', '200B', '2-A', 'A', 'C')), hash: fc.boolean(), comma: fc.boolean(), first: fc.boolean() })),
    hashOnly: fc.option(fc.constantFrom('5', '12B')),
  })
  // A first name word that is a directional is a pre-directional (`NORTH MAIN ST` is `N MAIN ST`).
  .filter((s) => s.pre !== null || !DIRECTIONALS.some(([word]) => word === s.names[0]!.toUpperCase().replace('.', '')))
  // TRAILER without a number ends the street as its suffix (parse-address read it so too); the suffix
  // KEY before `#5` is read as the unit KEY 5.
  .filter((s) => !s.unit || s.unit.number !== null || !SUFFIX_SPELLINGS.has(s.unit.designator.written.toUpperCase().replace('.', '')))
  .filter((s) => !s.hashOnly || !Object.entries(UNIT_WORDS).flat().includes(s.suffix.written.toUpperCase().replace('.', '')))
  .map((s) => {
    const line = [s.number, s.pre?.written, ...s.names, s.suffix.written, s.post?.written];
    const usps = [s.number, s.pre?.usps, ...s.names.map((n) => n.toUpperCase().replace('.', '')), s.suffix.usps, s.post?.usps];
    if (s.unit) {
      const unit = `${s.unit.designator.written}${s.unit.number === null ? '' : ` ${s.unit.hash ? '#' : ''}${s.unit.number}`}`;
      // A unit with a number may come first (`Suite 200, 500 Market St`); USPS writes it last.
      if (s.unit.first && s.unit.number !== null) line.unshift(`${unit}${s.unit.comma ? ',' : ''}`);
      else line.push(`${s.unit.comma ? ',' : ''} ${unit}`);
      usps.push(s.unit.designator.usps, s.unit.number ?? undefined);
    } else if (s.hashOnly) {
      line.push(`#${s.hashOnly}`);
      usps.push('#', s.hashOnly);
    }
    return { line: line.filter((w) => w).join(' '), usps: usps.filter((w) => w).join(' ') };
  });

/** Post office boxes and corners, which are no street address: tidied, and flagged as unchecked. */
const notAStreet = fc.oneof(
  fc.tuple(fc.constantFrom('PO Box', 'P.O. Box', 'P O Box', 'Post Office Box', 'po box'), fc.integer({ min: 1, max: 99999 })).map(([box, n]) => `${box} ${n}`),
  fc.tuple(street, fc.constantFrom('&', 'and', 'at', '@'), street).map(([a, corner, b]) => `${a.line.replace(/^\S+ /, '')} ${corner} ${b.line.replace(/^\S+ /, '')}`),
);

const wordsOf = (text: string) => text.toUpperCase().replace(/[.,#]/g, ' ').trim().split(/\s+/);

describe('the standardised address (standardise)', () => {
  test('a state in Greek is in capitals as Greek writes them: without the tonos', () => {
    const { address } = standardise({ name: 'Μαρία', street1: 'Ερμού 10', city: 'Αθήνα', state: 'Αττική', postalCode: '10563', country: 'GR' });
    assert.equal(address.state, 'ΑΤΤΙΚΗ');
    assert.equal(address.postalCode, '105 63');
  });
});

describe('US street lines in USPS form (uspsLine)', () => {
  test('initials written with full stops are one word: N.W. is NW, not N W', () => {
    const cases: [string, string, boolean][] = [
      ['1600 Pennsylvania Avenue, N.W.', '1600 PENNSYLVANIA AVE NW', true],
      ['1600 Pennsylvania Ave. N.W.', '1600 PENNSYLVANIA AVE NW', true],
      ['100 S.E. Main St.', '100 SE MAIN ST', true],
      ['12 U.S. Route 1', '12 US ROUTE 1', true],
      ['100 N. Main St.', '100 N MAIN ST', true],
      ['100 Main St.Apt 5', '100 MAIN ST APT 5', true],
      ['P.O. Box 123', 'PO BOX 123', false],
      ['P.O.Box 12', 'PO BOX 12', false],
      ['100 N.W.23rd Ave', '100 NW 23RD AVE', true],
    ];
    for (const [text, line, parsed] of cases) assert.deepEqual(uspsLine(text), { line, parsed }, text);
  });

  test('the same line as parse-address gave, wherever it kept every word of a realistic line', () => {
    let compared = 0;
    const lines = fc.oneof(street.map((s) => ({ line: s.line, street: true })), notAStreet.map((line) => ({ line, street: false })));
    fc.assert(
      fc.property(lines, ({ line, street }) => {
        const old = oldUspsLine(line);
        if (street && !old.parsed) return; // it could not read a street line (`REAR C 1 MAIN ST`)
        if (/(?:[A-Za-z]\.){2,}/.test(line)) return; // it split dotted initials (`P O BOX`): the first test
        const [number, ...rest] = old.line.split(' ');
        const words = wordsOf(line);
        // It lost words, or split a house number with a letter (123A → 123 A): the next tests.
        if (rest.length + 1 !== words.length || number !== words[0]) return;
        compared++;
        assert.deepEqual(uspsLine(line), old, line);
      }),
      { numRuns: 4000 },
    );
    // The comparison must not have been skipped for most lines.
    assert.ok(compared > 2000, `compared ${compared} of 4000 lines`);
  });

  test('every word of a realistic line is kept, in order, its suffix, directionals and unit word abbreviated', () => {
    fc.assert(
      fc.property(street, ({ line, usps }) => assert.deepEqual(uspsLine(line), { line: usps, parsed: true }, line)),
      { numRuns: 4000 },
    );
  });

  test('a post office box or a corner is only tidied, as before (P.O. closed up to PO)', () => {
    fc.assert(
      fc.property(notAStreet, (line) => {
        assert.deepEqual(uspsLine(line), { line: line.toUpperCase().replace('P.O.', 'PO').replace(/[.,#]/g, ' ').replace(/\s+/g, ' ').trim(), parsed: false }, line);
      }),
    );
  });

  test('where parse-address lost or changed words (docs/addresses.md)', () => {
    const cases: [line: string, now: string, before: string][] = [
      // It read the last words as a city and a state (NE Nebraska, CT Connecticut) and dropped them.
      ['100 Main St NE', '100 MAIN ST NE', '100 MAIN'],
      ['100 Sunset Oak Ct', '100 SUNSET OAK CT', '100 SUNSET'],
      // It stopped at the first word that could end a street and dropped the rest.
      ['100 Avenue of the Americas', '100 AVENUE OF THE AMERICAS', '100 AVENUE'],
      ['100 US Highway 1', '100 US HIGHWAY 1', '100 US HWY'],
      ['16 West Spring Forest Rd NW', '16 W SPRING FOREST RD NW', '16 WEST SPG'],
      ['100 Main St Rear 5', '100 MAIN ST REAR 5', '100 MAIN ST REAR'],
      // A unit written with # alone, a fraction, a house number with a letter.
      ['100 Main St #5', '100 MAIN ST # 5', '100 MAIN ST'],
      ['100 1/2 Main St', '100 1/2 MAIN ST', '100 MAIN ST'],
      ['123A Main St', '123A MAIN ST', '123 A MAIN ST'],
      // Letters outside A–Z are kept.
      ['100 Peña Blvd', '100 PEÑA BLVD', '100 PEA BLVD'],
      // Publication 28's tables: RAMP is a suffix, KEY a unit; CR and LA are not spellings USPS lists.
      ['100 Ocean Ramp', '100 OCEAN RAMP', '100 OCEAN'],
      ['100 Main St Key 5', '100 MAIN ST KEY 5', '100 MAIN ST KY'],
      ['100 Main Cr', '100 MAIN CR', '100 MAIN CRK'],
      ['100 Main La', '100 MAIN LA', '100 MAIN LN'],
    ];
    for (const [line, now, before] of cases) {
      assert.deepEqual(uspsLine(line), { line: now, parsed: true }, line);
      assert.equal(oldUspsLine(line).line, before, line);
    }
  });

  test('a suffix that is also a unit word (KEY, TRAILER) before a unit without a number, and a unit word as a unit’s number, as parse-address read them', () => {
    const cases: [line: string, usps: string][] = [
      ['100-12 1st Key  Penthouse', '100-12 1ST KY PH'],
      ['100 Main Key Lobby', '100 MAIN KY LBBY'],
      ['100 Main Key Front', '100 MAIN KY FRNT'],
      ['100 Main Key Basement', '100 MAIN KY BSMT'],
      ['100 Main Trailer Rear', '100 MAIN TRLR REAR'],
      // After any other designator a unit word is the unit's number.
      ['100 Main Street Apt Upper', '100 MAIN ST APT UPPER'],
      ['100 North Main Street Suite Lobby', '100 N MAIN ST STE LOBBY'],
      ['100 Main Street Northwest Apartment Upper', '100 MAIN ST NW APT UPPER'],
    ];
    for (const [line, usps] of cases) {
      assert.deepEqual(uspsLine(line), { line: usps, parsed: true }, line);
      assert.deepEqual(oldUspsLine(line), { line: usps, parsed: true }, line);
    }
  });

  test('lines that are no street line of the grammar are tidied and flagged, as before', () => {
    for (const line of ['100', 'Main St', 'Apt 5, Main St', 'PO Box 9', '5th Ave & Broadway']) {
      assert.equal(uspsLine(line).parsed, false, line);
      assert.equal(oldUspsLine(line).parsed, false, line);
    }
  });
});

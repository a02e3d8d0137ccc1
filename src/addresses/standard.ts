// The standardised form of an address: every field trimmed with single spaces, the country code and
// the postal code in their canonical spelling, and for the US the USPS Publication 28 form (capitals,
// no punctuation, suffixes, directionals and unit words abbreviated, the ZIP code's city).
import { zipLookup } from './zip.ts';
import { createRequire } from 'node:module';
import type { Address } from '../carriers/types.ts';
import { canonicalPostal } from '../countries.ts';
import { postalCapitals } from '../render/text.ts';

const require = createRequire(import.meta.url);
// Publication 28's words come from maintained packages (docs/decisions.md): the street suffixes of its
// Appendix C1 with every spelling USPS lists (`street-types`), and the directionals of Appendix B from
// the maintained fork of parse-address, which exports its tables (only that table is loaded).
const streetTypes = require('street-types') as { suffix: string; abbrs: string[]; standardAbbr: string }[];
const { directionsMap } = require('@sroussey/parse-address/dist/maps/us/directions.js') as { directionsMap: Record<string, string> };

/** Every spelling of a street suffix → its abbreviation (`AVENUE`, `AVEN`, `AV`, `AVE` → `AVE`). */
const SUFFIXES = new Map<string, string>();
for (const type of streetTypes) {
  for (const spelling of [type.suffix, ...type.abbrs]) SUFFIXES.set(spelling.trim(), type.standardAbbr.trim());
}
// An abbreviation that USPS also lists as a spelling of another suffix (MDW under MEADOWS) stays itself.
for (const type of streetTypes) SUFFIXES.set(type.standardAbbr.trim(), type.standardAbbr.trim());

/** A directional, in full or abbreviated → its abbreviation (`NORTHWEST`, `NW` → `NW`). */
const DIRECTIONALS = new Map<string, string>();
for (const [word, abbreviation] of Object.entries(directionsMap)) {
  DIRECTIONALS.set(word.toUpperCase(), abbreviation);
  DIRECTIONALS.set(abbreviation, abbreviation);
}

/** USPS Publication 28, Appendix C2: the secondary unit designators and their abbreviations. */
export const UNIT_WORDS: Record<string, string> = {
  APARTMENT: 'APT', BASEMENT: 'BSMT', BUILDING: 'BLDG', DEPARTMENT: 'DEPT', FLOOR: 'FL', FRONT: 'FRNT', HANGAR: 'HNGR',
  KEY: 'KEY', LOBBY: 'LBBY', LOT: 'LOT', LOWER: 'LOWR', OFFICE: 'OFC', PENTHOUSE: 'PH', PIER: 'PIER', REAR: 'REAR',
  ROOM: 'RM', SIDE: 'SIDE', SLIP: 'SLIP', SPACE: 'SPC', STOP: 'STOP', SUITE: 'STE', TRAILER: 'TRLR', UNIT: 'UNIT', UPPER: 'UPPR',
};

/** A unit designator, in full or abbreviated → its abbreviation (`#` stands for one not named, `# 5`). */
const UNIT_DESIGNATORS = new Map<string, string>();
for (const [word, abbreviation] of Object.entries(UNIT_WORDS)) {
  UNIT_DESIGNATORS.set(word, abbreviation);
  UNIT_DESIGNATORS.set(abbreviation, abbreviation);
}

/** A corner (`5TH AVE & BROADWAY`, `MAIN ST AT 1ST AVE`) is no street address. */
const CORNER = /(?:\band\b|\bat\b|&|@)/i;
/** `1600`, `100-12` (Queens), `123A`, and the grid numbers of Wisconsin and Utah (`W123N4567`). */
const HOUSE_NUMBER = /^(?:\d+(?:-\d+)?[A-Z]?|[NSEW]\d{1,3}[NSEW]\d{1,6})$/;
const FRACTION = /^\d+\/\d+$/;
const UNIT_NUMBER = /^[A-Z0-9_-]+$/;
/** What a word of a street line drops: all but letters, digits, the hyphen of `WILKES-BARRE`, a unit's `#`. */
const NOT_KEPT = /[^\p{L}\p{N}_#-]/gu;
/** Most words: nothing to drop, so the Unicode-aware replace is skipped. */
const PLAIN_WORD = /^[A-Z0-9#-]*$/;

/** A US street line in its parts, each in USPS's spelling: `1600 N PENNSYLVANIA AVE NW STE 200`. */
interface StreetLine {
  number: string;
  preDirectional?: string;
  name: string;
  suffix?: string;
  postDirectional?: string;
  unit?: string;
  unitNumber?: string;
}

/** Initials written with full stops, `N.W.` or `P.O.`: one word (`NW`, `PO`), not a word per letter. */
const DOTTED_INITIALS = /(?<![A-Z0-9])(?:[A-Z]\.){2,}/g;

/** `text` in capitals, its dotted initials closed up and ended as a word (`P.O.Box` is `PO Box`). */
function capitals(text: string): string {
  return postalCapitals(text).replace(DOTTED_INITIALS, (initials) => `${initials.replaceAll('.', '')} `);
}

/** The words of a line: capitals, `#` a word of its own, punctuation dropped (`OFARRELL`) but a fraction's `/`. */
function streetWords(text: string): string[] {
  return capitals(text)
    .replace(/#/g, ' # ')
    .split(/[\s.,]+/)
    .map((word) => (PLAIN_WORD.test(word) || FRACTION.test(word) ? word : word.replace(NOT_KEPT, '')))
    .filter((word) => word !== '');
}

interface Unit {
  unit: string;
  unitNumber?: string;
  /** How many words it takes. */
  length: number;
}

/** A unit's number: `5`, `200B`, `2-A`; not a street suffix (`W FRONT ST` is no unit `FRNT ST`). */
function isUnitNumber(word: string | undefined): word is string {
  return word !== undefined && UNIT_NUMBER.test(word) && !SUFFIXES.has(word);
}

/** The unit that starts at `words[at]`: `APT 5`, `STE # 200`, `# 5`, or a designator alone (`REAR`). */
function readUnit(words: string[], at: number): Unit | undefined {
  const first = words[at]!;
  if (first === '#') return isUnitNumber(words[at + 1]) ? { unit: '#', unitNumber: words[at + 1], length: 2 } : undefined;
  const designator = UNIT_DESIGNATORS.get(first);
  if (designator === undefined) return undefined;
  const hash = words[at + 1] === '#' ? 1 : 0;
  const number = words[at + 1 + hash];
  // KEY and TRAILER are street suffixes too: `MAIN KEY W` and `MAIN KEY PENTHOUSE` (the unit PH) are
  // streets, `MAIN ST KEY 5` a unit. After any other designator a unit word is its number (`APT REAR`).
  if (isUnitNumber(number) && !(SUFFIXES.has(first) && (DIRECTIONALS.has(number) || UNIT_DESIGNATORS.has(number)))) {
    return { unit: designator, unitNumber: number, length: 2 + hash };
  }
  return hash || SUFFIXES.has(first) ? undefined : { unit: designator, length: 1 };
}

/** The unit that ends `words[..end)` and leaves at least the word at `start` before it. */
function unitAtEnd(words: string[], start: number, end: number): Unit | undefined {
  for (let at = Math.max(start + 1, end - 3); at < end; at++) {
    const unit = readUnit(words, at);
    if (unit && at + unit.length === end) return unit;
  }
  return undefined;
}

/**
 * A US street line read as house number, pre-directional, street name, suffix, post-directional and
 * unit (Publication 28's order), or null when it has no house number or a `#` inside the name.
 */
function readStreetLine(text: string): StreetLine | null {
  const words = streetWords(text);
  // A unit may come first (`STE 200, 500 MARKET ST`); USPS writes it last.
  const first = words.length > 0 ? readUnit(words, 0) : undefined;
  const leading = first?.unitNumber !== undefined && HOUSE_NUMBER.test(words[first.length] ?? '') ? first : undefined;
  let start = leading?.length ?? 0;
  let end = words.length;
  let number = words[start];
  if (number === undefined || !HOUSE_NUMBER.test(number)) return null;
  start++;
  if (words[start] !== undefined && FRACTION.test(words[start]!)) number = `${number} ${words[start++]}`;
  if (start === end) return null;
  const line: StreetLine = { number, name: '' };
  const unit = leading ?? unitAtEnd(words, start, end);
  if (unit) {
    line.unit = unit.unit;
    if (unit.unitNumber !== undefined) line.unitNumber = unit.unitNumber;
    if (!leading) end -= unit.length;
  }
  // Each part is taken only if a word is left for the name: `123 NORTH AVE` is the street NORTH.
  const post = end - 1 > start ? DIRECTIONALS.get(words[end - 1]!) : undefined;
  if (post) {
    line.postDirectional = post;
    end--;
  }
  const suffix = end - 1 > start ? SUFFIXES.get(words[end - 1]!) : undefined;
  if (suffix) {
    line.suffix = suffix;
    end--;
  }
  const pre = end - 1 > start ? DIRECTIONALS.get(words[start]!) : undefined;
  if (pre) {
    line.preDirectional = pre;
    start++;
  }
  const name = words.slice(start, end);
  if (name.includes('#')) return null;
  line.name = name.join(' ');
  return line;
}

/** A tidied field without full stops and commas (most have none, and skip the replacing). */
function withoutPunctuation(text: string): string {
  return /[.,]/.test(text) ? text.replace(/[.,]/g, '').replace(/\s+/g, ' ').trim() : text;
}

function tidy(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const t = text.trim().replace(/\s+/g, ' ');
  return t === '' ? undefined : t;
}

/** A US street line in USPS's form, or only tidied (capitals, no punctuation) when it cannot be read. */
export function uspsLine(text: string): { line: string; parsed: boolean } {
  // A corner is not read; nor is a post office box (`PO BOX 12`), which has no house number.
  const street = CORNER.test(text) ? null : readStreetLine(text);
  if (!street) return { line: capitals(text).replace(/[.,#]/g, ' ').replace(/\s+/g, ' ').trim(), parsed: false };
  const parts = [street.number, street.preDirectional, street.name, street.suffix, street.postDirectional, street.unit, street.unitNumber];
  return { line: parts.filter((part) => part !== undefined).join(' '), parsed: true };
}

export interface Standardised {
  address: Address;
  /** The city was replaced by the ZIP code's. */
  cityChanged: boolean;
  /** A US street line could not be parsed, so it is only tidied. */
  unchecked: string[];
}

/** USPS's armed-forces "states" and the "cities" of their addresses (Publication 28, section 225). */
const MILITARY_STATES = new Set(['AA', 'AE', 'AP']);
const MILITARY_CITIES = new Set(['APO', 'FPO', 'DPO']);

/** The standardised form of an address that passed the checks. */
export function standardise(a: Address): Standardised {
  const country = a.country.trim().toUpperCase();
  // Built field by field in the schema's order: spreading optional fields in costs more than the rest.
  const out = { name: tidy(a.name)! } as Address;
  const company = tidy(a.company);
  if (company) out.company = company;
  out.street1 = tidy(a.street1)!;
  const street2 = tidy(a.street2);
  if (street2) out.street2 = street2;
  out.city = tidy(a.city)!;
  const state = tidy(a.state);
  if (state) out.state = postalCapitals(state);
  if (a.postalCode !== undefined) out.postalCode = canonicalPostal(country, a.postalCode);
  out.country = country;
  const phone = tidy(a.phone);
  if (phone) out.phone = phone;
  const email = tidy(a.email);
  if (email) out.email = email;
  let cityChanged = false;
  const unchecked: string[] = [];
  if (country === 'US') {
    for (const key of ['name', 'company', 'street2', 'city'] as const) {
      const v = out[key];
      if (v !== undefined) out[key] = withoutPunctuation(postalCapitals(v));
    }
    const street = uspsLine(a.street1);
    out.street1 = street.line;
    if (!street.parsed) unchecked.push('street1');
    if (a.street2) {
      const unit = /^([A-Za-z]+)\.?\s*#?\s*(\S+)$/.exec(a.street2.trim());
      const word = unit ? UNIT_WORDS[unit[1]!.toUpperCase()] : undefined;
      if (unit && word) out.street2 = `${word} ${unit[2]!.toUpperCase()}`;
    }
    const zip = zipLookup((out.postalCode ?? '').slice(0, 5));
    // An armed-forces address keeps its APO, FPO or DPO: the ZIP data does not tell them apart reliably.
    const military = MILITARY_STATES.has(out.state ?? '') && MILITARY_CITIES.has(out.city ?? '');
    if (zip && !military) {
      const city = zip.city.toUpperCase();
      cityChanged = city !== out.city;
      out.city = city;
    }
  }
  return { address: out, cityChanged, unchecked };
}

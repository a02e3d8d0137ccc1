// The standardised form of an address: every field trimmed with single spaces, the country code and
// the postal code in their canonical spelling, and for the US the USPS Publication 28 form (capitals,
// no punctuation, suffixes, directionals and unit words abbreviated, the ZIP code's city).
import { zipLookup } from './zip.ts';
import { createRequire } from 'node:module';
import type { Address } from '../carriers/types.ts';

const require = createRequire(import.meta.url);
interface ParsedStreet {
  number?: string;
  prefix?: string;
  street?: string;
  type?: string;
  suffix?: string;
  sec_unit_type?: string;
  sec_unit_num?: string;
}
// parse-address: US street lines parsed, with suffixes (Ave, St …) and directionals (NW …) in USPS's abbreviations.
const parser = require('parse-address') as Record<'parseLocation' | 'parseAddress' | 'parseInformalAddress', (text: string) => ParsedStreet | null>;
// parseLocation builds its two dispatch regexes anew on every call (two thirds of its time); these
// are the same patterns compiled once (`corner` and `po_box` of parse-address, flags x and i).
const CORNER = /(?:\band\b|\bat\b|&|@)/i;
const PO_BOX = /^p\W*(?:[om]|ost ?office)\W*b(?:ox)?/i;

/** parse-address's parseLocation, without compiling its dispatch regexes per call. */
export function parseStreet(line: string): ParsedStreet | null {
  if (CORNER.test(line) || PO_BOX.test(line)) return parser.parseLocation(line);
  return parser.parseAddress(line) || parser.parseInformalAddress(line);
}

/** USPS Publication 28, Appendix C2: the secondary unit designators and their abbreviations. */
const UNIT_WORDS: Record<string, string> = {
  APARTMENT: 'APT', BASEMENT: 'BSMT', BUILDING: 'BLDG', DEPARTMENT: 'DEPT', FLOOR: 'FL', FRONT: 'FRNT', HANGAR: 'HNGR',
  KEY: 'KEY', LOBBY: 'LBBY', LOT: 'LOT', LOWER: 'LOWR', OFFICE: 'OFC', PENTHOUSE: 'PH', PIER: 'PIER', REAR: 'REAR',
  ROOM: 'RM', SIDE: 'SIDE', SLIP: 'SLIP', SPACE: 'SPC', STOP: 'STOP', SUITE: 'STE', TRAILER: 'TRLR', UNIT: 'UNIT', UPPER: 'UPPR',
};

function tidy(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const t = text.trim().replace(/\s+/g, ' ');
  return t === '' ? undefined : t;
}

/** Postal codes whose post writes an inward part after a space (GB, CA) or letters after the digits (NL). */
export function canonicalPostal(country: string, code: string): string {
  const compact = code.trim().toUpperCase().replace(/[\s]+/g, '');
  if ((country === 'GB' || country === 'CA') && compact.length > 3) return `${compact.slice(0, -3)} ${compact.slice(-3)}`;
  if (country === 'NL' && /^\d{4}[A-Z]{2}$/.test(compact)) return `${compact.slice(0, 4)} ${compact.slice(4)}`;
  return code.trim().toUpperCase().replace(/\s+/g, ' ');
}

function uspsLine(text: string): { line: string; parsed: boolean } {
  const clean = text.toUpperCase().replace(/[.,#]/g, ' ').replace(/\s+/g, ' ').trim();
  const p = parseStreet(clean);
  if (!p?.number || !p.street) return { line: clean, parsed: false };
  const unitType = p.sec_unit_type ? (UNIT_WORDS[p.sec_unit_type.toUpperCase()] ?? p.sec_unit_type.toUpperCase()) : undefined;
  const parts = [p.number, p.prefix, p.street, p.type, p.suffix, unitType, p.sec_unit_num].filter((x): x is string => Boolean(x));
  return { line: parts.join(' ').toUpperCase(), parsed: true };
}

export interface Standardised {
  address: Address;
  /** The city was replaced by the ZIP code's. */
  cityChanged: boolean;
  /** A US street line could not be parsed, so it is only tidied. */
  unchecked: string[];
}

/** The standardised form of an address that passed the checks. */
export function standardise(a: Address): Standardised {
  const country = a.country.trim().toUpperCase();
  const out: Address = {
    name: tidy(a.name)!,
    ...(tidy(a.company) ? { company: tidy(a.company)! } : {}),
    street1: tidy(a.street1)!,
    ...(tidy(a.street2) ? { street2: tidy(a.street2)! } : {}),
    city: tidy(a.city)!,
    ...(tidy(a.state) ? { state: tidy(a.state)!.toUpperCase() } : {}),
    ...(a.postalCode !== undefined ? { postalCode: canonicalPostal(country, a.postalCode) } : {}),
    country,
    ...(tidy(a.phone) ? { phone: tidy(a.phone)! } : {}),
    ...(tidy(a.email) ? { email: tidy(a.email)! } : {}),
  };
  let cityChanged = false;
  const unchecked: string[] = [];
  if (country === 'US') {
    for (const key of ['name', 'company', 'street1', 'street2', 'city'] as const) {
      const v = out[key];
      if (v !== undefined) out[key] = v.toUpperCase().replace(/[.,]/g, '').replace(/\s+/g, ' ').trim();
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
    if (zip) {
      const city = zip.city.toUpperCase();
      cityChanged = city !== out.city;
      out.city = city;
    }
  }
  return { address: out, cityChanged, unchecked };
}

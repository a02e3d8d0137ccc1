// US ZIP codes (the `zipcodes` package: every ZIP code with its city and state). Its table is large
// (about 70 MB of a process's memory), so it is loaded when first needed: the API loads it as it
// registers its routes, a worker that never checks an address never does.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

interface ZipCodes {
  lookup(zip: string): { city: string; state: string } | undefined;
}

let table: ZipCodes | undefined;

/** The city and state of a five-digit ZIP code, if it exists. */
export function zipLookup(zip: string): { city: string; state: string } | undefined {
  table ??= require('zipcodes') as ZipCodes;
  return table.lookup(zip);
}

/** Loads the table now (the API does, so no request waits for it). */
export function loadZipCodes(): void {
  zipLookup('00000');
}

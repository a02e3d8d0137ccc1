// The checks every address the service takes must pass (docs/addresses.md): an assigned country, a
// postal code in that country's format, a state where the post needs one, a US ZIP code that exists
// and lies in its state, and a Canadian or Australian postal code of its province or state. The data comes from maintained packages (docs/decisions.md).
import { zipLookup } from './zip.ts';
import { regionsOfPostalCode } from './postal-regions.ts';
import { createRequire } from 'node:module';
import { postcodeValidator, postcodeValidatorExistsForCountry } from 'postcode-validator';
import { canonicalPostal, countryName, isCountryCode } from '../countries.ts';
import type { Address } from '../carriers/types.ts';
import { isMilitaryPost, US_MILITARY_STATES } from '../carriers/customs.ts';
import type { FieldProblem } from '../errors.ts';
import { standardise } from './standard.ts';
import { printProblemsIn } from '../render/text.ts';

const require = createRequire(import.meta.url);
// CommonJS data packages: US ZIP codes (zip → city, state) and ISO 3166-2 subdivisions by country.
const regions = require('country-region-data') as Record<string, [string, string, [string, string][]]>;

/** Countries whose post needs the state (ISO 3166-2 code without the country prefix). */
export const STATE_REQUIRED = ['US', 'CA', 'AU'] as const;
/** USPS's codes of the armed forces' post (APO/FPO): not ISO 3166-2 subdivisions, but US states to the post. */

const subdivisions = new Map<string, Set<string>>(
  STATE_REQUIRED.map((country) => [country, new Set([...(regions[country]?.[2] ?? []).map(([, code]) => code), ...(country === 'US' ? US_MILITARY_STATES : [])])]),
);

/** Countries whose post has postal codes but delivers without them: Ireland's Eircodes are optional (An Post). */
const POSTAL_CODE_OPTIONAL = new Set(['IE']);

/** Whether the country's post uses postal codes at all. */
export function hasPostalCodes(country: string): boolean {
  return postcodeValidatorExistsForCountry(country);
}

export type AddressProblemCode = 'country_invalid' | 'postal_code_invalid' | 'postal_code_state_mismatch' | 'state_required' | 'state_invalid' | 'city_invalid' | 'text_unprintable';

const MILITARY_CITIES = new Set(['APO', 'FPO', 'DPO']);

export interface AddressProblem extends FieldProblem {
  code: AddressProblemCode;
}

/** What is wrong with an address, each problem naming its field under `prefix` (`to`, `from`; '' for none). */
/**
 * Whether `postal` (canonical) is a postal code of `country`: the data package's pattern, and two facts
 * it lacks: Girobank's `GIR 0AA` is a British postcode, and Dutch postcodes start at 1000.
 */
function postalCodeOf(postal: string, country: string): boolean {
  if (country === 'GB' && postal === 'GIR 0AA') return true;
  if (country === 'NL' && postal.startsWith('0')) return false;
  return postcodeValidator(postal, country);
}

export function addressProblems(address: Partial<Address>, prefix: string): AddressProblem[] {
  const problems: AddressProblem[] = [];
  const field = (name: string) => (prefix ? `${prefix}.${name}` : name);
  // A shipment's is in capitals already (its schema); an address to check may give it in either case.
  const country = (address.country ?? '').trim().toUpperCase();
  if (!isCountryCode(country)) {
    problems.push({ code: 'country_invalid', field: field('country'), message: `${country} is not an assigned ISO 3166-1 alpha-2 country code` });
    return problems;
  }
  const postal = address.postalCode === undefined ? '' : canonicalPostal(country, address.postalCode);
  if (postal === '') {
    if (hasPostalCodes(country) && !POSTAL_CODE_OPTIONAL.has(country)) problems.push({ code: 'postal_code_invalid', field: field('postalCode'), message: `is required: ${countryName(country)} uses postal codes` });
  } else if (hasPostalCodes(country) && !postalCodeOf(postal, country)) {
    problems.push({ code: 'postal_code_invalid', field: field('postalCode'), message: `${address.postalCode} is not a postal code of ${countryName(country)}` });
  }
  const known = subdivisions.get(country);
  const state = address.state?.trim().toUpperCase() ?? '';
  if (known) {
    if (state === '') problems.push({ code: 'state_required', field: field('state'), message: `is required for ${countryName(country)}` });
    else if (!known.has(state)) problems.push({ code: 'state_invalid', field: field('state'), message: `${address.state} is not a state or territory of ${countryName(country)}` });
  }
  // The armed forces' post addresses its units by APO, FPO or DPO in place of a city.
  if (isMilitaryPost({ country, state }) && !MILITARY_CITIES.has(address.city?.trim().toUpperCase() ?? '')) {
    problems.push({ code: 'city_invalid', field: field('city'), message: `must be APO, FPO or DPO for an armed forces' address (state ${state}), not ${address.city}` });
  }
  if (country === 'US' && postal !== '' && problems.length === 0) {
    const zip = zipLookup(postal.slice(0, 5));
    if (!zip) problems.push({ code: 'postal_code_invalid', field: field('postalCode'), message: `ZIP code ${postal} does not exist` });
    else if (zip.state !== state) problems.push({ code: 'postal_code_state_mismatch', field: field('postalCode'), message: `ZIP code ${postal} is in ${zip.state}, not ${state}` });
  }
  if ((country === 'CA' || country === 'AU') && postal !== '' && problems.length === 0) {
    const regions = regionsOfPostalCode(country, postal);
    if (regions && !regions.includes(state)) {
      problems.push({ code: 'postal_code_state_mismatch', field: field('postalCode'), message: `postal code ${postal} is in ${regions.join(' or ')}, not ${state}` });
    }
  }
  return problems;
}

export interface ValidationMessage {
  type: 'error' | 'warning' | 'info';
  code: AddressProblemCode | 'city_changed' | 'standardized' | 'street_unchecked';
  field: string | null;
  message: string;
}

export interface Validation {
  status: 'verified' | 'warning' | 'error';
  original: Address;
  matched: Address | null;
  messages: ValidationMessage[];
}

/** `POST /v1/addresses/validate` for one address: the checks, then the standardised form. */
export function validateAddress(original: Address): Validation {
  // What a label could not print, as a shipment would refuse it (render/text.ts).
  const unprintable = printProblemsIn(original, '').map((p): AddressProblem => ({ code: 'text_unprintable', ...p }));
  const problems = [...addressProblems(original, ''), ...unprintable];
  if (problems.length) {
    return { status: 'error', original, matched: null, messages: problems.map((p) => ({ type: 'error', code: p.code, field: p.field, message: p.message })) };
  }
  const { address: matched, cityChanged, unchecked } = standardise(original);
  const messages: ValidationMessage[] = [];
  if (cityChanged) messages.push({ type: 'warning', code: 'city_changed', field: 'city', message: `the city of ZIP code ${matched.postalCode} is ${matched.city}` });
  for (const field of unchecked) messages.push({ type: 'warning', code: 'street_unchecked', field, message: 'could not be read as a street address, so it was only tidied' });
  const changed = (Object.keys(matched) as (keyof Address)[]).some((k) => matched[k] !== original[k]) || Object.keys(original).length !== Object.keys(matched).length;
  if (changed && !cityChanged) messages.push({ type: 'info', code: 'standardized', field: null, message: 'spelling standardised' });
  return { status: messages.some((m) => m.type === 'warning') ? 'warning' : 'verified', original, matched, messages };
}

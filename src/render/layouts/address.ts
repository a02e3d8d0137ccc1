// An address as the destination's post reads it (contract §16), for every document that prints one:
// labels, customs documents, manifests, and the dashboard's pages.
import addressFormatter from '@fragaria/address-formatter';
import { canonicalPostal, countryName, isCountryCode } from '../../countries.ts';
import { crossesCustomsBorder, localPlaceOf, placeOf } from '../../carriers/customs.ts';
import type { Address } from '../../carriers/types.ts';
import { cleanText, postalCapitals } from '../text.ts';

/** Where the post reads a state the address template leaves out (see `localityLines`). */
const STATE_KEPT = new Set(['IT', 'IE']);

/** A line's words in capitals (`printedIn`). */
const words = (line: string): string[] => line.toUpperCase().split(/[\s,]+/);

/** Whether a part's words are among a line's, in a row: `TO` is not in `TORINO`, `Co. Clare` is in `CO. CLARE`. */
const printedIn = (line: string, part: string): boolean => {
  const [ws, ps] = [words(line), words(part)];
  return ws.some((_, i) => ps.every((p, k) => ws[i + k] === p));
};

/** Stands in a template for a state that was not sent, so that the separator written before it goes with it. */
const NO_STATE = '\uE000';

/**
 * A template's line without what stands for nothing sent: the country's code where a template prints
 * it (the country has a line of its own, or none at home), the state that was not sent with the
 * separator before it (`Chiyoda-ku, 100-0005`, `Sao Paulo -`), and a separator left at either end.
 */
function withoutUnsent(line: string, country: string): string {
  const parts = line.replace(new RegExp(`[\\s,–-]*${NO_STATE}`, 'g'), '').replace(new RegExp(`(^|,\\s*)${country}$`), '');
  return cleanText(parts).replace(/^[\s,–-]+|[\s,–-]+$/g, '');
}

/** The US and the places whose address templates are the US's (its territories, Micronesia, the Marshall Islands): the USPS form. */
const USPS_ADDRESSED = new Set(['US', 'PR', 'VI', 'GU', 'AS', 'MP', 'UM', 'FM', 'MH']);

/**
 * The locality lines (post town, state, postal code) in the order the destination's post reads them,
 * from a maintained formatter (OpenCage's address templates): `70173 Stuttgart`; for the United
 * Kingdom the post town in capitals and the postcode on the last line; for the US and the places its
 * post serves as states the USPS form, `WASHINGTON DC 20500`, `SAN JUAN PR 00901`, and Canada's and
 * Australia's alike, `OTTAWA ON K1A 0B1`. A state the template leaves out still prints where the post
 * reads it: Italy's province after the town (`00186 Roma RM`), Ireland's county after the town. On mail that
 * crosses a border (`international`) the lines are in capitals, as the UPU's addressing standard asks
 * of the destination's locality. The postal code is printed in its canonical spelling (`SW1A 2AA`
 * for `sw1a2aa`); the country is not among these lines.
 */
export function localityLines(a: Address, international = false): string[] {
  const country = cleanText(a.country).toUpperCase();
  const city = cleanText(a.city);
  const state = cleanText(a.state);
  const postcode = cleanText(a.postalCode ? canonicalPostal(country, a.postalCode) : '');
  let lines: string[];
  try {
    lines = addressFormatter.format({ city, state: state || NO_STATE, ...(postcode ? { postcode } : {}), countryCode: country }, { output: 'array', appendCountry: false });
  } catch {
    lines = [];
  }
  lines = lines
    .map((l) => withoutUnsent(l, country))
    // A territory's template adds its country's line (`United States of America` for Puerto Rico,
    // `La Réunion, France`): a line with none of the parts sent is not the address's.
    .filter((l) => l && [city, postcode, state].some((part) => part && l.includes(part)));
  const capitals = (ls: string[]) => (international ? ls.map(postalCapitals) : ls);
  // A template that loses the town or the postal code (some drop the city beside a state) is not used.
  const joined = lines.join(' ');
  if (lines.length === 0 || [city, postcode].some((part) => part && !joined.includes(part))) return capitals([[city, state, postcode].filter(Boolean).join(' ')]);
  // Canada Post and Australia Post read their line as USPS does its own: capitals, no punctuation
  // (`OTTAWA ON K1A 0B1`, `SYDNEY NSW 2000`).
  if (USPS_ADDRESSED.has(country) || country === 'CA' || country === 'AU') return lines.map((l) => postalCapitals(l).replace(/,/g, ''));
  // The posts that want a state their template leaves out: Italy's province after the town, Ireland's
  // county on a line of its own. Elsewhere (a German Land, a French région) the post does not read it.
  if (state && STATE_KEPT.has(country) && !lines.some((l) => printedIn(l, state))) {
    const town = lines.findIndex((l) => l.includes(city));
    if (country === 'IT') lines[town] = `${lines[town]} ${state}`;
    else lines.splice(town + 1, 0, state);
  }
  // Royal Mail: the post town in capitals, the postcode last (a county, if sent, before it).
  if (country === 'GB') return capitals([...lines.filter((l) => l !== postcode).map((l) => (l === city ? postalCapitals(l) : l)), ...(postcode ? [postcode] : [])]);
  return capitals(lines);
}

/**
 * Whether a parcel from `from` to `to` crosses a border, so that it is addressed as international
 * mail (the locality in capitals, the country lines): between two places (countries, and the places
 * inside a country's code told apart by postal code, `localPlaceOf`), and wherever the customs rules
 * draw a border (`crossesCustomsBorder`: Berlin to Büsingen, Madrid to the Canary Islands, London to
 * Jersey), except where the US's mail is domestic. For USPS that is the US and every place it serves
 * as its own (`US` to `PR` or `GU` is addressed `SAN JUAN PR 00901`, no country line); for the other
 * carriers only where no customs border lies between (Puerto Rico), since they carry to the other
 * territories, Micronesia and the Marshall Islands as abroad.
 */
export function crossesPostalBorder(from: Pick<Address, 'country' | 'state' | 'postalCode'>, to: Pick<Address, 'country' | 'state' | 'postalCode'>, carrier: string): boolean {
  const a = localPlaceOf(from);
  const b = localPlaceOf(to);
  if (!USPS_ADDRESSED.has(a) || !USPS_ADDRESSED.has(b)) return a !== b || crossesCustomsBorder(from, to);
  return carrier !== 'USPS' && crossesCustomsBorder(from, to);
}

/**
 * An address's country line: the English name in capitals of the place it is in, so a US address in
 * Guam prints `GUAM`, as one written with country `GU` does, and a place told apart by its postal code
 * that has an ISO 3166-1 code of its own prints that place's name (`GB` `JE2 3AB` is `JERSEY`, `FR`
 * `97400` `RÉUNION`); one without (Büsingen, the Canary Islands) its country's.
 */
export function countryLine(a: Pick<Address, 'country' | 'state' | 'postalCode'>): string {
  const address = { country: cleanText(a.country), state: a.state, postalCode: a.postalCode };
  const place = localPlaceOf(address);
  return countryName(isCountryCode(place) ? place : placeOf(address));
}

/** What a line of an address is, so that a document can size it (a label prints the locality larger). */
export type PartRole = 'name' | 'company' | 'street' | 'street2' | 'locality' | 'country';

export interface AddressPart {
  role: PartRole;
  text: string;
}

/** Chinese, Japanese and Korean script: Han, kana, Hangul. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** The posts that read an address written in their own script from the largest place down to the addressee. */
const LARGEST_FIRST = new Set(['JP', 'CN', 'TW', 'KR']);

/**
 * An address in the order its post reads it, line by line, with the country line last when the
 * document crosses a border (`showCountry`). Mostly name, company, street lines, locality lines
 * (`localityLines`). An address in Japan, China, Taiwan or Korea written in its own script (its
 * street, town or state in Chinese characters, kana or Hangul) is read the other way, as those
 * posts (and OpenCage's templates for China, Taiwan and Korea) have it: the postal code (Japan
 * marks it 〒), the state and town, the street, then company and name; in Korea the postal code
 * last, and words apart. The country line stays in English at the bottom, for the posts on the way.
 */
export function addressParts(a: Address, showCountry: boolean): AddressPart[] {
  const place = placeOf({ country: cleanText(a.country), state: a.state });
  const native = LARGEST_FIRST.has(place) && [a.street1, a.city, a.state ?? ''].some((part) => CJK.test(part));
  const people: AddressPart[] = [
    { role: 'name', text: a.name },
    { role: 'company', text: a.company ?? '' },
  ];
  let parts: AddressPart[];
  if (native) {
    const postcode = cleanText(a.postalCode ? canonicalPostal(place, a.postalCode) : '');
    const korean = place === 'KR';
    const [state, city] = [cleanText(a.state), cleanText(a.city)];
    // A city that is its own province (北京市 in 北京市) is printed once; words of Latin letters, or in Korea, apart.
    const places = state && city.startsWith(state) ? [city] : [state, city].filter(Boolean);
    const town: AddressPart = { role: 'locality', text: places.join(korean || places.some((p) => !CJK.test(p)) ? ' ' : '') };
    const code: AddressPart = { role: 'locality', text: postcode && place === 'JP' ? `〒${postcode}` : postcode };
    const streets: AddressPart[] = [
      { role: 'street', text: a.street1 },
      { role: 'street2', text: a.street2 ?? '' },
    ];
    parts = korean ? [town, ...streets, ...people.toReversed(), code] : [code, town, ...streets, ...people.toReversed()];
  } else {
    parts = [...people, { role: 'street', text: a.street1 }, { role: 'street2', text: a.street2 ?? '' }, ...localityLines(a, showCountry).map((text): AddressPart => ({ role: 'locality', text }))];
  }
  if (showCountry) parts.push({ role: 'country', text: countryLine(a) });
  return parts.map((p) => ({ role: p.role, text: cleanText(p.text) })).filter((p) => p.text);
}

/** The postal lines of an address, in the order its post reads them (`addressParts`). */
export function postalLines(a: Address, showCountry: boolean): string[] {
  return addressParts(a, showCountry).map((p) => p.text);
}

// Customs (contract §12): the customs territories, the customs object of a shipment, and the UPU
// CN22/CN23 choice. A shared layer, beside Address and Parcel: shipments check it, labels and the
// renderer print it.
import currencyCodes from 'currency-codes';
import type { CarrierService } from './services.ts';
import type { Address, Parcel } from './types.ts';

export const CONTENTS_TYPES = ['merchandise', 'gift', 'documents', 'sample', 'returned_goods', 'other'] as const;
export type ContentsType = (typeof CONTENTS_TYPES)[number];

export interface CustomsItem {
  description: string;
  quantity: number;
  /** The whole line's net weight (all of its quantity). */
  netWeight: { value: number; unit: Parcel['weight']['unit'] };
  /** The whole line's value. */
  value: { amount: number; currency: string };
  hsCode: string;
  originCountry: string;
}

export interface Customs {
  contentsType: ContentsType;
  contentsExplanation?: string;
  items: CustomsItem[];
  incoterm?: 'DAP' | 'DDP';
  nonDelivery?: 'return' | 'abandon';
  invoiceNumber?: string;
  licenceNumber?: string;
  certificateNumber?: string;
  importerVat?: string;
  eori?: string;
  /** The seller's EU Import One-Stop Shop number. */
  ioss?: string;
  /** A US export's EEI citation: `AES X…` (an ITN) or `NOEEI …` (an exemption). */
  eelPfc?: string;
  signer: string;
}

/** The 27 member states of the European Union: one customs union. */
const EU = ['AT', 'BE', 'BG', 'HR', 'CY', 'CZ', 'DK', 'EE', 'FI', 'FR', 'DE', 'GR', 'HU', 'IE', 'IT', 'LV', 'LT', 'LU', 'MT', 'NL', 'PL', 'PT', 'RO', 'SK', 'SI', 'ES', 'SE'];

/**
 * Territories with a code of their own that belong to another's customs territory: Monaco is in the
 * EU's (through France), Puerto Rico in the United States', Liechtenstein in Switzerland's, the Isle
 * of Man in the United Kingdom's. Everything else, including the French overseas departments (GF, GP,
 * MQ, RE, YT: outside the EU's VAT area, so posts want a declaration), Åland (AX, the same), Greenland
 * and the Faroe Islands (outside the EU), the Channel Islands and the US territories other than Puerto
 * Rico, is a territory of its own (docs/customs.md).
 */
const PART_OF: Record<string, string> = { MC: 'EU', PR: 'US', LI: 'CH', IM: 'GB', BUESINGEN: 'CH', ...Object.fromEntries(EU.map((c) => [c, 'EU'])) };

/** The customs territory of a country code. */
export function customsTerritory(country: string): string {
  const c = country.trim().toUpperCase();
  return PART_OF[c] ?? c;
}

/**
 * The places with an ISO 3166-1 code of their own that a US address may name as its state, as USPS
 * addresses them (`HAGATNA GU 96910`): the territories and the freely associated states.
 */
const US_STATE_PLACES = new Set(['PR', 'VI', 'GU', 'AS', 'MP', 'FM', 'MH', 'PW']);

/**
 * The country code of the place an address is in: its `country`, except that a US address whose
 * state is one of those places is in that place, so `US` with state `GU` is Guam, however written.
 */
export function placeOf(address: Pick<Address, 'country' | 'state'>): string {
  const country = address.country.trim().toUpperCase();
  const state = address.state?.trim().toUpperCase();
  return country === 'US' && state !== undefined && US_STATE_PLACES.has(state) ? state : country;
}

/**
 * Places inside a country's code that are outside its customs territory or VAT area (so posts want a
 * declaration for goods), told apart by their postal codes: `place` is their own code where ISO 3166-1
 * has one (AX, JE, GG, the French overseas codes), or a name of this service's, whose customs territory
 * PART_OF gives where it is another country's (Büsingen, a German town, is in the Swiss one: a parcel
 * from there to Zürich goes between countries, with no declaration). Northern Ireland is below
 * (`crossesCustomsBorder`).
 */
const POSTAL_PLACES: { country: string; postalCode: RegExp; place: string; name: string }[] = [
  { country: 'ES', postalCode: /^3[58]/, place: 'IC', name: 'the Canary Islands' },
  { country: 'ES', postalCode: /^51/, place: 'EA', name: 'Ceuta' },
  { country: 'ES', postalCode: /^52/, place: 'EA', name: 'Melilla' },
  { country: 'DE', postalCode: /^27498$/, place: 'HELIGOLAND', name: 'Heligoland' },
  { country: 'DE', postalCode: /^78266$/, place: 'BUESINGEN', name: 'Büsingen am Hochrhein (in the Swiss customs territory)' },
  { country: 'IT', postalCode: /^23041$/, place: 'LIVIGNO', name: 'Livigno' },
  { country: 'IT', postalCode: /^22061$/, place: 'CAMPIONE', name: "Campione d'Italia" },
  { country: 'GR', postalCode: /^6308[67]$/, place: 'ATHOS', name: 'Mount Athos' },
  { country: 'FI', postalCode: /^22\d{3}$/, place: 'AX', name: 'Åland' },
  { country: 'GB', postalCode: /^JE/, place: 'JE', name: 'Jersey' },
  { country: 'GB', postalCode: /^GY/, place: 'GG', name: 'Guernsey' },
  ...(
    [
      ['971', 'GP'], ['972', 'MQ'], ['973', 'GF'], ['974', 'RE'], ['975', 'PM'], ['976', 'YT'], ['977', 'BL'], ['978', 'MF'],
      ['986', 'WF'], ['987', 'PF'], ['988', 'NC'],
    ] as const
  ).map(([prefix, place]) => ({ country: 'FR', postalCode: new RegExp(`^${prefix}`), place, name: place })),
];

/**
 * The US armed forces' post (APO, FPO, DPO) as a US address's state: the states of addresses only
 * the US mail delivers to, and whose goods need a declaration (USPS DMM 703.2).
 */
export const US_MILITARY_STATES: readonly string[] = ['AA', 'AE', 'AP'];
/** Their customs territory, which no country code names. */
const MILITARY = 'US-MILITARY';

/** Whether the address is an APO, FPO or DPO one. */
export function isMilitaryPost(address: Pick<Address, 'country' | 'state'>): boolean {
  return address.country.trim().toUpperCase() === 'US' && US_MILITARY_STATES.includes(address.state?.trim().toUpperCase() ?? '');
}

/** Where USPS takes mail in: the United States and the places its domestic mail serves. */
export function inUspsNetwork(address: Pick<Address, 'country' | 'state'>): boolean {
  const place = placeOf(address);
  return place === 'US' || US_STATE_PLACES.has(place);
}

type CustomsAddress = Pick<Address, 'country' | 'state' | 'postalCode'>;

/** The postal-code place an address is in, if any (`POSTAL_PLACES`). */
function postalPlace(address: CustomsAddress): (typeof POSTAL_PLACES)[number] | undefined {
  const country = address.country.trim().toUpperCase();
  const postal = (address.postalCode ?? '').replace(/[\s-]/g, '').toUpperCase();
  if (!postal) return undefined;
  return POSTAL_PLACES.find((p) => p.country === country && p.postalCode.test(postal));
}

/** The place an address is in, a place inside its country's code told apart by postal code included (`IC` for Las Palmas, ES 35002). */
export function localPlaceOf(address: CustomsAddress): string {
  return postalPlace(address)?.place ?? placeOf(address);
}

/** The customs territory an address is in: its place's, told apart by state and postal code where they say more than its country. */
export function customsTerritoryOf(address: CustomsAddress): string {
  if (isMilitaryPost(address)) return MILITARY;
  return customsTerritory(localPlaceOf(address));
}

/** The place of an address as a message names it: its code, or the place inside it (`ES (the Canary Islands)`). */
export function customsPlaceName(address: CustomsAddress): string {
  if (isMilitaryPost(address)) return 'US (APO/FPO/DPO, the armed forces\' post)';
  const place = placeOf(address);
  const inside = postalPlace(address);
  return inside ? `${place} (${inside.name})` : place;
}

/** Northern Ireland (BT postcodes): in the UK's customs territory, and under the EU's rules for goods (the Windsor Framework). */
function isNorthernIreland(address: CustomsAddress): boolean {
  return address.country.trim().toUpperCase() === 'GB' && /^BT\d/i.test((address.postalCode ?? '').trim());
}

/**
 * Whether a parcel from one address to another crosses a customs border (and needs `customs`). Goods
 * between Northern Ireland and Great Britain or the EU need no declaration; the rest follows the
 * territories.
 */
export function crossesCustomsBorder(from: CustomsAddress, to: CustomsAddress): boolean {
  const a = customsTerritoryOf(from);
  const b = customsTerritoryOf(to);
  if (a === b) return false;
  if (isNorthernIreland(from) || isNorthernIreland(to)) return !(['GB', 'EU'].includes(a) && ['GB', 'EU'].includes(b));
  return true;
}

/** A code ISO 4217 added after the currency-codes package's list (2024-06-25): the Caribbean guilder (2025), which ICU carries. */
const ADDED_AFTER_LIST = ['XCG'];
/** A currency of ISO's list that Node's ICU does not carry: Venezuela's digital bolívar (VED). */
const MISSING_FROM_ICU = ['VED'];

/**
 * ISO 4217 currency codes: those of the ICU data Node carries that ISO's list one (the currency-codes
 * package) still has, so not the kuna (HRK), the old leone (SLL) or the Zimbabwe dollar (ZWL), which
 * ISO has withdrawn and ICU still lists; with the two above. ICU leaves out ISO's funds, metals and
 * test codes (BOV, XAU, XTS), and keeps the SDR (XDR), in which the UPU counts.
 */
const CURRENCIES = new Set([...Intl.supportedValuesOf('currency').filter((code) => currencyCodes.code(code) !== undefined || ADDED_AFTER_LIST.includes(code)), ...MISSING_FROM_ICU]);

export function isCurrencyCode(code: string): boolean {
  return CURRENCIES.has(code);
}

const MINOR_DIGITS = new Map<string, number>();

/**
 * How many decimals an amount in the currency `code` has (USD 2, JPY 0, KWD 3, HUF 2): its minor unit
 * in ISO 4217 (the currency-codes package); for the X codes, where ISO has none for some (XDR, XAU),
 * ICU's. A code that is no currency counts 2.
 */
export function currencyDigits(code: string): number {
  if (!isCurrencyCode(code)) return 2;
  let digits = MINOR_DIGITS.get(code);
  if (digits === undefined) {
    const iso = code.startsWith('X') ? undefined : currencyCodes.code(code)?.digits;
    digits = iso ?? new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
    MINOR_DIGITS.set(code, digits);
  }
  return digits;
}

/** Whether `amount` is a whole number of the currency's minor units (19.99 USD is, 0.001 USD and 0.5 JPY are not): written with that many decimals, it is the same number. */
export function inMinorUnits(amount: number, code: string): boolean {
  return Number(amount.toFixed(currencyDigits(code))) === amount;
}

/** The UPU's limit for a CN22: contents worth at most 300 SDR. */
export const CN22_LIMIT_SDR = 300;

/** Default SDR per unit of each currency (CUSTOMS_SDR_RATES overrides; docs/customs.md). */
export const DEFAULT_SDR_RATES: Readonly<Record<string, number>> = {
  USD: 0.74, EUR: 0.85, GBP: 0.99, CHF: 0.92, CAD: 0.53, AUD: 0.48, NZD: 0.43, JPY: 0.0049, CNY: 0.1,
  HKD: 0.095, SGD: 0.57, SEK: 0.078, NOK: 0.072, DKK: 0.114, PLN: 0.2, CZK: 0.034, MXN: 0.04, BRL: 0.13, INR: 0.0088,
};

/** The items' total value in their (one) currency. */
export function totalValue(customs: Customs): { amount: number; currency: string } {
  const currency = customs.items[0]!.value.currency;
  const amount = customs.items.reduce((sum, i) => sum + i.value.amount, 0);
  // Rounded to the currency's minor unit, which every item's amount is a whole number of.
  const unit = 10 ** currencyDigits(currency);
  return { amount: Math.round(amount * unit) / unit, currency };
}

/**
 * CN22 when the items are worth at most 300 SDR at the configured rates, CN23 above it; also CN23
 * when the currency has no rate (the form that always suffices). A service whose carrier sets its own
 * limit (`cn22BelowUsd`: USPS's international services, IMM 123.61) takes a CN22 only below it.
 */
export function customsForm(customs: Customs, sdrRates: Readonly<Record<string, number>>, service?: Pick<CarrierService, 'cn22BelowUsd'>): 'CN22' | 'CN23' {
  const { amount, currency } = totalValue(customs);
  // XDR is the SDR itself.
  const rate = currency === 'XDR' ? 1 : sdrRates[currency];
  if (rate === undefined) return 'CN23';
  const sdr = amount * rate;
  if (service?.cn22BelowUsd !== undefined) {
    const usd = sdrRates.USD;
    return usd !== undefined && sdr / usd < service.cn22BelowUsd - 1e-9 ? 'CN22' : 'CN23';
  }
  return sdr <= CN22_LIMIT_SDR + 1e-9 ? 'CN22' : 'CN23';
}

/** Above this value of one Schedule B number, goods leaving the United States need EEI filed in AES (15 CFR 30.37(a)). */
export const EEI_THRESHOLD_USD = 2500;

/**
 * Whether goods from `from` to `to` leave the United States' customs territory (the states, DC and
 * Puerto Rico) for another: an export, whose Electronic Export Information 15 CFR 30 governs. Mail to
 * the armed forces' post is not one.
 */
export function isUsExport(from: CustomsAddress, to: CustomsAddress): boolean {
  return customsTerritoryOf(from) === 'US' && crossesCustomsBorder(from, to) && !isMilitaryPost(to);
}

/**
 * What a US export's documents print as its EEI: the citation given, else the exemption known to
 * apply (to Canada 30.36; a declaration in USD with no HS code above EEI_THRESHOLD_USD 30.37(a)),
 * else nothing (a shipment taken before the rule, or in another currency, is not said to be exempt).
 */
export function eeiCitation(customs: Customs, from: CustomsAddress, to: CustomsAddress): string | undefined {
  if (!isUsExport(from, to)) return undefined;
  if (customs.eelPfc) return customs.eelPfc;
  if (customsTerritoryOf(to) === 'CA') return 'NOEEI 30.36';
  return customs.items[0]!.value.currency === 'USD' && linesNeedingEei(customs).length === 0 ? 'NOEEI 30.37(a)' : undefined;
}

/**
 * The HS codes whose lines together are worth more than EEI_THRESHOLD_USD, with their value, in a
 * declaration in US dollars (lines of one code add up, as a Schedule B number's do). Another
 * currency is not converted: its exporter knows the dollar value the filing is made in.
 */
export function linesNeedingEei(customs: Customs): { hsCode: string; amount: number }[] {
  if (customs.items[0]!.value.currency !== 'USD') return [];
  const byCode = new Map<string, number>();
  for (const item of customs.items) byCode.set(item.hsCode, (byCode.get(item.hsCode) ?? 0) + item.value.amount);
  return [...byCode].filter(([, amount]) => amount > EEI_THRESHOLD_USD + 1e-9).map(([hsCode, amount]) => ({ hsCode, amount: Math.round(amount * 100) / 100 }));
}

/** Whether a commercial invoice goes with the parcel: goods that change hands or come back. */
export function needsCommercialInvoice(customs: Customs): boolean {
  return customs.contentsType === 'merchandise' || customs.contentsType === 'sample' || customs.contentsType === 'returned_goods';
}

/** How much two weights that add up to the same may differ by floating-point arithmetic alone (a relative share). */
export const WEIGHT_SLACK = 1e-9;

const GRAMS = { g: 1, kg: 1000, oz: 28.349523125, lb: 453.59237 } as const;

export function grams(w: { value: number; unit: keyof typeof GRAMS }): number {
  return w.value * GRAMS[w.unit];
}

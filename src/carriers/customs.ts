// Customs (contract §12): the customs territories, the customs object of a shipment, and the UPU
// CN22/CN23 choice. A shared layer, beside Address and Parcel: shipments check it, labels and the
// renderer print it.
import currencyCodes from 'currency-codes';
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
  signer: string;
}

/** The 27 member states of the European Union: one customs union. */
const EU = ['AT', 'BE', 'BG', 'HR', 'CY', 'CZ', 'DK', 'EE', 'FI', 'FR', 'DE', 'GR', 'HU', 'IE', 'IT', 'LV', 'LT', 'LU', 'MT', 'NL', 'PL', 'PT', 'RO', 'SK', 'SI', 'ES', 'SE'];

/**
 * Territories with a code of their own that belong to another's customs territory: Monaco is in the
 * EU's (through France), Puerto Rico in the United States'. Everything else, including the French
 * overseas departments (GF, GP, MQ, RE, YT: outside the EU's VAT area, so posts want a declaration),
 * Greenland and the Faroe Islands (outside the EU) and the US territories other than Puerto Rico, is
 * a territory of its own (docs/customs.md).
 */
const PART_OF: Record<string, string> = { MC: 'EU', PR: 'US', ...Object.fromEntries(EU.map((c) => [c, 'EU'])) };

/** The customs territory of a country code. */
export function customsTerritory(country: string): string {
  const c = country.trim().toUpperCase();
  return PART_OF[c] ?? c;
}

/**
 * The places with an ISO 3166-1 code of their own that a US address may name as its state, as USPS
 * addresses them (`HAGATNA GU 96910`): the territories and the freely associated states.
 */
const US_STATE_PLACES = new Set(['PR', 'VI', 'GU', 'AS', 'MP', 'UM', 'FM', 'MH', 'PW']);

/**
 * The country code of the place an address is in: its `country`, except that a US address whose
 * state is one of those places is in that place, so `US` with state `GU` is Guam, however written.
 */
export function placeOf(address: Pick<Address, 'country' | 'state'>): string {
  const country = address.country.trim().toUpperCase();
  const state = address.state?.trim().toUpperCase();
  return country === 'US' && state !== undefined && US_STATE_PLACES.has(state) ? state : country;
}

/** Whether a parcel from one place to another crosses a customs border (and needs `customs`). */
export function crossesCustomsBorder(from: Pick<Address, 'country' | 'state'>, to: Pick<Address, 'country' | 'state'>): boolean {
  return customsTerritory(placeOf(from)) !== customsTerritory(placeOf(to));
}

/** ISO 4217 currency codes, from the ICU data Node carries. */
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));

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
 * when the currency has no rate (the form that always suffices).
 */
export function customsForm(customs: Customs, sdrRates: Readonly<Record<string, number>>): 'CN22' | 'CN23' {
  const { amount, currency } = totalValue(customs);
  // XDR is the SDR itself.
  const rate = currency === 'XDR' ? 1 : sdrRates[currency];
  if (rate === undefined) return 'CN23';
  return amount * rate <= CN22_LIMIT_SDR + 1e-9 ? 'CN22' : 'CN23';
}

/** Whether a commercial invoice goes with the parcel: goods that change hands or come back. */
export function needsCommercialInvoice(customs: Customs): boolean {
  return customs.contentsType === 'merchandise' || customs.contentsType === 'sample' || customs.contentsType === 'returned_goods';
}

const GRAMS = { g: 1, kg: 1000, oz: 28.349523125, lb: 453.59237 } as const;

export function grams(w: { value: number; unit: keyof typeof GRAMS }): number {
  return w.value * GRAMS[w.unit];
}

// What each carrier prints: tracking number groups, routing code, and the messages in the barcodes.
import { findService, formatTrackingNumber, isValidTrackingNumber } from '../carriers/index.ts';
import { placeOf } from '../carriers/customs.ts';
import { countryNumeric } from '../countries.ts';
import { asciiText } from './text.ts';
import type { LabelData } from './label.ts';

const GS = '\x1d';
const RS = '\x1e';
const EOT = '\x04';

/**
 * The tracking number as printed, in the carrier's groups (src/carriers); a number that is not valid
 * for the carrier (only drawings made outside the service have one) in groups of four.
 */
export function groupTrackingNumber(carrier: LabelData['carrier'], trackingNumber: string): string {
  const t = trackingNumber.replace(/\s+/g, '');
  if (isValidTrackingNumber(carrier, t)) return formatTrackingNumber(carrier, t);
  return t.replace(/(.{4})(?=.)/g, '$1 ');
}

/** Postal code in capitals without spaces or punctuation. */
export function normalPostalCode(postalCode: string): string {
  return asciiText(postalCode).toUpperCase().replace(/[^A-Z0-9]/g, '');
}

/** Whether the destination is a US ZIP code (5 or 9 digits). */
export function isUsZip(data: LabelData): boolean {
  return placeOf(data.to) === 'US' && /^\d{5}(\d{4})?$/.test(normalPostalCode(data.to.postalCode ?? ""));
}

function hash32(s: string): number {
  let h = 0x811c9dc5; // FNV-1a
  for (const b of Buffer.from(s, 'utf8')) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * The routing code printed large on the label, UPS style `NY 100 9-01`: destination state (or
 * country outside the US), the first three characters of the postal code, then a sort digit and a
 * two-digit sort group derived from carrier, country and postal code. Deterministic, no lookups.
 */
export function routingCodeFor(data: LabelData): string {
  const country = placeOf(data.to);
  const postal = normalPostalCode(data.to.postalCode ?? "");
  const region = country === 'US' && data.to.state ? asciiText(data.to.state).toUpperCase().replace(/[^A-Z]/g, '').slice(0, 2) || country : country;
  const h = hash32(`${data.carrier}|${country}|${postal}`);
  const sort = (h % 9) + 1;
  const group = String(Math.floor(h / 9) % 100).padStart(2, '0');
  return `${region} ${(postal.slice(0, 3) || '000').padEnd(3, '0')} ${sort}-${group}`;
}

/** The service class printed in the MaxiCode: for UPS its service code in three digits (ground 003, worldwide saver 065). */
export function serviceClass(data: LabelData): string {
  if (data.carrier === 'UPS') return (findService('UPS', data.serviceCode)?.carrierCode ?? '03').padStart(3, '0');
  return String(hash32(data.serviceCode) % 1000).padStart(3, '0');
}

/** Day of the year (001–366) of the ship date, as UPS encodes the pickup date. */
export function julianDay(shipDate: string): string {
  const d = new Date(/^\d{4}-\d{2}-\d{2}/.test(shipDate) ? `${shipDate.slice(0, 10)}T00:00:00Z` : shipDate);
  if (Number.isNaN(d.getTime())) return '001';
  const start = Date.UTC(d.getUTCFullYear(), 0, 1);
  return String(Math.floor((d.getTime() - start) / 86_400_000) + 1).padStart(3, '0');
}

/** The ship date as printed: YYYY-MM-DD, in UTC. */
export function printedDate(shipDate: string): string {
  if (/^\d{4}-\d{2}-\d{2}/.test(shipDate)) return shipDate.slice(0, 10);
  const d = new Date(shipDate);
  return Number.isNaN(d.getTime()) ? asciiText(shipDate).slice(0, 10) : d.toISOString().slice(0, 10);
}

export function weightInPounds(w: LabelData['parcel']['weight']): number {
  const factor = { g: 1 / 453.59237, kg: 1 / 0.45359237, oz: 1 / 16, lb: 1 }[w.unit] ?? 1;
  return w.value * factor;
}

/** A shipper account number (six characters) derived from the sender, for the carrier messages. */
export function shipperAccount(data: LabelData): string {
  const alphabet = '0123456789ABCDEFGHJKLMNPRSTUVWXY';
  let h = hash32(`${data.carrier}|${data.from.name}|${data.from.postalCode}|${data.from.country}`);
  let s = '';
  for (let i = 0; i < 6; i++) {
    s += alphabet[h % 32];
    h = Math.floor(h / 32) + (i + 1) * 7919;
  }
  return s;
}

function field(s: string | undefined, max: number): string {
  return asciiText(s ?? '').toUpperCase().replace(/[\x1d\x1e\x04]/g, '').slice(0, max);
}

/**
 * The UPS MaxiCode message (ANSI MH10.8.3 format 01, version 96): postal code, ISO numeric country
 * code and service class first (they become the primary message), then tracking number, SCAC,
 * shipper account, pickup day, shipment id, package n/x, weight, address validation, street, city,
 * state. Mode 2 for US ZIP codes (9 digits, ZIP+4 or ZIP + 0000), mode 3 for alphanumeric codes.
 * `addressChars` limits the address fields so the message fits the symbol.
 */
export function maxiCodeMessage(data: LabelData, addressChars = 40): { mode: 2 | 3; message: string; postal: string } {
  const zip = isUsZip(data);
  const postalRaw = normalPostalCode(data.to.postalCode ?? "");
  const postal = zip ? postalRaw.padEnd(9, '0') : (postalRaw || '0').slice(0, 6);
  const weight = String(Math.max(1, Math.ceil(weightInPounds(data.parcel.weight))));
  const street = field(data.to.street1, addressChars);
  const city = field(data.to.city, Math.max(0, addressChars - street.length));
  const parts = [
    postal,
    countryNumeric(placeOf(data.to)),
    serviceClass(data),
    field(data.trackingNumber, 20),
    'UPSN',
    shipperAccount(data),
    julianDay(data.shipDate),
    '',
    '1/1',
    weight,
    'N',
    street,
    city,
    field(data.to.state, 2),
  ];
  return { mode: zip ? 2 : 3, message: `[)>${RS}01${GS}96${parts.join(GS)}${RS}${EOT}`, postal };
}

/** The FedEx PDF417 message, in the same MH10.8.3 shape as the UPS one (format 01, version 02). */
export function fedexPdf417Message(data: LabelData): string {
  const parts = [
    normalPostalCode(data.to.postalCode ?? ""),
    countryNumeric(placeOf(data.to)),
    serviceClass(data),
    field(data.trackingNumber, 20),
    'FDEG',
    shipperAccount(data),
    julianDay(data.shipDate),
    field(data.reference, 30),
    '1/1',
    `${Math.max(1, Math.ceil(weightInPounds(data.parcel.weight)))}LB`,
    'N',
    field(data.to.street1, 35),
    field(data.to.city, 30),
    field(data.to.state, 2),
    field(data.to.name, 35),
  ];
  return `[)>${RS}01${GS}02${parts.join(GS)}${RS}${EOT}`;
}

/** The DHL DataMatrix message (MH10.8.3 format 06 with data identifiers): J waybill, 2L routing, … */
export function dhlDataMatrixMessage(data: LabelData): string {
  const parts = [
    `J${field(data.trackingNumber, 20)}`,
    `2L${placeOf(data.to)}${normalPostalCode(data.to.postalCode ?? "").slice(0, 12)}`,
    `9D${julianDay(data.shipDate)}`,
    `7Q${Math.max(0.1, Math.round(weightInPounds(data.parcel.weight) * 0.45359237 * 10) / 10)}KG`,
    `1V${field(data.serviceCode, 20)}`,
  ];
  return `[)>${RS}06${GS}${parts.join(GS)}${RS}${EOT}`;
}

/**
 * The USPS IMpb barcode as USPS prints it: one GS1-128 with AI 420 and the destination ZIP (AI 421
 * with the ISO numeric country outside the US), FNC1, then the 22-digit IMpb, whose first two
 * digits (92–95) are read as a GS1 internal application identifier.
 */
export function uspsImpbElementString(data: LabelData): string {
  const postal = normalPostalCode(data.to.postalCode ?? "");
  const dest = isUsZip(data) ? `(420)${postal.slice(0, 5)}` : `(421)${countryNumeric(placeOf(data.to))}${postal.slice(0, 9)}`;
  const t = data.trackingNumber.replace(/\D/g, '');
  return `${dest}(${t.slice(0, 2)})${t.slice(2)}`;
}

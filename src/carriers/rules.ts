// What each carrier file provides; index.ts picks the right one per carrier.
import type { CarrierService } from './services.ts';
import type { CarrierStatusCode, TrackingStatus } from './status.ts';

export interface CarrierRules {
  /** The largest serial the carrier's number format holds; serials run from 1 to this. */
  maxSerial: bigint;
  /**
   * For a service numbered in another format: the name of the counter its serials come from (beside
   * the carrier's own) and the largest serial that format holds.
   */
  serialsOf?(service: CarrierService): { counter: string; maxSerial: bigint } | undefined;
  /** The tracking number for a serial already checked to be in 1..maxSerial. */
  trackingNumberFor(serial: bigint, service: CarrierService): string;
  /** Shape and check digit of the canonical form (no spaces, upper case). */
  isValid(trackingNumber: string): boolean;
  /** Human-readable groups of a valid tracking number, as printed on the label. */
  format(trackingNumber: string): string;
  /** The carrier's public tracking page; the number is URL-encoded. */
  url(trackingNumber: string): string;
  /** The code reported for each of our statuses. */
  statusCodes: Readonly<Record<TrackingStatus, CarrierStatusCode>>;
}

/** The serial as a zero-padded decimal string of `width` digits. */
export function serialDigits(serial: bigint, width: number): string {
  return serial.toString().padStart(width, '0');
}

/** Splits a string into consecutive groups of the given lengths, joined by spaces. */
export function groups(text: string, lengths: readonly number[]): string {
  const parts: string[] = [];
  let at = 0;
  for (const length of lengths) {
    parts.push(text.slice(at, at + length));
    at += length;
  }
  return parts.join(' ');
}

/** A URL query value: lone surrogates replaced first, since encodeURIComponent throws on them. */
export function queryValue(text: string): string {
  return encodeURIComponent(text.toWellFormed());
}

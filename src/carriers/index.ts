// Carriers: tracking numbers with their check digits, public tracking pages, status codes and
// delivery estimates. Pure functions; the serial behind a tracking number comes from the caller.
import type { CarrierRules } from './rules.ts';
import type { Carrier, CarrierService } from './services.ts';
import type { CarrierStatusCode, TrackingStatus } from './status.ts';
import { dhl } from './dhl.ts';
import { fedex } from './fedex.ts';
import { findService } from './services.ts';
import { ups } from './ups.ts';
import { usps } from './usps.ts';

export { CARRIERS, SERVICES, findService } from './services.ts';
export type { Carrier, CarrierService } from './services.ts';
export { TRACKING_STATUSES } from './status.ts';
export type { CarrierStatusCode, TrackingStatus } from './status.ts';
export { addBusinessDays, estimateDelivery, DELIVERY_HOUR_UTC } from './delivery.ts';
export { UPS_SHIPPER_ACCOUNT } from './ups.ts';
export { USPS_MAILER_ID } from './usps.ts';

const RULES: Readonly<Record<Carrier, CarrierRules>> = {
  UPS: ups,
  USPS: usps,
  FedEx: fedex,
  DHL: dhl,
};

function rulesFor(carrier: Carrier): CarrierRules {
  if (!Object.hasOwn(RULES, carrier)) throw new RangeError(`unknown carrier "${carrier}"`);
  return RULES[carrier];
}

/**
 * Where a label's serial comes from: the name of its counter (one per carrier, `tracking:USPS`, and
 * one per other number format a carrier's service uses, `tracking:USPS:S10`) and the largest serial
 * `trackingNumberFor` takes for the service (serials start at 1). RangeError for an unknown service.
 */
export function trackingSerials(carrier: Carrier, serviceCode: string): { counter: string; maxSerial: bigint } {
  return serialsOf(carrier, serviceOf(carrier, serviceCode));
}

function serviceOf(carrier: Carrier, serviceCode: string): CarrierService {
  const service = findService(carrier, serviceCode);
  if (!service) throw new RangeError(`${carrier} has no service "${serviceCode}"`);
  return service;
}

function serialsOf(carrier: Carrier, service: CarrierService): { counter: string; maxSerial: bigint } {
  const rules = rulesFor(carrier);
  const own = rules.serialsOf?.(service);
  return own ? { counter: `tracking:${carrier}:${own.counter}`, maxSerial: own.maxSerial } : { counter: `tracking:${carrier}`, maxSerial: rules.maxSerial };
}

/** The largest serial `trackingNumberFor` takes for the service (serials start at 1). */
export function maxTrackingSerial(carrier: Carrier, serviceCode: string): bigint {
  return trackingSerials(carrier, serviceCode).maxSerial;
}

/**
 * The tracking number for a serial unique in its counter (`trackingSerials`): distinct serials give
 * distinct numbers for a carrier's services that share a counter, and services with counters of
 * their own number in another format. Throws RangeError for a serial outside
 * 1..maxTrackingSerial(carrier, service) or an unknown service.
 */
export function trackingNumberFor(carrier: Carrier, serial: bigint, serviceCode: string): string {
  const rules = rulesFor(carrier);
  if (typeof serial !== 'bigint') throw new TypeError('the tracking serial must be a bigint');
  const service = serviceOf(carrier, serviceCode);
  const { maxSerial } = serialsOf(carrier, service);
  if (serial < 1n || serial > maxSerial) {
    throw new RangeError(`${carrier} tracking serial ${serial} is outside 1..${maxSerial}`);
  }
  return rules.trackingNumberFor(serial, service);
}

/** Whether the string is a well-formed tracking number of the carrier with a correct check digit. */
export function isValidTrackingNumber(carrier: Carrier, trackingNumber: string): boolean {
  return typeof trackingNumber === 'string' && rulesFor(carrier).isValid(trackingNumber);
}

/** The canonical form of a number a person typed or copied: no spaces or hyphens, upper case. */
export function normalizeTrackingNumber(text: string): string {
  return text.replace(/[\s-]+/g, '').toUpperCase();
}

/** The carrier's public tracking page for the number. */
export function trackingUrl(carrier: Carrier, trackingNumber: string): string {
  return rulesFor(carrier).url(trackingNumber);
}

/**
 * The number in human-readable groups as printed on labels: UPS `1Z 5R8 939 03 5756 712 7`, USPS
 * groups of four from the left, FedEx `9865 7878 8855`, DHL `33 1881 0025`. RangeError if the
 * number is not valid for the carrier.
 */
export function formatTrackingNumber(carrier: Carrier, trackingNumber: string): string {
  const rules = rulesFor(carrier);
  if (!rules.isValid(trackingNumber)) {
    throw new RangeError(`"${trackingNumber}" is not a valid ${carrier} tracking number`);
  }
  return rules.format(trackingNumber);
}

/** The carrier's own code and wording for one of our tracking statuses. */
export function carrierStatusCode(carrier: Carrier, status: TrackingStatus): CarrierStatusCode {
  const rules = rulesFor(carrier);
  if (!Object.hasOwn(rules.statusCodes, status)) {
    throw new RangeError(`unknown tracking status "${status}"`);
  }
  const { code, description } = rules.statusCodes[status];
  return { code, description };
}

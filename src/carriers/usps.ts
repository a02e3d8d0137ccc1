// USPS Intelligent Mail package barcode (IMpb), 22 digits:
// channel `94` + service type code (3) + mailer id (6) + serial (10) + check digit.
// Its international services number parcels as the UPU's S10 standard says, 13 characters:
// service indicator (2 letters) + serial (8) + check digit + `US`.
import type { CarrierRules } from './rules.ts';
import { groups, queryValue, serialDigits } from './rules.ts';
import type { CarrierService } from './services.ts';

/** Our USPS mailer id; six digits, as USPS gives to ids starting 0–8. */
export const USPS_MAILER_ID = '112062';

const SERIAL_DIGITS = 10;
const SHAPE = /^9[2-5]\d{20}$/;

/** Mod 10 check digit over 21 digits, weighted 3, 1, 3, … from the right. */
export function uspsCheckDigit(digits: string): number {
  let sum = 0;
  for (let i = digits.length - 1, weight = 3; i >= 0; i--, weight = 4 - weight) {
    sum += (digits.charCodeAt(i) - 48) * weight;
  }
  return (10 - (sum % 10)) % 10;
}

const S10_SERIAL_DIGITS = 8;
const S10_SHAPE = /^[A-Z]{2}\d{9}US$/;
const S10_WEIGHTS = [8, 6, 4, 2, 3, 5, 9, 7];

/** The S10 check digit of an 8-digit serial: weights 8 6 4 2 3 5 9 7, 11 less the sum mod 11; 10 is 0 and 11 is 5. */
export function s10CheckDigit(serial: string): number {
  let sum = 0;
  for (let i = 0; i < S10_SERIAL_DIGITS; i++) sum += (serial.charCodeAt(i) - 48) * S10_WEIGHTS[i]!;
  const check = 11 - (sum % 11);
  return check === 10 ? 0 : check === 11 ? 5 : check;
}

/** An international service, whose code is the S10 number's service indicator (services.ts). */
const numberedS10 = (service: CarrierService) => /^[A-Z]{2}$/.test(service.carrierCode);

export const usps: CarrierRules = {
  maxSerial: 10n ** BigInt(SERIAL_DIGITS) - 1n,

  // An S10 number holds 8 digits of serial: its services draw theirs from a counter of their own.
  serialsOf(service) {
    return numberedS10(service) ? { counter: 'S10', maxSerial: 10n ** BigInt(S10_SERIAL_DIGITS) - 1n } : undefined;
  },

  trackingNumberFor(serial, service) {
    if (numberedS10(service)) {
      const digits = serialDigits(serial, S10_SERIAL_DIGITS);
      return `${service.carrierCode}${digits}${s10CheckDigit(digits)}US`;
    }
    const digits = `94${service.carrierCode}${USPS_MAILER_ID}${serialDigits(serial, SERIAL_DIGITS)}`;
    return digits + uspsCheckDigit(digits);
  },

  isValid(trackingNumber) {
    if (S10_SHAPE.test(trackingNumber)) return s10CheckDigit(trackingNumber.slice(2, 10)) === Number(trackingNumber[10]);
    if (!SHAPE.test(trackingNumber)) return false;
    return uspsCheckDigit(trackingNumber.slice(0, 21)) === Number(trackingNumber[21]);
  },

  // 9400 1112 0620 6406 2607 87: groups of four from the left, as USPS prints them; an S10 number
  // as the UPU prints it, CP 123 456 785 US.
  format(trackingNumber) {
    if (S10_SHAPE.test(trackingNumber)) return groups(trackingNumber, [2, 3, 3, 3, 2]);
    return groups(trackingNumber, [4, 4, 4, 4, 4, 2]);
  },

  url(trackingNumber) {
    return `https://tools.usps.com/go/TrackConfirmAction?tLabels=${queryValue(trackingNumber)}`;
  },

  // USPS tracking event codes.
  statusCodes: {
    pre_transit: { code: 'MA', description: 'Pre-Shipment Info Sent to USPS, USPS Awaiting Item' },
    in_transit: { code: '10', description: 'Processed Through Facility' },
    out_for_delivery: { code: 'OF', description: 'Out for Delivery' },
    delivered: { code: '01', description: 'Delivered' },
    exception: { code: '05', description: 'Undeliverable as Addressed' },
    returned: { code: '31', description: 'Return to Sender Processed' },
  },
};

// USPS Intelligent Mail package barcode (IMpb), 22 digits:
// channel `94` + service type code (3) + mailer id (6) + serial (10) + check digit.
import type { CarrierRules } from './rules.ts';
import { groups, queryValue, serialDigits } from './rules.ts';

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

export const usps: CarrierRules = {
  maxSerial: 10n ** BigInt(SERIAL_DIGITS) - 1n,

  trackingNumberFor(serial, service) {
    const digits = `94${service.carrierCode}${USPS_MAILER_ID}${serialDigits(serial, SERIAL_DIGITS)}`;
    return digits + uspsCheckDigit(digits);
  },

  isValid(trackingNumber) {
    if (!SHAPE.test(trackingNumber)) return false;
    return uspsCheckDigit(trackingNumber.slice(0, 21)) === Number(trackingNumber[21]);
  },

  // 9400 1112 0620 6406 2607 87: groups of four from the left, as USPS prints them.
  format(trackingNumber) {
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

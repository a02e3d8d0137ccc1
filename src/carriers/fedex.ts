// FedEx: 12 digits, a fixed leading 9 + serial (10) + check digit.
import type { CarrierRules } from './rules.ts';
import { groups, queryValue, serialDigits } from './rules.ts';

const PREFIX = '9';
const SERIAL_DIGITS = 10;
const SHAPE = /^\d{12}$/;
const WEIGHTS = [1, 3, 7] as const;

/** Check digit over 11 digits: weights 1, 3, 7 repeating from the right, sum mod 11, then mod 10. */
export function fedexCheckDigit(digits: string): number {
  let sum = 0;
  for (let i = digits.length - 1, k = 0; i >= 0; i--, k++) {
    sum += (digits.charCodeAt(i) - 48) * WEIGHTS[k % 3]!;
  }
  return (sum % 11) % 10;
}

export const fedex: CarrierRules = {
  maxSerial: 10n ** BigInt(SERIAL_DIGITS) - 1n,

  trackingNumberFor(serial) {
    const digits = PREFIX + serialDigits(serial, SERIAL_DIGITS);
    return digits + fedexCheckDigit(digits);
  },

  isValid(trackingNumber) {
    if (!SHAPE.test(trackingNumber)) return false;
    return fedexCheckDigit(trackingNumber.slice(0, 11)) === Number(trackingNumber[11]);
  },

  // 9865 7878 8855
  format(trackingNumber) {
    return groups(trackingNumber, [4, 4, 4]);
  },

  url(trackingNumber) {
    return `https://www.fedex.com/fedextrack/?trknbr=${queryValue(trackingNumber)}`;
  },

  // FedEx scan event codes.
  statusCodes: {
    pre_transit: { code: 'OC', description: 'Shipment information sent to FedEx' },
    in_transit: { code: 'IT', description: 'In transit' },
    out_for_delivery: { code: 'OD', description: 'On FedEx vehicle for delivery' },
    delivered: { code: 'DL', description: 'Delivered' },
    exception: { code: 'DE', description: 'Delivery exception' },
    returned: { code: 'RS', description: 'Return to shipper' },
  },
};

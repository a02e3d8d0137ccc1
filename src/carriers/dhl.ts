// DHL Express waybill: 10 digits, a fixed leading 3 + serial (8) + check digit.
import type { CarrierRules } from './rules.ts';
import { groups, queryValue, serialDigits } from './rules.ts';

const PREFIX = '3';
const SERIAL_DIGITS = 8;
const SHAPE = /^\d{10}$/;

/** Check digit: the first nine digits as a number, mod 7. */
export function dhlCheckDigit(digits: string): number {
  return Number(digits) % 7;
}

export const dhl: CarrierRules = {
  maxSerial: 10n ** BigInt(SERIAL_DIGITS) - 1n,

  trackingNumberFor(serial) {
    const digits = PREFIX + serialDigits(serial, SERIAL_DIGITS);
    return digits + dhlCheckDigit(digits);
  },

  isValid(trackingNumber) {
    if (!SHAPE.test(trackingNumber)) return false;
    return dhlCheckDigit(trackingNumber.slice(0, 9)) === Number(trackingNumber[9]);
  },

  // 33 1881 0025, as the waybill number is printed on DHL Express labels.
  format(trackingNumber) {
    return groups(trackingNumber, [2, 4, 4]);
  },

  url(trackingNumber) {
    return `https://www.dhl.com/en/express/tracking.html?AWB=${queryValue(trackingNumber)}&brand=DHL`;
  },

  // DHL Express checkpoint codes. There is no checkpoint before the courier collects the parcel, so
  // the pickup scan stands for pre_transit and the first processing scan starts in_transit.
  statusCodes: {
    pre_transit: { code: 'PU', description: 'Shipment picked up' },
    in_transit: { code: 'PL', description: 'Processed at location' },
    out_for_delivery: { code: 'WC', description: 'With delivery courier' },
    delivered: { code: 'OK', description: 'Delivered' },
    exception: { code: 'NH', description: 'Delivery attempted, consignee not at home' },
    returned: { code: 'RT', description: 'Returned to shipper' },
  },
};

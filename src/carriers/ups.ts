// UPS: `1Z` + shipper account (6) + service code (2) + package id (7) + check digit.
import type { CarrierRules } from './rules.ts';
import { groups, queryValue, serialDigits } from './rules.ts';

/** Our UPS shipper account, the six characters after `1Z`. */
export const UPS_SHIPPER_ACCOUNT = '5R8939';

const PACKAGE_ID_DIGITS = 7;
const SHAPE = /^1Z[0-9A-Z]{15}[0-9]$/;

/** A character's value in the check sum: digits as themselves, letters as (ASCII − 3) mod 10. */
function checkValue(char: string): number {
  const code = char.charCodeAt(0);
  return code <= 57 ? code - 48 : (code - 3) % 10;
}

/**
 * The check digit over the 15 characters after `1Z`. Positions counted from 1: odd ones add their
 * value, even ones twice their value (the documented "odd positions doubled" (docs/decisions.md) counts from 0; the
 * worked example 1Z5R89390357567127 only validates this way).
 */
export function upsCheckDigit(body: string): number {
  let sum = 0;
  for (let i = 0; i < body.length; i++) sum += checkValue(body[i]!) * (i % 2 === 0 ? 1 : 2);
  return (10 - (sum % 10)) % 10;
}

export const ups: CarrierRules = {
  maxSerial: 10n ** BigInt(PACKAGE_ID_DIGITS) - 1n,

  trackingNumberFor(serial, service) {
    const body = UPS_SHIPPER_ACCOUNT + service.carrierCode + serialDigits(serial, PACKAGE_ID_DIGITS);
    return `1Z${body}${upsCheckDigit(body)}`;
  },

  isValid(trackingNumber) {
    if (!SHAPE.test(trackingNumber)) return false;
    return upsCheckDigit(trackingNumber.slice(2, 17)) === Number(trackingNumber[17]);
  },

  // 1Z 5R8 939 03 5756 712 7: prefix, account in threes, service, package id 4+3, check digit.
  format(trackingNumber) {
    return groups(trackingNumber, [2, 3, 3, 2, 4, 3, 1]);
  },

  url(trackingNumber) {
    return `https://www.ups.com/track?tracknum=${queryValue(trackingNumber)}`;
  },

  // UPS activity status types.
  statusCodes: {
    pre_transit: {
      code: 'M',
      description: 'Shipper created a label, UPS has not received the package yet',
    },
    in_transit: { code: 'I', description: 'In Transit' },
    out_for_delivery: { code: 'O', description: 'Out For Delivery Today' },
    delivered: { code: 'D', description: 'Delivered' },
    exception: { code: 'X', description: 'Exception' },
    returned: { code: 'RS', description: 'Returned to Shipper' },
  },
};

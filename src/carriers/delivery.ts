// Estimated delivery: the service's transit days counted in business days.
import type { Carrier } from './services.ts';
import { findService } from './services.ts';

/** The hour (UTC) given as the end of the delivery day. */
export const DELIVERY_HOUR_UTC = 20;

/**
 * `from` plus the service's `transitDays` business days, at 20:00 UTC on that day. Days are UTC
 * calendar days; Saturdays and Sundays are skipped (a parcel accepted on Friday or over the weekend
 * with one transit day arrives on Monday); public holidays are not considered.
 */
export function estimateDelivery(carrier: Carrier, serviceCode: string, from: Date): Date {
  const service = findService(carrier, serviceCode);
  if (!service) throw new RangeError(`${carrier} has no service "${serviceCode}"`);
  if (Number.isNaN(from.getTime())) throw new RangeError('estimateDelivery needs a valid date');
  return addBusinessDays(from, service.transitDays);
}

/** `n` business days (Monday to Friday, UTC) after `from`, at the delivery hour; with 0, `from`'s own day. */
export function addBusinessDays(from: Date, n: number): Date {
  const day = new Date(from.getTime());
  day.setUTCHours(DELIVERY_HOUR_UTC, 0, 0, 0);
  let left = n;
  while (left > 0) {
    day.setUTCDate(day.getUTCDate() + 1);
    const weekday = day.getUTCDay();
    if (weekday !== 0 && weekday !== 6) left--;
  }
  return day;
}

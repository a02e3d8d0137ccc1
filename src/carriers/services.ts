// The carriers we issue labels for, the services each offers and where each runs (docs/customs.md, "What each carrier takes").
export const CARRIERS = ['UPS', 'USPS', 'FedEx', 'DHL'] as const;
export type Carrier = (typeof CARRIERS)[number];

export interface CarrierService {
  /** Our code for the service, as clients send it in `service`. */
  code: string;
  /** The banner printed on the label. */
  name: string;
  /** Business days from acceptance to delivery, used for estimatedDelivery. */
  transitDays: number;
  /**
   * The carrier's own code for the service: the UPS service code inside the tracking number, the
   * USPS IMpb service type code (for its international services, the two letters that begin their
   * UPU S10 number: E for EMS, C for a parcel, L for a tracked small packet), the FedEx service type,
   * the DHL Express global product code.
   */
  carrierCode: string;
  /**
   * Where the service carries parcels: `domestic` within the carrier's home network (USPS: the United
   * States and the places its mail serves; UPS and FedEx: the United States and Puerto Rico),
   * `international` between countries (a place told apart by its postal code counting as one; for UPS
   * and FedEx not within their US network; for USPS from its network to a country outside it).
   * docs/customs.md, "What each carrier takes".
   */
  reach: 'domestic' | 'international';
  /**
   * The carrier's own limit for a CN22: below this many US dollars, else a CN23 (0: a CN23 always).
   * Unset, the UPU's 300 SDR decides (`customsForm`). USPS's international services, IMM 123.61.
   */
  cn22BelowUsd?: number;
}

export const SERVICES: Record<Carrier, readonly CarrierService[]> = {
  UPS: [
    { code: 'ground', name: 'UPS GROUND', transitDays: 5, carrierCode: '03', reach: 'domestic' },
    { code: '3_day_select', name: 'UPS 3 DAY SELECT', transitDays: 3, carrierCode: '12', reach: 'domestic' },
    { code: '2nd_day_air', name: 'UPS 2ND DAY AIR', transitDays: 2, carrierCode: '02', reach: 'domestic' },
    { code: 'next_day_air', name: 'UPS NEXT DAY AIR', transitDays: 1, carrierCode: '01', reach: 'domestic' },
    { code: 'worldwide_saver', name: 'UPS WORLDWIDE SAVER', transitDays: 2, carrierCode: '65', reach: 'international' },
    { code: 'worldwide_expedited', name: 'UPS WORLDWIDE EXPEDITED', transitDays: 4, carrierCode: '08', reach: 'international' },
    { code: 'return', name: 'UPS RETURN SERVICES', transitDays: 5, carrierCode: '03', reach: 'domestic' },
    { code: 'worldwide_return', name: 'UPS WORLDWIDE RETURN', transitDays: 4, carrierCode: '08', reach: 'international' },
  ],
  USPS: [
    { code: 'ground_advantage', name: 'USPS GROUND ADVANTAGE', transitDays: 5, carrierCode: '001', reach: 'domestic' },
    { code: 'priority_mail', name: 'USPS PRIORITY MAIL', transitDays: 3, carrierCode: '055', reach: 'domestic' },
    { code: 'priority_mail_express', name: 'USPS PRIORITY MAIL EXPRESS', transitDays: 2, carrierCode: '701', reach: 'domestic' },
    { code: 'ground_advantage_return', name: 'USPS GROUND ADVANTAGE RETURN', transitDays: 5, carrierCode: '020', reach: 'domestic' },
    { code: 'priority_mail_express_international', name: 'USPS PRIORITY MAIL EXPRESS INTERNATIONAL', transitDays: 5, carrierCode: 'EC', reach: 'international', cn22BelowUsd: 0 },
    { code: 'priority_mail_international', name: 'USPS PRIORITY MAIL INTERNATIONAL', transitDays: 10, carrierCode: 'CP', reach: 'international', cn22BelowUsd: 0 },
    { code: 'first_class_package_international', name: 'USPS FIRST-CLASS PACKAGE INTERNATIONAL SERVICE', transitDays: 15, carrierCode: 'LX', reach: 'international', cn22BelowUsd: 400 },
  ],
  FedEx: [
    { code: 'ground', name: 'FEDEX GROUND', transitDays: 5, carrierCode: 'FEDEX_GROUND', reach: 'domestic' },
    { code: 'express_saver', name: 'FEDEX EXPRESS SAVER', transitDays: 3, carrierCode: 'FEDEX_EXPRESS_SAVER', reach: 'domestic' },
    { code: '2day', name: 'FEDEX 2DAY', transitDays: 2, carrierCode: 'FEDEX_2_DAY', reach: 'domestic' },
    { code: 'priority_overnight', name: 'FEDEX PRIORITY OVERNIGHT', transitDays: 1, carrierCode: 'PRIORITY_OVERNIGHT', reach: 'domestic' },
    { code: 'international_priority', name: 'FEDEX INTL PRIORITY', transitDays: 2, carrierCode: 'INTERNATIONAL_PRIORITY', reach: 'international' },
    { code: 'international_economy', name: 'FEDEX INTL ECONOMY', transitDays: 4, carrierCode: 'INTERNATIONAL_ECONOMY', reach: 'international' },
    { code: 'ground_return', name: 'FEDEX GROUND RETURN', transitDays: 5, carrierCode: 'FEDEX_GROUND', reach: 'domestic' },
    { code: 'international_return', name: 'FEDEX INTL RETURN', transitDays: 4, carrierCode: 'INTERNATIONAL_ECONOMY', reach: 'international' },
  ],
  DHL: [
    { code: 'express_worldwide', name: 'DHL EXPRESS WORLDWIDE', transitDays: 3, carrierCode: 'P', reach: 'international' },
    { code: 'express_12', name: 'DHL EXPRESS 12:00', transitDays: 1, carrierCode: 'T', reach: 'international' },
    { code: 'express_worldwide_return', name: 'DHL EXPRESS WORLDWIDE RETURN', transitDays: 3, carrierCode: 'P', reach: 'international' },
  ],
};

/**
 * The service a return shipment gets when none is asked for (contract §13), within one country and
 * between two: the carrier's return service that runs there.
 */
export const RETURN_SERVICE: Record<Carrier, { domestic: string; international: string }> = {
  UPS: { domestic: 'return', international: 'worldwide_return' },
  USPS: { domestic: 'ground_advantage_return', international: 'ground_advantage_return' },
  FedEx: { domestic: 'ground_return', international: 'international_return' },
  DHL: { domestic: 'express_worldwide_return', international: 'express_worldwide_return' },
};

/**
 * Each carrier's services by where they run, in words, for the API's description, the dashboard's form
 * and the CSV upload's columns: `UPS: ground, … within the United States and Puerto Rico; worldwide_saver,
 * … between countries. USPS: …`.
 */
export function servicesByRoute(): string {
  return CARRIERS.map((c) => {
    const codes = (reach: CarrierService['reach']) => SERVICES[c].filter((s) => s.reach === reach).map((s) => s.code).join(', ');
    const parts = [codes('domestic') && `${codes('domestic')} ${homeNetwork(c)}`, codes('international') && `${codes('international')} ${abroad(c)}`];
    return `${c}: ${parts.filter(Boolean).join('; ')}`;
  }).join('. ');
}

/** Where a carrier's domestic services run, in words. */
export function homeNetwork(carrier: Carrier): string {
  return carrier === 'USPS' ? 'from and to the United States and the places its mail serves' : 'within the United States and Puerto Rico';
}

/** Where a carrier's international services run, in words. */
export function abroad(carrier: Carrier): string {
  return carrier === 'USPS' ? 'from there to other countries' : 'between countries';
}

/** The carrier's return services (one, or one within its home network and one between countries). */
export function returnServices(carrier: Carrier): string[] {
  return [...new Set(Object.values(RETURN_SERVICE[carrier]))];
}

/** Whether the service is one of the carrier's return services, which carry returns only (§13). */
export function isReturnService(carrier: Carrier, code: string): boolean {
  return returnServices(carrier).includes(code);
}

export function findService(carrier: Carrier, code: string): CarrierService | undefined {
  return SERVICES[carrier].find((s) => s.code === code);
}

/** The largest package a carrier takes, as its published limits for one package say. */
export interface PackageLimit {
  /** The heaviest, and how the carrier writes that limit. */
  weight: { value: number; unit: 'kg' | 'lb' };
  /** The longest side, in the unit the carrier writes it in. */
  length?: { value: number; unit: 'cm' | 'in' };
  /** The length plus the girth (twice the width and height), in the same way. */
  lengthPlusGirth?: { value: number; unit: 'cm' | 'in' };
  /** The three sides added up, in the same way. */
  sumOfSides?: { value: number; unit: 'cm' | 'in' };
}

const UPS_FEDEX: PackageLimit = { weight: { value: 150, unit: 'lb' }, length: { value: 108, unit: 'in' }, lengthPlusGirth: { value: 165, unit: 'in' } };

/**
 * Per carrier (and, where one differs, per service): UPS and FedEx 150 lb, 108 in long, 165 in in
 * length and girth; USPS 70 lb and 108 in in length and girth, 130 in for Ground Advantage, and for
 * First-Class Package International Service 4 lb, 24 in long and 36 in for the three sides together
 * (Priority Mail International and Express International: the most any country takes; some take
 * less); DHL Express 70 kg a piece and 300 cm on its longest side.
 */
export function packageLimit(carrier: Carrier, service: string): PackageLimit {
  if (carrier === 'USPS') {
    // First-Class Package International Service takes small packets only (USPS Notice 123; IMM 254).
    if (service === 'first_class_package_international') return { weight: { value: 4, unit: 'lb' }, length: { value: 24, unit: 'in' }, sumOfSides: { value: 36, unit: 'in' } };
    const ground = service === 'ground_advantage' || service === 'ground_advantage_return';
    return { weight: { value: 70, unit: 'lb' }, lengthPlusGirth: { value: ground ? 130 : 108, unit: 'in' } };
  }
  if (carrier === 'DHL') return { weight: { value: 70, unit: 'kg' }, length: { value: 300, unit: 'cm' } };
  return UPS_FEDEX;
}

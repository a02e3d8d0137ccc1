// The carriers we issue labels for and the services each offers (docs/labels.md).
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
   * USPS IMpb service type code, the FedEx service type, the DHL Express global product code.
   */
  carrierCode: string;
}

export const SERVICES: Record<Carrier, readonly CarrierService[]> = {
  UPS: [
    { code: 'ground', name: 'UPS GROUND', transitDays: 5, carrierCode: '03' },
    { code: '3_day_select', name: 'UPS 3 DAY SELECT', transitDays: 3, carrierCode: '12' },
    { code: '2nd_day_air', name: 'UPS 2ND DAY AIR', transitDays: 2, carrierCode: '02' },
    { code: 'next_day_air', name: 'UPS NEXT DAY AIR', transitDays: 1, carrierCode: '01' },
    { code: 'return', name: 'UPS RETURN SERVICES', transitDays: 5, carrierCode: '03' },
  ],
  USPS: [
    { code: 'ground_advantage', name: 'USPS GROUND ADVANTAGE', transitDays: 5, carrierCode: '001' },
    { code: 'priority_mail', name: 'USPS PRIORITY MAIL', transitDays: 3, carrierCode: '055' },
    { code: 'priority_mail_express', name: 'USPS PRIORITY MAIL EXPRESS', transitDays: 2, carrierCode: '701' },
    { code: 'ground_advantage_return', name: 'USPS GROUND ADVANTAGE RETURN', transitDays: 5, carrierCode: '020' },
  ],
  FedEx: [
    { code: 'ground', name: 'FEDEX GROUND', transitDays: 5, carrierCode: 'FEDEX_GROUND' },
    { code: 'express_saver', name: 'FEDEX EXPRESS SAVER', transitDays: 3, carrierCode: 'FEDEX_EXPRESS_SAVER' },
    { code: '2day', name: 'FEDEX 2DAY', transitDays: 2, carrierCode: 'FEDEX_2_DAY' },
    { code: 'priority_overnight', name: 'FEDEX PRIORITY OVERNIGHT', transitDays: 1, carrierCode: 'PRIORITY_OVERNIGHT' },
    { code: 'ground_return', name: 'FEDEX GROUND RETURN', transitDays: 5, carrierCode: 'FEDEX_GROUND' },
  ],
  DHL: [
    { code: 'express_worldwide', name: 'DHL EXPRESS WORLDWIDE', transitDays: 3, carrierCode: 'P' },
    { code: 'express_12', name: 'DHL EXPRESS 12:00', transitDays: 1, carrierCode: 'T' },
    { code: 'express_worldwide_return', name: 'DHL EXPRESS WORLDWIDE RETURN', transitDays: 3, carrierCode: 'P' },
  ],
};

/** The service a return shipment gets when none is asked for (contract §13). */
export const RETURN_SERVICE: Record<Carrier, string> = { UPS: 'return', USPS: 'ground_advantage_return', FedEx: 'ground_return', DHL: 'express_worldwide_return' };

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
}

const UPS_FEDEX: PackageLimit = { weight: { value: 150, unit: 'lb' }, length: { value: 108, unit: 'in' }, lengthPlusGirth: { value: 165, unit: 'in' } };

/**
 * Per carrier (and, where one differs, per service): UPS and FedEx 150 lb, 108 in long, 165 in in
 * length and girth; USPS 70 lb and 108 in in length and girth, 130 in for Ground Advantage; DHL
 * Express 70 kg a piece and 300 cm on its longest side.
 */
export function packageLimit(carrier: Carrier, service: string): PackageLimit {
  if (carrier === 'USPS') {
    const ground = service === 'ground_advantage' || service === 'ground_advantage_return';
    return { weight: { value: 70, unit: 'lb' }, lengthPlusGirth: { value: ground ? 130 : 108, unit: 'in' } };
  }
  if (carrier === 'DHL') return { weight: { value: 70, unit: 'kg' }, length: { value: 300, unit: 'cm' } };
  return UPS_FEDEX;
}

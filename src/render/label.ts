// The label's input: everything a label shows, as the labels module stores it.

export const LABEL_SIZES = ['4x6', '4x8', '6x4', '8.5x11'] as const;
export type LabelSize = (typeof LABEL_SIZES)[number];

export interface Address {
  name: string;
  company?: string;
  street1: string;
  street2?: string;
  city: string;
  state?: string;
  postalCode: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  phone?: string;
  email?: string;
}

export interface LabelData {
  labelId: string;
  carrier: 'UPS' | 'USPS' | 'FedEx' | 'DHL';
  /** Our service code, e.g. `ground`. */
  serviceCode: string;
  /** The banner, e.g. `UPS GROUND`. */
  serviceName: string;
  trackingNumber: string;
  size: LabelSize;
  /** RFC 3339. */
  shipDate: string;
  from: Address;
  to: Address;
  parcel: {
    weight: { value: number; unit: 'g' | 'kg' | 'oz' | 'lb' };
    length?: number;
    width?: number;
    height?: number;
    dimensionUnit?: 'cm' | 'in';
  };
  reference?: string;
}

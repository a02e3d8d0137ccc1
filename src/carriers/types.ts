// What every carrier ships: the addresses and the parcel of a shipment, one shape from the API to the
// printed label.
export type { Carrier } from './services.ts';

export interface Address {
  name: string;
  company?: string;
  street1: string;
  street2?: string;
  city: string;
  state?: string;
  /** Absent only for a country without postal codes (docs/addresses.md). */
  postalCode?: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  phone?: string;
  email?: string;
}

export interface Parcel {
  weight: { value: number; unit: 'g' | 'kg' | 'oz' | 'lb' };
  length?: number;
  width?: number;
  height?: number;
  dimensionUnit?: 'cm' | 'in';
}

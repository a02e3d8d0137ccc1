// The label's input: everything a label shows, as the labels module stores it.
import type { Address, Carrier, Parcel } from '../carriers/types.ts';
import type { Customs } from '../carriers/customs.ts';

export const LABEL_SIZES = ['4x6', '4x8', '6x4', '8.5x11'] as const;
export type LabelSize = (typeof LABEL_SIZES)[number];

export interface LabelData {
  labelId: string;
  carrier: Carrier;
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
  parcel: Parcel;
  reference?: string;
  /** Up to three lines the shipper wants on the label (§10), printed as given. */
  messages?: string[];
  /** The account's logo when the label was created, 1-bit at 203 dpi (at most 203 x 203 dots). */
  logo?: Logo;
  /** The shipment's customs declaration (§12), and the UPU form chosen for it when the label was made. */
  customs?: Customs;
  customsForm?: 'CN22' | 'CN23';
  /** The shipment is a return (§13): the label carries a RETURN banner. */
  isReturn?: boolean;
  /** A return's original export: its label's waybill number and date, quoted on the customs documents (returned-goods relief). */
  originalExport?: { trackingNumber: string; shipDate: string };
}

/** A 1-bit picture: rows top to bottom, each padded to whole bytes, most significant bit first, 1 dark; base64. */
export interface Logo {
  columns: number;
  rows: number;
  bits: string;
}

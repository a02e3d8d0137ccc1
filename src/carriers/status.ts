// The tracking statuses the service reports (docs/tracking.md), shared by every carrier.
export const TRACKING_STATUSES = [
  'pre_transit',
  'in_transit',
  'out_for_delivery',
  'delivered',
  'exception',
  'returned',
] as const;
export type TrackingStatus = (typeof TRACKING_STATUSES)[number];

/** A carrier's own status code, as shown in `carrierDetails`. */
export interface CarrierStatusCode {
  code: string;
  description: string;
}

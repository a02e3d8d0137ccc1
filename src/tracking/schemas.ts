import { CARRIERS, TRACKING_STATUSES } from '../carriers/index.ts';
import { PRINTABLE_PATTERN as PRINTABLE, dateTime } from '../http/schemas.ts';

export const TRACKING_FORMATS = ['basic', 'detailed', 'carrier-specific'] as const;
export const EVENT_SORTS = ['newest_first', 'oldest_first'] as const;
export const MAX_EVENTS_PER_BATCH = 1000;
/** The body limit of a batch of events: the largest batch the schema allows fits, its text in UTF-8 (not as `\u` escapes). */
export const EVENTS_BODY_LIMIT = 4 * 1024 * 1024;

const carrier = { type: 'string', enum: [...CARRIERS] } as const;
const status = { type: 'string', enum: [...TRACKING_STATUSES] } as const;
const statusCode = {
  type: 'object',
  required: ['code', 'description'],
  properties: { code: { type: 'string' }, description: { type: 'string' } },
} as const;

export const trackingEventSchema = {
  $id: 'TrackingEvent',
  type: 'object',
  required: ['timestamp', 'location', 'status', 'carrier', 'description'],
  properties: {
    timestamp: { ...dateTime, description: 'When it happened, UTC with milliseconds.' },
    location: { type: 'string' },
    status,
    carrier: { ...carrier, description: 'The carrier that reported the event.' },
    description: { type: 'string' },
  },
} as const;

export const trackingInfoSchema = {
  $id: 'TrackingInfo',
  type: 'object',
  required: ['trackingNumber', 'carrier', 'trackingUrl'],
  properties: {
    trackingNumber: { type: 'string' },
    carrier,
    trackingUrl: { type: 'string', format: 'uri', description: "The carrier's public tracking page for this number." },
    status: { ...status, description: 'detailed and carrier-specific: the status of the latest event (`pre_transit` before any).' },
    estimatedDelivery: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'detailed and carrier-specific: the service transit time in business days from label creation, revised by events; null once the parcel was returned.',
    },
    events: { type: 'array', items: { $ref: 'TrackingEvent#' }, description: 'detailed and carrier-specific: filtered, sorted, then limited.' },
    carrierDetails: {
      type: 'object',
      description: "carrier-specific: the carriers' own status codes, for the status and for each event (same order as `events`).",
      required: ['carrier', 'status', 'events'],
      properties: {
        carrier: { ...carrier, description: 'The label\'s carrier, in whose codes `status` is given.' },
        status: statusCode,
        events: {
          type: 'array',
          items: {
            type: 'object',
            required: ['timestamp', 'carrier', 'code', 'description'],
            properties: { timestamp: dateTime, carrier, code: { type: 'string' }, description: { type: 'string' } },
          },
        },
      },
    },
  },
} as const;

export const trackingQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    format: { type: 'string', enum: [...TRACKING_FORMATS], default: 'basic', description: '`detailed` adds status, estimatedDelivery and events; `carrier-specific` also adds carrierDetails.' },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 10, description: 'Maximum number of events returned, applied after the filters and the sort.' },
    carrier: { ...carrier, description: 'Only events reported by this carrier.' },
    events_since: { ...dateTime, description: 'Only events strictly after this time (RFC 3339 with any offset).' },
    sort: { type: 'string', enum: [...EVENT_SORTS], default: 'newest_first' },
  },
} as const;

export const ingestBody = {
  type: 'object',
  examples: [{ events: [{ trackingNumber: '1Z5R89390357567127', status: 'in_transit', timestamp: '2026-11-24T10:00:00Z', location: 'Louisville, KY, US', description: 'Departed facility' }] }],
  additionalProperties: false,
  required: ['events'],
  properties: {
    events: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_EVENTS_PER_BATCH,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['trackingNumber', 'status', 'timestamp', 'location'],
        properties: {
          trackingNumber: { type: 'string', minLength: 1, maxLength: 40, description: 'A tracking number of one of your labels; spaces and hyphens are ignored.' },
          status,
          timestamp: { ...dateTime, description: "RFC 3339 with an offset (`Z` or `±hh:mm`); at most 24 hours ahead of the service's clock." },
          location: { type: 'string', maxLength: 200, pattern: PRINTABLE },
          carrier: { ...carrier, description: "The carrier reporting the event; defaults to the label's carrier." },
          description: { type: 'string', maxLength: 500, pattern: PRINTABLE, description: "Defaults to the carrier's wording for the status." },
        },
      },
    },
  },
} as const;

export const ingestResponse = {
  description: 'Accepted: the events are stored; the webhook events they cause are delivered by the worker',
  type: 'object',
  required: ['accepted'],
  properties: { accepted: { type: 'integer', minimum: 0, description: 'How many events were new; duplicates of stored events are not counted.' } },
} as const;

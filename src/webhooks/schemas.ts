import { EVENT_TYPES } from '../db/events.ts';
import { dateTime, uuid } from '../http/schemas.ts';

const events = {
  type: 'array',
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  uniqueItems: true,
  items: { type: 'string', enum: [...EVENT_TYPES] },
  description: 'The event kinds this webhook receives.',
} as const;

const url = { type: 'string', format: 'uri', minLength: 1, maxLength: 2048, description: 'Absolute http(s) URL the events are POSTed to (https only in production).' } as const;
const secret = {
  type: 'string',
  minLength: 1,
  maxLength: 512,
  writeOnly: true,
  description:
    'Write-only signing secret, never returned. `whsec_<base64>` signs with the decoded bytes (Standard Webhooks), any other string with its UTF-8 bytes. Without one, deliveries are not signed.',
} as const;

export const webhookSchema = {
  $id: 'Webhook',
  type: 'object',
  required: ['id', 'url', 'events', 'active', 'createdAt', 'updatedAt'],
  properties: {
    id: uuid,
    url: { type: 'string', format: 'uri' },
    events: { type: 'array', items: { type: 'string', enum: [...EVENT_TYPES] } },
    active: { type: 'boolean', description: 'false: nothing is sent; set by you, by a 410 answer, or after 5 days of failures.' },
    createdAt: dateTime,
    updatedAt: dateTime,
  },
} as const;

export const webhookDeliverySchema = {
  $id: 'WebhookDelivery',
  type: 'object',
  required: ['id', 'eventId', 'subjectId', 'type', 'status', 'attempts', 'nextAttemptAt', 'createdAt'],
  properties: {
    id: uuid,
    eventId: { ...uuid, description: 'The event id: the `webhook-id` header and the body\'s `id`, the same on every attempt.' },
    subjectId: { ...uuid, description: 'What the event is about: the shipment, or for `batch.completed` the batch (the body\'s `data.id`).' },
    type: { type: 'string', enum: [...EVENT_TYPES] },
    status: { type: 'string', enum: ['pending', 'succeeded', 'failed'] },
    attempts: {
      type: 'array',
      description: 'Every attempt, oldest first.',
      items: {
        type: 'object',
        required: ['at', 'responseStatus', 'durationMs', 'error'],
        properties: {
          at: dateTime,
          responseStatus: { type: ['integer', 'null'], description: 'The HTTP status answered; null when no answer came.' },
          durationMs: { type: 'integer' },
          error: { type: ['string', 'null'], description: 'Why the attempt failed; null on success.' },
        },
      },
    },
    nextAttemptAt: { type: ['string', 'null'], format: 'date-time', description: 'When the next attempt is due; null when done or while the webhook is inactive.' },
    createdAt: dateTime,
  },
} as const;

export const createWebhookBody = {
  type: 'object',
  examples: [{ url: 'https://shop.example.org/hooks/shipping', events: ['shipment.created', 'shipment.delivered'], secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }],
  additionalProperties: false,
  required: ['url', 'events'],
  properties: { url, events, active: { type: 'boolean', default: true }, secret },
} as const;

export const patchWebhookBody = {
  type: 'object',
  examples: [{ active: false }],
  additionalProperties: false,
  minProperties: 1,
  properties: { url, events, active: { type: 'boolean' }, secret: { ...secret, type: ['string', 'null'], description: `${secret.description} null removes it.` } },
} as const;

export const deliveryParams = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'deliveryId'],
  properties: { id: uuid, deliveryId: uuid },
} as const;

/** What each delivery's request carries, per Standard Webhooks (docs/webhooks.md). */
const DELIVERY_HEADERS = [
  { name: 'webhook-id', in: 'header', required: true, description: 'The event\'s id: the same on every attempt and for every subscriber. Deliveries are at least once: deduplicate on it.', schema: uuid },
  { name: 'webhook-timestamp', in: 'header', required: true, description: 'When this attempt was signed, in Unix seconds.', schema: { type: 'string', pattern: '^[0-9]+$' } },
  {
    name: 'webhook-signature',
    in: 'header',
    required: false,
    description: '`v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` with the webhook\'s secret (a `whsec_` secret\'s decoded bytes, any other its UTF-8 bytes). Absent when the webhook has no secret.',
    schema: { type: 'string', pattern: '^v1,' },
  },
] as const;

const SHIPMENT = { $ref: '#/components/schemas/Shipment' } as const;
/** The shipment with the tracking event that caused the change. */
const TRACKED = { allOf: [SHIPMENT, { type: 'object', required: ['event'], properties: { event: { $ref: '#/components/schemas/TrackingEvent' } } }] } as const;

/** Each event kind's `data`: the shipment right after the change (with the tracking event that caused it), or the completed batch. */
const EVENT_DATA: Record<(typeof EVENT_TYPES)[number], { summary: string; data: object }> = {
  'shipment.created': { summary: 'A shipment was created (also each one of a batch, and a return)', data: SHIPMENT },
  'shipment.in_transit': { summary: 'A tracking event put the shipment in transit', data: TRACKED },
  'shipment.delivered': { summary: 'A tracking event marked the shipment delivered', data: TRACKED },
  'shipment.exception': { summary: 'A tracking event reported an exception (a failed attempt, a return to sender)', data: TRACKED },
  'batch.completed': { summary: 'Every item of a batch was done', data: { $ref: '#/components/schemas/Batch' } },
};

/**
 * The OpenAPI document's `webhooks`: the request the service sends to a subscribed URL for each
 * event kind, and what the answer does, so a generated client types the payloads too.
 */
export const webhookEventsDocument = Object.fromEntries(
  EVENT_TYPES.map((type) => [
    type,
    {
      post: {
        operationId: `${type.replace(/[._](\w)/g, (_, c: string) => c.toUpperCase())}Event`,
        summary: EVENT_DATA[type].summary,
        tags: ['webhooks'],
        // The receiver checks the request by its signature, not by a scheme of this document.
        security: [],
        parameters: DELIVERY_HEADERS,
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                additionalProperties: false,
                required: ['id', 'type', 'timestamp', 'data'],
                properties: {
                  id: { ...uuid, description: 'The event\'s id (a UUIDv7: ids sort in the order events were recorded), as in `webhook-id`.' },
                  type: { type: 'string', const: type },
                  timestamp: { ...dateTime, description: 'When the service recorded the change: the same for every change one batch of tracking events made.' },
                  data: EVENT_DATA[type].data,
                },
              },
            },
          },
        },
        responses: {
          '2XX': { description: 'Received: the delivery succeeded.' },
          '410': { description: 'Gone: the webhook is deactivated and gets no more deliveries.' },
          default: { description: 'Any other answer, or none within the timeout, is tried again on the retry schedule (WEBHOOK_RETRY_SCHEDULE).' },
        },
      },
    },
  ]),
);

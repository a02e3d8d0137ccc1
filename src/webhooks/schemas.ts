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
  required: ['id', 'eventId', 'type', 'status', 'attempts', 'nextAttemptAt', 'createdAt'],
  properties: {
    id: uuid,
    eventId: { ...uuid, description: 'The event id: the `webhook-id` header and the body\'s `id`, the same on every attempt.' },
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

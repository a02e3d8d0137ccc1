import { CARRIERS } from '../carriers/index.ts';
import { LABEL_FORMATS, LABEL_SIZES } from '../render/index.ts';
import { dateTime, EXAMPLE_ID, uuid } from '../http/schemas.ts';

export const LABEL_STATUSES = ['active', 'invalidated'] as const;

const format = { type: 'string', enum: [...LABEL_FORMATS], description: 'Output format (upper case).' } as const;
const size = { type: 'string', enum: [...LABEL_SIZES], description: 'Label size in inches, `<width>x<height>`.' } as const;

export const labelSchema = {
  $id: 'Label',
  type: 'object',
  required: ['id', 'shipmentId', 'format', 'size', 'url', 'createdAt', 'expiresAt', 'trackingNumber', 'carrier', 'status'],
  properties: {
    id: uuid,
    shipmentId: uuid,
    format,
    size,
    url: { type: 'string', format: 'uri', description: 'Signed download link for `format`; needs no other credential; valid until expiresAt.' },
    createdAt: dateTime,
    expiresAt: { ...dateTime, description: 'createdAt + 24 hours: the end of download validity.' },
    trackingNumber: { type: 'string', description: 'The carrier tracking number, without spaces.' },
    carrier: { type: 'string', enum: [...CARRIERS] },
    status: { type: 'string', enum: [...LABEL_STATUSES] },
    documents: {
      type: 'array',
      description: 'A shipment with customs: its declaration (`cn22` up to 300 SDR, `cn23` above) and, for merchandise, samples and returned goods, a `commercial_invoice`; PDFs behind signed links like the label\'s (same expiry, gone when the label is invalidated).',
      items: {
        type: 'object',
        required: ['type', 'url'],
        properties: { type: { type: 'string', enum: ['cn22', 'cn23', 'commercial_invoice'] }, url: { type: 'string', format: 'uri' } },
      },
    },
  },
} as const;

export const createLabelBody = {
  type: 'object',
  examples: [{ shipmentId: EXAMPLE_ID, format: 'PDF', size: '4x6' }],
  additionalProperties: false,
  required: ['shipmentId'],
  properties: {
    shipmentId: { ...uuid, description: 'The shipment to label; at most one active label per shipment.' },
    format: { ...format, default: 'PDF' },
    size: { ...size, default: '4x6' },
  },
} as const;

export const labelFormatQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { format: { ...format, default: 'PDF' } },
} as const;

// Loose on purpose: a link changed in any character must answer 403, not a 400 from validation.
export const labelDownloadParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', maxLength: 100 } },
} as const;

export const labelDownloadQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['format', 'expires', 'sig'],
  properties: {
    format: { type: 'string', maxLength: 20, description: 'The format the link was signed for.' },
    expires: { type: 'string', maxLength: 20, description: 'Expiry of the link, Unix seconds.' },
    sig: { type: 'string', maxLength: 100, description: 'HMAC-SHA256 over label id, format and expiry, base64url.' },
    dpi: { type: 'integer', enum: [203, 300], default: 203, description: 'Resolution of raster formats and ZPL.' },
  },
} as const;

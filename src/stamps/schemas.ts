import { dateTime, EXAMPLE_ID, uuid } from '../http/schemas.ts';
import { CARRIERS } from '../carriers/services.ts';
import { SERIAL_PATTERN } from './indicium.ts';
import { STAMP_FORMATS, STAMP_STATUSES } from './service.ts';

export const MAX_BATCH = 100;

export const stampSchema = {
  $id: 'Stamp',
  type: 'object',
  required: ['id', 'shipmentId', 'carrier', 'format', 'url', 'createdAt', 'expiresAt', 'status', 'serial', 'indicium'],
  properties: {
    id: uuid,
    shipmentId: uuid,
    carrier: { type: 'string', enum: [...CARRIERS] },
    format: { type: 'string', enum: [...STAMP_FORMATS] },
    url: { type: 'string', format: 'uri', description: 'Signed download link, valid until expiresAt; needs no other credential.' },
    createdAt: dateTime,
    expiresAt: { ...dateTime, description: 'createdAt + 24 hours.' },
    status: { type: 'string', enum: [...STAMP_STATUSES], description: '`expired` once expiresAt has passed, `invalidated` after PUT /stamps/{id}/invalid.' },
    serial: { type: 'string', pattern: SERIAL_PATTERN, description: 'ST-<issuer code of the account>-<running number>; unique, increasing per account, never reused.' },
    indicium: { type: 'string', description: 'The compact JWS (ES256, `typ` indicium+jwt) printed in the DataMatrix; verify it with the JWKS or POST /stamps/verify.' },
  },
} as const;

export const createStampBody = {
  type: 'object',
  examples: [{ shipmentId: EXAMPLE_ID, format: 'PNG' }],
  additionalProperties: false,
  required: ['shipmentId'],
  properties: {
    shipmentId: uuid,
    format: { type: 'string', enum: [...STAMP_FORMATS], default: 'PDF' },
  },
} as const;

export const stampFormatQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { format: { type: 'string', enum: [...STAMP_FORMATS] } },
} as const;

export const invalidQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['ids'],
  // OpenAPI serialisation of every parameter of this query: `ids=a,b,c` (@fastify/swagger copies these).
  style: 'form',
  explode: false,
  properties: {
    ids: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH,
      items: uuid,
      description: `Ids of further stamps to invalidate together with the path id, joined by commas (form style, explode false): \`ids=a,b,c\`. At most ${MAX_BATCH}. All are invalidated or none.`,
    },
  },
} as const;

export const verifyBody = {
  type: 'object',
  examples: [{ indicium: 'eyJhbGciOiJFUzI1NiIsImtpZCI6IjAxOTM2ZjVlIn0.eyJzbiI6IlNULTAwMDEtMDAwMDAxIn0.c2lnbmF0dXJl' }],
  additionalProperties: false,
  required: ['indicium'],
  properties: { indicium: { type: 'string', maxLength: 4096, description: 'The text decoded from the stamp\'s DataMatrix.' } },
} as const;

export const verificationSchema = {
  type: 'object',
  required: ['genuine', 'status', 'stampId'],
  properties: {
    genuine: { type: 'boolean', description: 'Signed by one of this service\'s stamp keys (current or rotated) and naming a stamp it issued.' },
    status: { type: ['string', 'null'], enum: [...STAMP_STATUSES, null], description: 'The stamp\'s current state; null when not genuine.' },
    stampId: { ...uuid, type: ['string', 'null'], description: 'null when not genuine.' },
  },
} as const;

export const downloadParams = { type: 'object', required: ['id'], properties: { id: uuid }, additionalProperties: false } as const;

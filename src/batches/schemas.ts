import { dateTime, uuid } from '../http/schemas.ts';
import { LABEL_FORMATS, LABEL_SIZES } from '../render/index.ts';
import { PRINT_CONTENTS, PRINT_LAYOUTS } from '../render/layouts/sheet.ts';
import { createShipmentBody } from '../shipments/service.ts';
import { BATCH_NAME_MAX, MAX_BATCH_ITEMS, MAX_COPIES } from './service.ts';

const EXAMPLE_ID = '0195f3a0-7c4e-7d2a-9b1e-3f5a6c7d8e9f';
const { examples: _examples, ...shipmentBody } = createShipmentBody;

const error = {
  type: ['object', 'null'],
  required: ['code', 'message'],
  properties: { code: { type: 'string' }, message: { type: 'string' } },
  description: 'Why the item failed (null when it succeeded or is not done yet).',
} as const;

const batchProperties = {
  id: uuid,
  name: { type: ['string', 'null'], description: 'What the batch was named when it was made (the dashboard: the uploaded file\'s name), or null.' },
  status: { type: 'string', enum: ['processing', 'completed'] },
  format: { type: 'string', enum: [...LABEL_FORMATS] },
  size: { type: 'string', enum: [...LABEL_SIZES] },
  counts: {
    type: 'object',
    required: ['total', 'succeeded', 'failed'],
    properties: { total: { type: 'integer' }, succeeded: { type: 'integer' }, failed: { type: 'integer' } },
  },
  createdAt: dateTime,
  completedAt: { anyOf: [dateTime, { type: 'null' }], description: 'Null until every item is done.' },
} as const;

export const batchSchema = {
  $id: 'Batch',
  type: 'object',
  required: ['id', 'name', 'status', 'format', 'size', 'counts', 'createdAt', 'completedAt'],
  properties: batchProperties,
} as const;

export const batchWithItemsSchema = {
  $id: 'BatchWithItems',
  type: 'object',
  required: [...batchSchema.required, 'items'],
  properties: {
    ...batchProperties,
    items: {
      type: 'array',
      description: 'In item order. `labelId` and `trackingNumber` are null until the item succeeds; `error` is set when it failed.',
      items: {
        type: 'object',
        required: ['index', 'shipmentId', 'labelId', 'trackingNumber', 'error'],
        properties: {
          index: { type: 'integer' },
          shipmentId: { anyOf: [uuid, { type: 'null' }] },
          labelId: { anyOf: [uuid, { type: 'null' }] },
          trackingNumber: { type: ['string', 'null'] },
          error,
        },
      },
    },
  },
} as const;

export const createBatchBody = {
  type: 'object',
  examples: [{ items: [{ shipmentId: EXAMPLE_ID }, { shipment: createShipmentBody.examples[0] }], format: 'ZPL', size: '4x6', name: 'morning-orders.csv' }],
  additionalProperties: false,
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_BATCH_ITEMS,
      description: `1 to ${MAX_BATCH_ITEMS} items, each a shipment to label: an existing one (\`shipmentId\`) or a new one (\`shipment\`, the body of \`POST /v1/shipments\`).`,
      items: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        maxProperties: 1,
        properties: {
          shipmentId: uuid,
          shipment: shipmentBody,
        },
      },
    },
    format: { type: 'string', enum: [...LABEL_FORMATS], default: 'PDF' },
    size: { type: 'string', enum: [...LABEL_SIZES], default: '4x6' },
    name: { type: 'string', maxLength: BATCH_NAME_MAX, description: `A name to tell the batch by (\`morning-orders.csv\`), up to ${BATCH_NAME_MAX} characters, trimmed (blank: none).` },
  },
} as const;

export const printFileSchema = {
  $id: 'PrintFile',
  type: 'object',
  required: ['id', 'contents', 'format', 'layout', 'labelCount', 'pageCount', 'copies', 'url', 'expiresAt'],
  properties: {
    id: uuid,
    contents: { type: 'string', enum: [...PRINT_CONTENTS] },
    format: { type: 'string', enum: ['PDF', 'ZPL'] },
    layout: { type: 'string', enum: [...PRINT_LAYOUTS] },
    labelCount: { type: 'integer', description: 'The labels printed; for `customs`, the labels whose customs papers are printed.' },
    pageCount: { type: 'integer', description: 'Pages of the PDF; for ZPL, label formats (one `^XA…^XZ` per label).' },
    copies: { type: 'integer', description: 'How many times each parcel\'s customs papers are printed (1 for labels).' },
    url: { type: 'string', format: 'uri', description: 'Signed link, valid until expiresAt; needs no other credential.' },
    expiresAt: dateTime,
  },
} as const;

export const createPrintFileBody = {
  type: 'object',
  examples: [{ batchId: EXAMPLE_ID, format: 'PDF', layout: 'letter-2up', start: 2 }, { batchId: EXAMPLE_ID, contents: 'customs', copies: 2 }],
  additionalProperties: false,
  properties: {
    batchId: { ...uuid, description: 'Print the batch\'s succeeded labels that are still active, in item order, once the batch is completed.' },
    labelIds: { type: 'array', minItems: 1, maxItems: MAX_BATCH_ITEMS, uniqueItems: true, items: uuid, description: 'Or print these labels, in this order, each once (a label printed twice is two labels for one parcel).' },
    contents: {
      type: 'string',
      enum: [...PRINT_CONTENTS],
      default: 'labels',
      description: '`labels`: the labels; `customs`: the customs papers (the CN22 or CN23, and the commercial invoice when there is one) of those labels that have them (a label has them when its shipment carries `customs`), in the same order, as A4 pages of a PDF (format PDF, layout label); labels without customs papers are left out, and none at all is 422 `NOTHING_TO_PRINT`.',
    },
    copies: { type: 'integer', minimum: 1, maximum: MAX_COPIES, default: 1, description: `For \`customs\`: each parcel's papers this many times (1 to ${MAX_COPIES}), a parcel's set after set (declaration, invoice, declaration, invoice), for carriers that ask for several copies; must be 1 for labels.` },
    format: { type: 'string', enum: ['PDF', 'ZPL'], default: 'PDF' },
    layout: {
      type: 'string',
      enum: [...PRINT_LAYOUTS],
      default: 'label',
      description: '`label`: one label per page at its own size; `letter-2up`: two 4x6 labels per US Letter sheet; `a4-4up`: four A6 labels per A4 sheet. ZPL is always `label`.',
    },
    start: { type: 'integer', minimum: 1, maximum: 4, default: 1, description: 'Position of the first label on the first sheet (1 to 2 for letter-2up, 1 to 4 for a4-4up), for a sheet whose first labels are used.' },
  },
} as const;

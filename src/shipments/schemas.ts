import { CARRIERS, SERVICES, returnServices, servicesByRoute } from '../carriers/services.ts';
import { CONTENTS_TYPES } from '../carriers/customs.ts';
import { COUNTRY_CODE_PATTERN, EEI_PATTERN, EORI_PATTERN, IOSS_PATTERN, CURRENCY_CODE_PATTERN, HS_CODE_PATTERN, dateTime, text, uuid } from '../http/schemas.ts';

const weightSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['value', 'unit'],
  properties: { value: { type: 'number', exclusiveMinimum: 0, maximum: 100000 }, unit: { type: 'string', enum: ['g', 'kg', 'oz', 'lb'] } },
} as const;

/** §12: what is in a parcel that crosses a customs border, as the UPU forms and a commercial invoice ask. */
export const customsSchema = {
  $id: 'Customs',
  type: 'object',
  additionalProperties: false,
  required: ['contentsType', 'items', 'signer'],
  description: 'Required when `from` and `to` are in different customs territories (different countries, except two members of the EU customs union); accepted and kept otherwise.',
  properties: {
    contentsType: { type: 'string', enum: [...CONTENTS_TYPES] },
    contentsExplanation: { ...text(100, 1), description: 'Required when contentsType is `other`.' },
    items: {
      type: 'array',
      minItems: 1,
      maxItems: 50,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['description', 'quantity', 'netWeight', 'value', 'hsCode', 'originCountry'],
        properties: {
          description: text(60, 1),
          quantity: { type: 'integer', minimum: 1, maximum: 100000 },
          netWeight: { ...weightSchema, description: 'The whole line\'s net weight (all of its quantity).' },
          value: {
            type: 'object',
            additionalProperties: false,
            required: ['amount', 'currency'],
            description: 'The whole line\'s value (all of its quantity). Every item of a declaration has the same currency.',
            properties: { amount: { type: 'number', exclusiveMinimum: 0, maximum: 1e9 }, currency: { type: 'string', pattern: CURRENCY_CODE_PATTERN, description: 'ISO 4217, e.g. USD, EUR.' } },
          },
          hsCode: { type: 'string', pattern: HS_CODE_PATTERN, description: 'Harmonized System tariff number, 6 to 10 digits.' },
          originCountry: { type: 'string', pattern: COUNTRY_CODE_PATTERN, description: 'ISO 3166-1 alpha-2 country of origin.' },
        },
      },
    },
    incoterm: { type: 'string', enum: ['DAP', 'DDP'], description: 'Who pays duties: DAP (the addressee, the default) or DDP (the sender).' },
    nonDelivery: { type: 'string', enum: ['return', 'abandon'], description: 'What the post does with an undeliverable parcel (default return).' },
    invoiceNumber: text(35, 1),
    licenceNumber: text(35, 1),
    certificateNumber: text(35, 1),
    importerVat: text(35, 1),
    eori: { type: 'string', pattern: EORI_PATTERN, description: "The sender's EORI number: its country's code and up to 15 letters or digits, e.g. DE123456789012345." },
    ioss: { type: 'string', pattern: IOSS_PATTERN, description: "The seller's EU Import One-Stop Shop number (IM and 10 digits), for goods of at most 150 EUR sold to a buyer in the EU: printed on the declaration and the invoice, so the goods clear without VAT to pay on arrival." },
    eelPfc: {
      type: 'string',
      pattern: EEI_PATTERN,
      description:
        'Goods leaving the United States (15 CFR 30): the Electronic Export Information filed in AES, as `AES` and its ITN (`AES X20261129123456`), required when the items of one HS code are worth more than 2,500 USD (declarations in USD; to Canada none is needed); or the exemption that needs none (`NOEEI 30.37(a)`, printed when this is left out; `NOEEI 30.36` to Canada). Printed on the declaration and the invoice. Refused on other shipments.',
    },
    signer: { ...text(100, 1), description: 'The declarant\'s name, printed as the signature.' },
  },
} as const;

/** §10: up to three lines printed on the label in every format. */
const messagesSchema = {
  type: 'array',
  maxItems: 3,
  items: text(35, 1),
  description: 'Up to three lines of at most 35 printable characters, printed on the label in every format (e.g. "Fragile", a gift note).',
} as const;


export const parcelSchema = {
  $id: 'Parcel',
  type: 'object',
  additionalProperties: false,
  required: ['weight'],
  properties: {
    weight: weightSchema,
    length: { type: 'number', exclusiveMinimum: 0, maximum: 10000 },
    width: { type: 'number', exclusiveMinimum: 0, maximum: 10000 },
    height: { type: 'number', exclusiveMinimum: 0, maximum: 10000 },
    dimensionUnit: { type: 'string', enum: ['cm', 'in'] },
  },
} as const;

export const shipmentStatuses = ['created', 'pre_transit', 'in_transit', 'out_for_delivery', 'delivered', 'exception', 'returned'] as const;

export const createShipmentBody = {
  type: 'object',
  examples: [
    {
      carrier: 'UPS',
      service: 'worldwide_saver',
      from: { name: 'Jürgen Müller', street1: 'Hauptstraße 5', city: 'Berlin', postalCode: '10115', country: 'DE' },
      to: { name: 'Ada Lovelace', street1: '350 Fifth Avenue', city: 'New York', state: 'NY', postalCode: '10118', country: 'US' },
      parcel: { weight: { value: 1.2, unit: 'kg' } },
      reference: 'Order #1001',
      customs: {
        contentsType: 'merchandise',
        signer: 'Jürgen Müller',
        items: [{ description: 'Ceramic mug', quantity: 2, netWeight: { value: 0.8, unit: 'kg' }, value: { amount: 40, currency: 'EUR' }, hsCode: '691200', originCountry: 'DE' }],
      },
    },
  ],
  additionalProperties: false,
  required: ['carrier', 'service', 'from', 'to', 'parcel'],
  properties: {
    carrier: { type: 'string', enum: [...CARRIERS] },
    service: {
      type: 'string',
      enum: [...new Set(CARRIERS.flatMap((c) => SERVICES[c].map((s) => s.code)))],
      description: `One of the carrier's services, where it runs. ${servicesByRoute()}. A return service (${CARRIERS.flatMap((c) => returnServices(c).map((v) => `${c} ${v}`)).join(', ')}) carries returns only, made with POST /v1/shipments/{id}/returns. Another carrier's service is 400, and so is one that does not run from \`from\` to \`to\` (a place told apart by its postal code, such as the Canary Islands, counts as a country; only USPS serves APO, FPO and DPO addresses).`,
      // The same per carrier, for tools (JSON Schema if/then would say it too, but linters and generators read it poorly).
      'x-services-by-carrier': Object.fromEntries(CARRIERS.map((c) => [c, SERVICES[c].map((s) => s.code)])),
    },
    from: { $ref: 'Address#' },
    to: { $ref: 'Address#' },
    parcel: { $ref: 'Parcel#' },
    reference: { ...text(100), description: 'Free text printed on the label.' },
    messages: messagesSchema,
    customs: { $ref: 'Customs#' },
  },
} as const;

export const shipmentSchema = {
  $id: 'Shipment',
  type: 'object',
  required: ['id', 'carrier', 'service', 'from', 'to', 'parcel', 'status', 'createdAt', 'updatedAt'],
  properties: {
    id: uuid,
    carrier: { type: 'string', enum: [...CARRIERS] },
    service: { type: 'string' },
    from: { $ref: 'Address#' },
    to: { $ref: 'Address#' },
    parcel: { $ref: 'Parcel#' },
    reference: { type: 'string' },
    messages: { type: 'array', items: { type: 'string' } },
    customs: { $ref: 'Customs#' },
    returnOf: { ...uuid, description: 'The shipment this one returns.' },
    status: { type: 'string', enum: [...shipmentStatuses] },
    label: {
      type: 'object',
      required: ['id', 'trackingNumber', 'carrier'],
      properties: { id: uuid, trackingNumber: { type: 'string' }, carrier: { type: 'string' } },
    },
    createdAt: dateTime,
    updatedAt: dateTime,
  },
} as const;

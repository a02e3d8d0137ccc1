import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { addressSchema, COUNTRY_CODE_ANY_CASE_PATTERN, errors } from '../http/schemas.ts';
import type { Address } from '../carriers/types.ts';
import { validateAddress } from './service.ts';
import { loadZipCodes } from './zip.ts';
import { australianPostcodes } from './postal-regions.ts';

export const MAX_ADDRESSES_PER_VALIDATION = 250;

const messageSchema = {
  type: 'object',
  required: ['type', 'code', 'field', 'message'],
  properties: {
    type: { type: 'string', enum: ['error', 'warning', 'info'] },
    code: {
      type: 'string',
      enum: ['country_invalid', 'postal_code_invalid', 'postal_code_state_mismatch', 'state_required', 'state_invalid', 'city_invalid', 'text_unprintable', 'city_changed', 'standardized', 'street_unchecked'],
    },
    field: { type: ['string', 'null'], description: 'The field of the address it is about (null: the address as a whole).' },
    message: { type: 'string' },
  },
} as const;

/**
 * An address to check: a shipment's, except that its country code may come in either case and with
 * spaces around it, which the answer's `matched` corrects (contract §16).
 */
export const addressToValidateSchema = {
  ...addressSchema,
  $id: 'AddressToValidate',
  properties: {
    ...addressSchema.properties,
    country: { type: 'string', pattern: COUNTRY_CODE_ANY_CASE_PATTERN, description: 'ISO 3166-1 alpha-2 code, e.g. US, DE; in either case (`matched` gives it in capitals).' },
  },
} as const;

export const addressValidationSchema = {
  $id: 'AddressValidation',
  type: 'object',
  required: ['status', 'original', 'matched', 'messages'],
  properties: {
    status: {
      type: 'string',
      enum: ['verified', 'warning', 'error'],
      description: '`verified`: every check passes and only spelling was standardised; `warning`: the checks pass but content was changed (a city corrected to its ZIP code\'s) or could not be checked; `error`: a check fails.',
    },
    original: { $ref: 'AddressToValidate#' },
    matched: { anyOf: [{ $ref: 'Address#' }, { type: 'null' }], description: 'The standardised address (USPS Publication 28 for the US); null on error.' },
    messages: { type: 'array', items: messageSchema },
  },
} as const;

export const addressSchemas = [addressToValidateSchema, addressValidationSchema];

export function addressRoutes(app: FastifyInstance, _ctx: AppContext): void {
  // Every address the API takes is checked: the ZIP code and postcode tables are loaded before the first request.
  loadZipCodes();
  australianPostcodes();
  app.post<{ Body: { addresses: Address[] } }>('/addresses/validate', {
    config: { scope: 'read:shipments' },
    schema: {
      tags: ['addresses'],
      operationId: 'validateAddresses',
      summary: 'Check and standardise addresses',
      description: `1 to ${MAX_ADDRESSES_PER_VALIDATION} addresses; answers one result per address, in order. A malformed element is 400 naming its index (\`addresses[7].postalCode\`). Nothing is stored.`,
      body: {
        type: 'object',
        examples: [{ addresses: [{ name: 'The White House', street1: '1600 pennsylvania avenue northwest', city: 'washington', state: 'dc', postalCode: '20500', country: 'US' }] }],
        additionalProperties: false,
        required: ['addresses'],
        properties: { addresses: { type: 'array', minItems: 1, maxItems: MAX_ADDRESSES_PER_VALIDATION, items: { $ref: 'AddressToValidate#' } } },
      },
      response: { 200: { type: 'array', items: { $ref: 'AddressValidation#' } }, ...errors(400, 401, 403, 413, 415, 422) },
    },
    handler: async (request) => request.body.addresses.map(validateAddress),
  });
}

// JSON Schemas shared by every route: the error body, ids, times.
import { UUID_PATTERN } from '../db/ids.ts';

/** The content type of JSON answers sent as text the route composed itself. */
export const JSON_UTF8 = 'application/json; charset=utf-8';

export const errorSchema = {
  $id: 'Error',
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: {
      type: 'string',
      enum: ['INVALID_INPUT', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'GONE', 'PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'IDEMPOTENCY_KEY_REUSED', 'NOTHING_TO_PRINT', 'NOTHING_TO_MANIFEST', 'MIXED_SENDERS', 'RATE_LIMITED', 'INTERNAL', 'UNAVAILABLE'],
      description: 'Machine-readable error code: INVALID_INPUT 400, UNAUTHORIZED 401, FORBIDDEN 403, NOT_FOUND 404, CONFLICT 409, GONE 410, PAYLOAD_TOO_LARGE 413, UNSUPPORTED_MEDIA_TYPE 415, IDEMPOTENCY_KEY_REUSED, NOTHING_TO_PRINT, NOTHING_TO_MANIFEST and MIXED_SENDERS (a manifest\'s waiting labels sent from more than one place) 422, RATE_LIMITED 429, INTERNAL 500, UNAVAILABLE 503.',
    },
    message: { type: 'string', description: 'What went wrong, for a person.' },
    details: {
      type: 'array',
      items: { type: 'object', required: ['field', 'message'], properties: { field: { type: 'string' }, message: { type: 'string' } } },
    },
  },
} as const;

/** An id for the document's examples (a uuidv7, like every id the service makes). */
export const EXAMPLE_ID = '01936f5e-8a2b-7c3d-9e4f-5a6b7c8d9e0f';

export const uuid = { type: 'string', format: 'uuid', pattern: UUID_PATTERN } as const;

/** The control characters (C0, DEL, C1) as a character-class range: refused in every string the service takes. */
export const CONTROL = '\\u0000-\\u001f\\u007f-\\u009f';
/**
 * Characters that print nothing on their own: combining marks, the soft hyphen, zero-width spaces and
 * marks, line and paragraph separators, bidi controls, word joiners, fillers, variation selectors,
 * interlinear annotation marks, the BOM.
 */
const INVISIBLE = '\\u00ad\\u0300-\\u036f\\u061c\\u115f\\u1160\\u17b4\\u17b5\\u180b-\\u180f\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\u3164\\ufe00-\\ufe0f\\ufeff\\uffa0\\ufff9-\\ufffb';
/** Printable text: no control characters (they would corrupt ZPL and confuse printers). */
export const PRINTABLE_PATTERN = `^[^${CONTROL}]*$`;
/** Printable text that prints something: besides no control characters, at least one character that is not a space or invisible. */
export const VISIBLE_PATTERN = `^[^${CONTROL}]*[^${CONTROL}\\s${INVISIBLE}][^${CONTROL}]*$`;

/** Codes the schemas take, each worded for a client by src/http/errors.ts when a value is not one. */
export const COUNTRY_CODE_PATTERN = '^[A-Z]{2}$';
/** A country code as an address to check may give it: either case, spaces around it (the check's answer corrects both). */
export const COUNTRY_CODE_ANY_CASE_PATTERN = '^ *[A-Za-z]{2} *$';
export const CURRENCY_CODE_PATTERN = '^[A-Z]{3}$';
export const HS_CODE_PATTERN = '^[0-9]{6,10}$';
export const POSTAL_CODE_PATTERN = '^ *[A-Za-z0-9][A-Za-z0-9 -]*$';
export const PHONE_PATTERN = '^[0-9+()./ -]*$';
export const IOSS_PATTERN = '^IM[0-9]{10}$';
export const EORI_PATTERN = '^[A-Z]{2}[A-Z0-9]{1,15}$';
/** A US export's EEI citation (15 CFR 30): an AES filing's ITN, or the exemption that needs none. */
export const EEI_PATTERN = '^(AES X[0-9]{14}|NOEEI 30\\.[0-9]{2}(\\([a-z0-9]{1,3}\\))*)$';
/** The e-mail addresses an address may carry (the document states this pattern, not a format). */
export const EMAIL_PATTERN = "^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$";

export const dateTime = { type: 'string', format: 'date-time' } as const;

/** Printable text; a required one must print something (not only spaces or invisible characters). */
export const text = (maxLength: number, minLength = 0) => ({ type: 'string', minLength, maxLength, pattern: minLength > 0 ? VISIBLE_PATTERN : PRINTABLE_PATTERN }) as const;

/** An address as shipments take it (and returns, and the address check, which forgives the country code's case). */
export const addressSchema = {
  $id: 'Address',
  type: 'object',
  additionalProperties: false,
  // postalCode may be left out only for a country without postal codes (src/addresses/service.ts).
  required: ['name', 'street1', 'city', 'country'],
  properties: {
    name: { ...text(100, 1), description: 'Person or company to deliver to; UTF-8.' },
    company: text(100),
    street1: text(100, 1),
    street2: text(100),
    city: text(60, 1),
    state: { ...text(40), description: 'Required for US, CA and AU: the ISO 3166-2 subdivision code without the country prefix (NY, DC, PR, ON, NSW; for the US also AA, AE, AP).' },
    postalCode: {
      type: 'string',
      minLength: 2,
      maxLength: 16,
      pattern: POSTAL_CODE_PATTERN,
      description: "In the format the country's post uses (US 12345 or 12345-6789, DE 12345, GB SW1A 2AA, CA K1A 0B1, JP 100-0005, …), case and spacing forgiven; a US ZIP code must exist and lie in `state`. Left out only for a country without postal codes (any value of the pattern is then kept as sent).",
    },
    country: { type: 'string', pattern: COUNTRY_CODE_PATTERN, description: 'ISO 3166-1 alpha-2 code, e.g. US, DE.' },
    phone: { type: 'string', maxLength: 30, pattern: PHONE_PATTERN },
    email: {
      type: 'string',
      maxLength: 254,
      // Exactly what is taken, rather than `format: email`, whose meaning differs between validators.
      pattern: EMAIL_PATTERN,
      description: 'A mailbox at a domain of two or more labels, e.g. ada@example.org: ASCII letters, digits and !#$%&\'*+/=?^_`{|}~.- before the @; labels of letters, digits and inner hyphens after it.',
    },
  },
} as const;
export const idParams = { type: 'object', required: ['id'], properties: { id: uuid }, additionalProperties: false } as const;

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid input',
  401: 'Missing or bad credentials',
  403: 'Missing scope or bad signature',
  404: 'Not found',
  409: 'Conflict with the current state',
  410: 'Gone',
  413: 'Body too large',
  415: 'Unsupported content type',
  422: 'Unprocessable: an idempotency key reused with another request, or nothing to act on (see code)',
  429: 'Rate limited',
  500: 'A failure of the service (INTERNAL): it is logged under the request id in X-Request-Id; nothing more is said',
  503: 'The database is unavailable or did not answer within DATABASE_TIMEOUT_MS: send the request again after Retry-After',
};

/** The error responses of a route, by status. Authenticated routes always have 401 and 403. */
export function errors(...statuses: number[]): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  for (const s of statuses) out[s] = { description: STATUS_TEXT[s] ?? 'Error', $ref: 'Error#' };
  return out;
}


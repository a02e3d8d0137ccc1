// Download links that need no other credential (a printer or a browser fetches them): HMAC-SHA256
// over the resource kind, id, format and expiry, with the service's URL key from the database.
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { Forbidden } from '../errors.ts';

export type LinkKind = 'labels' | 'stamps' | 'print-files' | 'label-documents' | 'manifests';

// An HMAC keyed with a raw Buffer imports the key on every call (several times the cost of the MAC).
const keyObjects = new WeakMap<Buffer, KeyObject>();

function mac(key: Buffer, kind: LinkKind, id: string, format: string, expires: number): Buffer {
  let keyObject = keyObjects.get(key);
  if (!keyObject) {
    keyObject = createSecretKey(key);
    keyObjects.set(key, keyObject);
  }
  return createHmac('sha256', keyObject).update(`${kind}\n${id}\n${format}\n${expires}`).digest();
}

/** `{base_url}/downloads/{kind}/{id}?format=…&expires=…&sig=…`; `expires` is Unix seconds. */
export function signedLink(key: Buffer, baseUrl: string, kind: LinkKind, id: string, format: string, expiresAt: string): string {
  const expires = Math.floor(Date.parse(expiresAt) / 1000);
  const sig = mac(key, kind, id, format, expires).toString('base64url');
  return `${baseUrl}/downloads/${kind}/${id}?format=${encodeURIComponent(format)}&expires=${expires}&sig=${sig}`;
}

/** True when the signature matches exactly these values (expiry is checked separately). */
export function linkSignatureValid(key: Buffer, kind: LinkKind, id: string, format: string, expires: number, sig: string): boolean {
  const expected = mac(key, kind, id, format, expires);
  const given = Buffer.from(sig, 'base64url');
  // Node's decoder ignores stray characters and the unused low bits of the last one; only the
  // canonical encoding counts, so no changed character is ever accepted.
  if (given.toString('base64url') !== sig) return false;
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The query string schema every download route shares. */
export const downloadQuery = {
  type: 'object',
  additionalProperties: false,
  required: ['format', 'expires', 'sig'],
  properties: {
    format: { type: 'string', maxLength: 10 },
    expires: { type: 'string', maxLength: 20 },
    sig: { type: 'string', maxLength: 100 },
    dpi: { type: 'integer', enum: [203, 300], default: 203 },
  },
} as const;

/**
 * Checks a signed link's expiry (only the canonical decimal form: `0123` cannot stand in for `123`)
 * and signature; 403 when either was changed or the link is another's. Returns the expiry in Unix
 * seconds; whether it has passed is the caller's to say (410), beside its own record's expiry.
 */
export function verifiedLinkExpiry(key: Buffer, kind: LinkKind, req: { id: string; format: string; expires: string; sig: string }): number {
  const expires = /^[0-9]{1,15}$/.test(req.expires) ? Number(req.expires) : NaN;
  if (!Number.isSafeInteger(expires) || String(expires) !== req.expires || !linkSignatureValid(key, kind, req.id, req.format, expires, req.sig)) {
    throw new Forbidden('the download link is not valid: it was changed or not issued by this service');
  }
  return expires;
}

/**
 * When a link stops working: its record's expiry. The link's `expires` is that time rounded down to
 * whole seconds, so the link counts up to a second past it, and the record's millisecond decides.
 */
export function linkDeadline(expires: number, expiresAt: string): number {
  return Math.min(Date.parse(expiresAt), (expires + 1) * 1000);
}

/** The `Cache-Control` of a download whose link works until `until` (ms since the epoch). */
export function cacheableUntil(until: number, now: number): string {
  return `private, max-age=${Math.max(0, Math.floor((until - now) / 1000))}`;
}

/** The query of a signed download link of `what`, for the OpenAPI document and validation. */
export function signedLinkQuery(what: string, formats: string) {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['format', 'expires', 'sig'],
    properties: {
      format: { type: 'string', maxLength: 20, description: `The format the link was signed for: ${formats}.` },
      expires: { type: 'string', maxLength: 20, description: 'Expiry of the link, Unix seconds.' },
      sig: { type: 'string', maxLength: 100, description: `HMAC-SHA256 over ${what} id, format and expiry, base64url.` },
    },
  } as const;
}

// Download links that need no other credential (a printer or a browser fetches them): HMAC-SHA256
// over the resource kind, id, format and expiry, with the service's URL key from the database.
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

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
    expires: { type: 'integer', minimum: 0 },
    sig: { type: 'string', maxLength: 100 },
    dpi: { type: 'integer', enum: [203, 300], default: 203 },
  },
} as const;

// Standard Webhooks headers and signatures. A `whsec_<base64>` secret signs with the decoded bytes,
// any other secret with its UTF-8 bytes. The official `standardwebhooks` package checks the secret and
// defines the signature; each delivery is then signed with node:crypto's HMAC, several times faster
// than the package's JavaScript SHA-256 (docs/decisions.md). Every signer proves on creation that it
// signs exactly as the package does, and the tests verify deliveries with the package's `verify`.
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export interface Signer {
  /** `v1,<base64 HMAC-SHA256 of "msgId.timestamp.payload">`, as Webhook.sign. */
  sign(msgId: string, timestamp: Date, payload: string): string;
}

const PREFIX = 'whsec_';

function hmacSignature(key: KeyObject, msgId: string, timestamp: Date, payload: string): string {
  return `v1,${createHmac('sha256', key).update(`${msgId}.${Math.floor(timestamp.getTime() / 1000)}.${payload}`).digest('base64')}`;
}

export function signerFor(secret: string): Signer {
  // Throws as the package does for a secret it cannot use.
  const reference = secret.startsWith(PREFIX) ? new Webhook(secret) : new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
  // A KeyObject, made once: createHmac with raw key bytes imports them on every call (about 6× the cost).
  const key = createSecretKey(secret.startsWith(PREFIX) ? Buffer.from(secret.slice(PREFIX.length), 'base64') : Buffer.from(secret, 'utf8'));
  const probe: [string, Date, string] = ['msg_probe', new Date(1_700_000_000_000), '{"probe":"é"}'];
  if (hmacSignature(key, ...probe) !== reference.sign(...probe)) throw new Error('the secret decodes differently here than in standardwebhooks');
  return { sign: (msgId, timestamp, payload) => hmacSignature(key, msgId, timestamp, payload) };
}

/** Why a secret cannot sign, or null when it can. */
export function secretProblem(secret: string): string | null {
  try {
    signerFor(secret);
    return null;
  } catch {
    return 'a secret starting with whsec_ must continue with non-empty standard base64';
  }
}

/** `webhook-id`, `webhook-timestamp` (Unix seconds) and, with a secret, `webhook-signature: v1,<base64>`. */
export function webhookHeaders(eventId: string, body: string, signer: Signer | null, now = Date.now()): Record<string, string> {
  const seconds = Math.floor(now / 1000);
  const headers: Record<string, string> = { 'webhook-id': eventId, 'webhook-timestamp': String(seconds) };
  if (signer) headers['webhook-signature'] = signer.sign(eventId, new Date(seconds * 1000), body);
  return headers;
}

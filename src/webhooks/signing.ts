// Standard Webhooks headers and signatures, signed by the official `standardwebhooks` package so that
// its `Webhook.verify` accepts every delivery. A `whsec_<base64>` secret signs with the decoded bytes,
// any other secret with its UTF-8 bytes.
import { Webhook } from 'standardwebhooks';

export type Signer = Pick<Webhook, 'sign'>;

export function signerFor(secret: string): Signer {
  return secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' });
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

// Webhook signing secrets at rest: AES-256-GCM under a service key kept in service_secrets, with the
// webhook's id as associated data so a sealed secret cannot be moved to another webhook's row.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Db } from '../db/index.ts';
import { serviceSecret } from '../auth/keyring.ts';

const KEY_NAME = 'webhook_secret_encryption';
const keyCache = new WeakMap<Db, Promise<Buffer>>();

/** The service key that seals webhook secrets (cached per database handle). */
export function secretKey(db: Db): Promise<Buffer> {
  let key = keyCache.get(db);
  if (!key) {
    key = serviceSecret(db, KEY_NAME);
    key.catch(() => keyCache.delete(db));
    keyCache.set(db, key);
  }
  return key;
}

/** `v1.<iv>.<ciphertext+tag>`, base64url. */
export function sealSecret(key: Buffer, webhookId: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(webhookId));
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `v1.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
}

export function openSecret(key: Buffer, webhookId: string, sealed: string): string {
  const [version, ivText, bodyText] = sealed.split('.');
  if (version !== 'v1' || !ivText || bodyText === undefined) throw new Error('unknown sealed secret format');
  const body = Buffer.from(bodyText, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(ivText, 'base64url'));
  decipher.setAAD(Buffer.from(webhookId));
  decipher.setAuthTag(body.subarray(body.length - 16));
  return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
}

// The service's own asymmetric signing keys, kept in the database so every process agrees.
import { exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';
import { randomBytes } from 'node:crypto';
import type { Db } from '../db/index.ts';
import { isoNow, uuidv7 } from '../db/ids.ts';

export type KeyPurpose = 'access_token' | 'stamp';
export const SIGNING_ALG = 'ES256';

/**
 * How old the ring's copy of the keys may be when it signs: a key rotated elsewhere (the admin
 * command, another process) signs here too within this time.
 */
export const SIGNING_KEYS_FRESH_MS = 5_000;

interface LoadedKey {
  kid: string;
  purpose: KeyPurpose;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  publicJwk: JWK;
  retired: boolean;
  /** When it stopped signing (ms since the epoch), for a retired key. */
  retiredAt: number | null;
  createdAt: string;
}

export class KeyRing {
  readonly #db: Db;
  #keys = new Map<string, LoadedKey>();
  #lastReload = 0;
  #reloading: Promise<void> | undefined;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Makes sure a key exists for every purpose, then loads them all. */
  async init(): Promise<void> {
    for (const purpose of ['access_token', 'stamp'] as const) {
      const existing = await this.#db.selectFrom('signing_keys').select('kid').where('purpose', '=', purpose).where('retired_at', 'is', null).executeTakeFirst();
      if (!existing) await this.#insertKey(purpose);
    }
    await this.reload();
  }

  async #insertKey(purpose: KeyPurpose): Promise<string> {
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const kid = uuidv7();
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG };
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: SIGNING_ALG, use: 'sig' };
    await this.#db
      .insertInto('signing_keys')
      .values({ kid, purpose, alg: SIGNING_ALG, private_jwk: JSON.stringify(privateJwk), public_jwk: JSON.stringify(publicJwk), created_at: isoNow(), retired_at: null })
      .execute();
    return kid;
  }

  /** One reload for everyone who asks while it runs, so a slower one never replaces a newer map. */
  #reloadOnce(): Promise<void> {
    this.#reloading ??= this.reload().finally(() => {
      this.#reloading = undefined;
    });
    return this.#reloading;
  }

  /** Starts signing with a new key; the old one stays published so what it signed still verifies. */
  async rotate(purpose: KeyPurpose): Promise<string> {
    const kid = await this.#insertKey(purpose);
    await this.#db.updateTable('signing_keys').set({ retired_at: isoNow() }).where('purpose', '=', purpose).where('kid', '!=', kid).where('retired_at', 'is', null).execute();
    await this.reload();
    return kid;
  }

  async reload(): Promise<void> {
    const rows = await this.#db.selectFrom('signing_keys').selectAll().orderBy('created_at').orderBy('kid').execute();
    const keys = new Map<string, LoadedKey>();
    for (const row of rows) {
      const cached = this.#keys.get(row.kid);
      if (cached) {
        keys.set(row.kid, { ...cached, retired: row.retired_at !== null, retiredAt: row.retired_at ? Date.parse(row.retired_at) : null });
        continue;
      }
      keys.set(row.kid, {
        kid: row.kid,
        purpose: row.purpose as KeyPurpose,
        privateKey: (await importJWK(JSON.parse(row.private_jwk), row.alg)) as CryptoKey,
        publicKey: (await importJWK(JSON.parse(row.public_jwk), row.alg)) as CryptoKey,
        publicJwk: JSON.parse(row.public_jwk),
        retired: row.retired_at !== null,
        retiredAt: row.retired_at ? Date.parse(row.retired_at) : null,
        createdAt: row.created_at,
      });
    }
    this.#keys = keys;
    this.#lastReload = Date.now();
  }

  /**
   * The key that signs now: the oldest unretired key of the purpose, so racing processes agree. The
   * ring is read again first when it is older than SIGNING_KEYS_FRESH_MS (one read for all who wait).
   */
  async signingKey(purpose: KeyPurpose): Promise<{ kid: string; privateKey: CryptoKey }> {
    if (Date.now() - this.#lastReload > SIGNING_KEYS_FRESH_MS) await this.#reloadOnce();
    for (const key of this.#keys.values()) {
      if (key.purpose === purpose && !key.retired) return key;
    }
    throw new Error(`no signing key for ${purpose}; call init() first`);
  }

  /**
   * A public key by id, reloading once from the database when another process added it. With
   * `retiredForMs`, a key retired longer ago than that no longer verifies (access tokens: nothing it
   * signed can still be valid, so a leaked retired key is worthless).
   */
  async publicKey(kid: string, purpose: KeyPurpose, retiredForMs?: number): Promise<CryptoKey | null> {
    let key = this.#keys.get(kid);
    // Unknown ids trigger at most one reload a second, so forged tokens cannot hammer the database.
    if (!key && Date.now() - this.#lastReload > 1000) {
      await this.#reloadOnce();
      key = this.#keys.get(kid);
    }
    if (!key || key.purpose !== purpose) return null;
    if (retiredForMs !== undefined && key.retiredAt !== null && Date.now() - key.retiredAt > retiredForMs) return null;
    return key.publicKey;
  }

  /** The private JWK of a key (the ring keeps only non-extractable WebCrypto keys), for signers that need raw key material. */
  async privateJwk(kid: string, purpose: KeyPurpose): Promise<JWK | undefined> {
    const row = await this.#db.selectFrom('signing_keys').select('private_jwk').where('kid', '=', kid).where('purpose', '=', purpose).executeTakeFirst();
    return row ? (JSON.parse(row.private_jwk) as JWK) : undefined;
  }

  jwks(): { keys: JWK[] } {
    return { keys: [...this.#keys.values()].map((k) => ({ ...k.publicJwk, key_ops: ['verify'] })) };
  }
}

/** A named random secret (HMAC keys), created once and shared by every process through the database. */
export async function serviceSecret(db: Db, name: string): Promise<Buffer> {
  await db
    .insertInto('service_secrets')
    .values({ name, value: randomBytes(32).toString('base64'), created_at: isoNow() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('service_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64');
}

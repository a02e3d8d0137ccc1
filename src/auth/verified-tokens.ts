// Verifying an ES256 signature costs far more than the rest of a request, and a client sends the same
// access token for up to its whole lifetime. A successful verification is remembered under the token's
// exact text until the token's `exp`: the same bytes always verify the same way (signing keys stay
// published after rotation), so the answer cannot change before then. Failures are never remembered.
import { decodeJwt } from 'jose';
import { createCache, type Cache } from '../cache.ts';
import type { KeyRing } from './keyring.ts';
import { verifyAccessToken, type TokenCheck, type TokenSettings } from './tokens.ts';

const DEFAULT_MAX_ENTRIES = 10_000;

export class VerifiedTokens {
  readonly #keys: KeyRing;
  readonly #settings: TokenSettings;
  readonly #entries: Cache<string, TokenCheck>;

  constructor(keys: KeyRing, settings: TokenSettings, maxEntries = DEFAULT_MAX_ENTRIES) {
    this.#keys = keys;
    this.#settings = settings;
    this.#entries = createCache({ max: maxEntries });
  }

  /** A verification remembered for exactly this token and not yet expired, without any work. */
  cached(token: string): TokenCheck | undefined {
    return this.#entries.get(token);
  }

  async verify(token: string): Promise<TokenCheck> {
    const hit = this.cached(token);
    if (hit) return hit;
    const check = await verifyAccessToken(this.#keys, this.#settings, token);
    if (check.ok) {
      const { exp } = decodeJwt(token);
      const ttl = typeof exp === 'number' ? exp * 1000 - Date.now() : 0;
      if (ttl > 0) this.#entries.set(token, check, ttl);
    }
    return check;
  }
}

// Every in-process cache of the service, over one well-kept LRU (lru-cache). Each is bounded in
// entries (and optionally bytes or lifetime), and `CACHES=0` turns them all off at once: every look-up
// then misses and nothing is kept, which is how to check that an answer does not depend on a cache.
import { LRUCache } from 'lru-cache';

let enabled = true;

/** Turns every cache on or off (the CACHES setting): off, every look-up misses and nothing is kept. */
export function setCachesEnabled(on: boolean): void {
  enabled = on;
}

export function cachesEnabled(): boolean {
  return enabled;
}

export interface CacheOptions<K, V> {
  /** Entries kept at most; the least recently used go first. */
  max: number;
  /** Lifetime of an entry in milliseconds (each entry may be given its own on `set`). */
  ttlMs?: number;
  /** Drop expired entries by a timer even when nobody asks (for entries that must not outlive their lifetime). */
  purgeExpired?: boolean;
  /** A bound on the sum of `sizeOf` over the entries. */
  maxSize?: number;
  sizeOf?: (value: V, key: K) => number;
  /** Milliseconds from some fixed point, for lifetimes; `performance.now()`, read at each use, unless a test gives its own. */
  clock?: () => number;
}

export interface Cache<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V, ttlMs?: number): void;
  delete(key: K): void;
  clear(): void;
  readonly size: number;
  /** The sum of `sizeOf` over the entries (0 without it). */
  readonly calculatedSize: number;
}

export function createCache<K extends {}, V extends {}>(options: CacheOptions<K, V>): Cache<K, V> {
  const lru = new LRUCache<K, V>({
    max: options.max,
    ...(options.ttlMs !== undefined ? { ttl: options.ttlMs } : {}),
    ...(options.purgeExpired ? { ttlAutopurge: true } : {}),
    // Read the clock at every use (no resolution window kept by a timer), so a test can move it.
    perf: { now: options.clock ?? (() => performance.now()) },
    ttlResolution: 0,
    ...(options.maxSize !== undefined ? { maxSize: options.maxSize, sizeCalculation: options.sizeOf ?? (() => 1) } : {}),
  });
  return {
    get: (key) => (enabled ? lru.get(key) : undefined),
    set: (key, value, ttlMs) => {
      if (enabled) lru.set(key, value, ttlMs !== undefined ? { ttl: ttlMs } : undefined);
    },
    delete: (key) => {
      lru.delete(key);
    },
    clear: () => lru.clear(),
    get size() {
      return lru.size;
    },
    get calculatedSize() {
      return lru.calculatedSize;
    },
  };
}

import { randomBytes } from 'node:crypto';

let lastMs = 0;
let counter = 0;

// Randomness is drawn in blocks (one randomBytes call per 256 ids): per id it cost more than the rest of uuidv7.
const POOL_BYTES = 16 * 256;
let pool = Buffer.alloc(0);
let poolOffset = 0;
function random16(): Buffer {
  if (poolOffset + 16 > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolOffset = 0;
  }
  poolOffset += 16;
  return pool.subarray(poolOffset - 16, poolOffset);
}

/** A UUID version 7 (RFC 9562): 48-bit Unix milliseconds, then randomness; sorts by creation time. */
export function uuidv7(now = Date.now()): string {
  // Within one millisecond, a 12-bit counter in rand_a keeps ids from one process strictly increasing.
  if (now <= lastMs) {
    now = lastMs;
    counter++;
    if (counter > 0xfff) {
      now = ++lastMs;
      counter = 0;
    }
  } else {
    lastMs = now;
    counter = 0;
  }
  const b = random16();
  b.writeUIntBE(now, 0, 6);
  b[6] = 0x70 | (counter >> 8);
  b[7] = counter & 0xff;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
const uuidRe = new RegExp(UUID_PATTERN);
export function isUuid(value: string): boolean {
  return uuidRe.test(value);
}

/** RFC 3339 UTC with milliseconds, the one time format stored and returned everywhere. */
export function isoNow(now = Date.now()): string {
  return new Date(now).toISOString();
}

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

/** The smallest uuidv7 of a millisecond: every id made from then on sorts after it. */
export function firstIdAt(ms: number): string {
  const h = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-0000-0000-000000000000`;
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

/**
 * An id as this service writes it: a UUID in lower case. Ids are compared as text, so an id in
 * capitals is refused (400) rather than answered 404 as if it did not exist.
 */
export const UUID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
const uuidRe = new RegExp(UUID_PATTERN);
export function isUuid(value: string): boolean {
  return uuidRe.test(value);
}

/** RFC 3339 UTC with milliseconds, the one time format stored and returned everywhere. */
export function isoNow(now = Date.now()): string {
  return new Date(now).toISOString();
}

const FIRST_STORABLE_MS = new Date('0000-01-01T00:00:00.000Z').getTime();
const LAST_STORABLE_MS = new Date('9999-12-31T23:59:59.999Z').getTime();

/** A bound of a query in the stored form (which sorts as text): a time beyond the years 0000 to 9999 is their first or last moment. */
export function storedBound(ms: number): string {
  return isoNow(Math.min(Math.max(ms, FIRST_STORABLE_MS), LAST_STORABLE_MS));
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** A `+hh:mm` offset written unencoded in a query string, which form decoding turned into a space. */
const PLUS_AS_SPACE = /^(\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(?:\.\d+)?) (\d\d:\d\d)$/;

/**
 * A date-time sent in a query string as it was meant: `…T10:00:00+02:00` sent without encoding its `+`
 * arrives as `…T10:00:00 02:00` (a `+` in a query means a space). Anything else is returned as it is.
 */
export function plusRestored(text: string): string {
  return text.replace(PLUS_AS_SPACE, '$1+$2');
}

/**
 * Milliseconds since the epoch of an RFC 3339 date-time with an offset, or null if it is not one. A
 * leap second (`:60`) is refused. With its offset it may fall outside the years 0000 to 9999 in UTC,
 * which the stored form cannot hold: see `storedBound`.
 */
export function parseRfc3339(text: string): number | null {
  const m = RFC3339.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, '0')) : 0;
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate() - (month === 2 && !isLeap(year) ? 1 : 0);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 59) return null;
  let offset = 0;
  if (m[8]) {
    const oh = Number(m[9]);
    const om = Number(m[10]);
    if (oh > 23 || om > 59) return null;
    offset = (m[8] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, ms);
  return d.getTime() - offset * 60_000;
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

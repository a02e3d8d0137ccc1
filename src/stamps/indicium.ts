// The indicium: a compact JWS (a JWT with short claim names, so the DataMatrix stays small) signed
// with the service's stamp key. Anyone holding the published JWKS can verify it offline.
import { createPrivateKey, sign, type JsonWebKey, type KeyObject } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { hasLowS, lowS } from '../auth/ecdsa.ts';
import type { KeyRing } from '../auth/keyring.ts';
import { SIGNING_ALG } from '../auth/keyring.ts';
import { CARRIERS } from '../carriers/services.ts';
import { isUuid } from '../db/ids.ts';

/** Explicit typing (RFC 8725 §3.11): an access token from the same JWKS is never taken for a stamp. */
export const INDICIUM_TYP = 'indicium+jwt';
export const SERIAL_PATTERN = '^ST-[0-9]{4,}-[0-9]{6,}$';
const serialRe = new RegExp(SERIAL_PATTERN);
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export interface Indicium {
  /** Stamp id. */
  jti: string;
  /** Serial number as printed. */
  sn: string;
  /** Shipment id. */
  sub: string;
  /** Carrier, spelled as in the API (UPS, USPS, FedEx, DHL). */
  car: string;
  /** Origin postal code. */
  org: string;
  /** Destination postal code. */
  dst: string;
  /** Issue time, Unix seconds. */
  iat: number;
}

/** A stamp key ready to sign: its id, and the private key as a node:crypto KeyObject. */
export interface IndiciumSigner {
  kid: string;
  key: KeyObject;
}

export function indiciumSigner(kid: string, privateJwk: JsonWebKey): IndiciumSigner {
  return { kid, key: createPrivateKey({ key: privateJwk, format: 'jwk' }) };
}

function b64url(value: object): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/**
 * An ECDSA P-256 signature in DER (SEQUENCE { INTEGER r, INTEGER s }) as JWS wants it (RFC 7518
 * §3.4): r and s as 32 big-endian bytes each. node:crypto's own `dsaEncoding: 'ieee-p1363'` costs
 * twice the signature itself. A P-256 DER signature is at most 72 bytes: every length is one byte.
 */
export function derToJose(der: Buffer): Buffer {
  const out = Buffer.alloc(64);
  let offset = 2;
  for (let half = 0; half < 2; half++) {
    const length = der[offset + 1]!;
    let integer = der.subarray(offset + 2, offset + 2 + length);
    offset += 2 + length;
    // DER adds a zero byte when the top bit is set and drops leading zeros: undo the one, pad the other.
    while (integer.length > 32 && integer[0] === 0) integer = integer.subarray(1);
    integer.copy(out, half * 32 + 32 - integer.length);
  }
  return out;
}

/**
 * Signs synchronously with node:crypto (RFC 7515 compact serialisation, ES256): creation signs
 * inside the transaction that holds the serial, and WebCrypto's trip to the thread pool would keep
 * SQLite's writer connection busy meanwhile. Verification uses jose.
 */
export function signIndicium(signer: IndiciumSigner, claims: Indicium): string {
  const { jti, sn, sub, car, org, dst, iat } = claims;
  const input = `${b64url({ alg: SIGNING_ALG, kid: signer.kid, typ: INDICIUM_TYP })}.${b64url({ jti, sn, sub, car, org, dst, iat })}`;
  const signature = lowS(derToJose(sign('sha256', Buffer.from(input), signer.key)));
  return `${input}.${signature.toString('base64url')}`;
}

function postalCode(v: unknown): v is string {
  return typeof v === 'string' && v.length >= 1 && v.length <= 16;
}

function wellFormed(p: Record<string, unknown>): p is Record<string, unknown> & Indicium {
  return (
    typeof p.jti === 'string' && isUuid(p.jti) &&
    typeof p.sub === 'string' && isUuid(p.sub) &&
    typeof p.sn === 'string' && serialRe.test(p.sn) &&
    typeof p.car === 'string' && (CARRIERS as readonly string[]).includes(p.car) &&
    postalCode(p.org) && postalCode(p.dst) &&
    typeof p.iat === 'number' && Number.isSafeInteger(p.iat) && p.iat > 0
  );
}

/**
 * The claims of an indicium that one of our stamp keys (current or rotated) signed, or null for
 * anything else: malformed text, an unknown or non-stamp kid, a bad signature, unexpected claims.
 */
export async function verifyIndicium(keys: KeyRing, token: string): Promise<Indicium | null> {
  if (token.length > 4096 || !COMPACT_JWS.test(token)) return null;
  // The signature covers the header and payload text, not the signature's own encoding: reject
  // non-canonical base64url so that no other spelling of a genuine indicium verifies.
  const signature = token.slice(token.lastIndexOf('.') + 1);
  if (Buffer.from(signature, 'base64url').toString('base64url') !== signature) return null;
  // Nor the other valid form of the same ECDSA signature (high S).
  if (!hasLowS(token)) return null;
  try {
    const header = decodeProtectedHeader(token);
    if (header.alg !== SIGNING_ALG || header.typ !== INDICIUM_TYP || typeof header.kid !== 'string' || header.kid.length > 100) return null;
    const key = await keys.publicKey(header.kid, 'stamp');
    if (!key) return null;
    const { payload } = await jwtVerify(token, key, { algorithms: [SIGNING_ALG], typ: INDICIUM_TYP });
    return wellFormed(payload) ? { jti: payload.jti, sn: payload.sn, sub: payload.sub, car: payload.car, org: payload.org, dst: payload.dst, iat: payload.iat } : null;
  } catch {
    return null;
  }
}

/** The claims of an indicium we issued ourselves (stored), without verifying it again. */
export function readIndicium(token: string): Indicium {
  const payload = token.split('.')[1]!;
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Indicium;
}

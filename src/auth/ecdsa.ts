// ECDSA signatures have two valid forms, (r, s) and (r, n − s): anyone can turn one into the other
// without the key. The service signs only the low form (s ≤ n/2) and accepts only that form, so a
// token or an indicium has exactly one valid spelling (no malleability).

/** The order of the P-256 group. */
const P256_N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const HALF_N = P256_N >> 1n;

function toBigInt(bytes: Uint8Array): bigint {
  return BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
}

function toBytes(value: bigint): Buffer {
  return Buffer.from(value.toString(16).padStart(64, '0'), 'hex');
}

/** Whether a JWS ES256 signature (r ‖ s, 64 bytes) is in the low form. */
export function isLowS(signature: Uint8Array): boolean {
  return signature.length === 64 && toBigInt(signature.subarray(32)) <= HALF_N;
}

/** The low form of a JWS ES256 signature (r ‖ s). */
export function lowS(signature: Uint8Array): Buffer {
  const s = toBigInt(signature.subarray(32));
  if (s <= HALF_N) return Buffer.from(signature);
  return Buffer.concat([Buffer.from(signature.subarray(0, 32)), toBytes(P256_N - s)]);
}

/** A compact JWS with its signature in the low form. */
export function withLowS(jws: string): string {
  const dot = jws.lastIndexOf('.');
  return `${jws.slice(0, dot)}.${lowS(Buffer.from(jws.slice(dot + 1), 'base64url')).toString('base64url')}`;
}

/** Whether a compact JWS's ES256 signature is in the low form. */
export function hasLowS(jws: string): boolean {
  return isLowS(Buffer.from(jws.slice(jws.lastIndexOf('.') + 1), 'base64url'));
}

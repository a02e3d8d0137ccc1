// The indicium's signing, which is written by hand on node:crypto for speed, checked against jose
// and node:crypto's own encoding over many random signatures (a short r or s comes every ~128 tries).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign, verify } from 'node:crypto';
import fc from 'fast-check';
import { compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import { derToJose, indiciumSigner, readIndicium, signIndicium, type Indicium } from '../../src/stamps/indicium.ts';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signer = indiciumSigner('key-1', privateKey.export({ format: 'jwk' }));

const claims: fc.Arbitrary<Indicium> = fc.record({
  jti: fc.uuid(),
  sn: fc.tuple(fc.integer({ min: 1, max: 99999 }), fc.integer({ min: 1, max: 9999999 })).map(([a, b]) => `ST-${String(a).padStart(4, '0')}-${String(b).padStart(6, '0')}`),
  sub: fc.uuid(),
  car: fc.constantFrom('UPS', 'USPS', 'FedEx', 'DHL'),
  org: fc.string({ minLength: 1, maxLength: 16 }),
  dst: fc.string({ minLength: 1, maxLength: 16 }),
  iat: fc.integer({ min: 1, max: 2 ** 40 }),
});

describe('signIndicium', () => {
  it('produces compact JWS that jose verifies, with the claims and header given', async () => {
    const key = await importJWK(publicKey.export({ format: 'jwk' }), 'ES256');
    await fc.assert(
      fc.asyncProperty(claims, async (c) => {
        const token = signIndicium(signer, c);
        const { payload, protectedHeader } = await compactVerify(token, key, { algorithms: ['ES256'] });
        assert.deepEqual(protectedHeader, { alg: 'ES256', kid: 'key-1', typ: 'indicium+jwt' });
        assert.deepEqual(JSON.parse(new TextDecoder().decode(payload)), { ...c });
        assert.deepEqual(readIndicium(token), { ...c });
        assert.equal(decodeProtectedHeader(token).kid, 'key-1');
      }),
      { numRuns: 300 },
    );
  });

  it('turns every DER signature into the r||s that node:crypto verifies as ieee-p1363, short r and s included', () => {
    let short = 0;
    for (let i = 0; i < 3000; i++) {
      const data = Buffer.from(`message ${i}`);
      const der = sign('sha256', data, privateKey);
      const rLength = der[3]!;
      const sLength = der[4 + rLength + 1]!;
      if (rLength < 32 || sLength < 32) short++;
      const raw = derToJose(der);
      assert.equal(raw.length, 64);
      assert.ok(verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, raw), `signature ${i} (${der.toString('hex')})`);
    }
    assert.ok(short > 0, 'no short r or s was met; raise the number of signatures');
  });
});

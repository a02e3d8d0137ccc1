// The printed stamp: its DataMatrix, read back with a real scanner from every format, carries an
// indicium that verifies with `jose` against nothing but the published JWKS.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { compactVerify, createLocalJWKSet, decodeProtectedHeader, type JSONWebKeySet } from 'jose';
import { forEachDatabase, startTestApp, type TestApp } from '../helpers.ts';
import { createStamp, dataMatrices, decodePdf, decodeZpl, fetchLink } from './support.ts';

const run = promisify(execFile);

async function pdfText(pdf: Buffer): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'stamp-text-'));
  try {
    await writeFile(join(dir, 'in.pdf'), pdf);
    return (await run('pdftotext', ['-layout', join(dir, 'in.pdf'), '-'])).stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

forEachDatabase((database) => {
  let t: TestApp;
  let jwks: ReturnType<typeof createLocalJWKSet>;
  before(async () => {
    t = await startTestApp(database);
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    assert.equal(res.statusCode, 200);
    jwks = createLocalJWKSet(res.json() as JSONWebKeySet);
  });
  after(async () => t.close());

  /** Verifies offline, the way any third party would: only the published keys. */
  async function claimsOf(indicium: string): Promise<Record<string, unknown>> {
    const { payload, protectedHeader } = await compactVerify(indicium, jwks, { algorithms: ['ES256'] });
    assert.equal(protectedHeader.typ, 'indicium+jwt');
    return JSON.parse(new TextDecoder().decode(payload));
  }

  function assertClaimsMatch(claims: Record<string, unknown>, stamp: Record<string, any>): void {
    assert.deepEqual(claims, {
      jti: stamp.id,
      sn: stamp.serial,
      sub: stamp.shipmentId,
      car: 'UPS',
      org: '10115',
      dst: '10118',
      iat: Math.floor(Date.parse(stamp.createdAt) / 1000),
    });
  }

  describe('the DataMatrix of a stamp', () => {
    it('in the PNG decodes to the indicium, which verifies against the JWKS and names this stamp', async () => {
      const stamp = await createStamp(t, { format: 'PNG' });
      const res = await fetchLink(t, stamp.url);
      assert.equal(res.statusCode, 200);
      const decoded = await dataMatrices(res.rawPayload);
      assert.deepEqual(decoded, [stamp.indicium]);
      assertClaimsMatch(await claimsOf(decoded[0]!), stamp);
      const header = decodeProtectedHeader(decoded[0]!);
      assert.equal(header.alg, 'ES256');
      assert.equal(typeof header.kid, 'string');
    });

    it('in the PNG at 300 dpi decodes too', async () => {
      const stamp = await createStamp(t, { format: 'PNG' });
      const res = await fetchLink(t, `${stamp.url}&dpi=300`);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(await dataMatrices(res.rawPayload), [stamp.indicium]);
    });

    it('in the PDF, rasterised by poppler, decodes to the indicium; the page shows POSTAGE PAID without an amount, carrier, date, origin and serial', async () => {
      const stamp = await createStamp(t, { format: 'PDF' });
      const res = await fetchLink(t, stamp.url);
      assert.equal(res.statusCode, 200);
      const decoded = await decodePdf(res.rawPayload, 300);
      assert.deepEqual(decoded, [stamp.indicium]);
      assertClaimsMatch(await claimsOf(decoded[0]!), stamp);
      const text = await pdfText(res.rawPayload);
      for (const shown of ['POSTAGE PAID', 'UPS', stamp.createdAt.slice(0, 10), '10115', stamp.serial]) assert.ok(text.includes(shown), `${shown} missing from ${text}`);
      assert.doesNotMatch(text, /[$€£¥]|\d+[.,]\d\d\b/);
    });

    it('in the ZPL, printed by an independent renderer, decodes to the indicium', async () => {
      const stamp = await createStamp(t, { format: 'ZPL' });
      const res = await fetchLink(t, stamp.url);
      assert.equal(res.statusCode, 200);
      const decoded = await decodeZpl(res.body);
      assert.deepEqual(decoded, [stamp.indicium]);
      assertClaimsMatch(await claimsOf(decoded[0]!), stamp);
    });

    it('still verifies against the JWKS after the stamp key is rotated, beside stamps signed with the new key', async () => {
      const old = await createStamp(t, { format: 'PNG' });
      const oldKid = decodeProtectedHeader(old.indicium).kid;
      await t.ctx.keys.rotate('stamp');
      const fresh = await createStamp(t, { format: 'PNG' });
      assert.notEqual(decodeProtectedHeader(fresh.indicium).kid, oldKid);
      const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
      const rotated = createLocalJWKSet(res.json() as JSONWebKeySet);
      for (const s of [old, fresh]) {
        const png = (await fetchLink(t, s.url)).rawPayload;
        const [decoded] = await dataMatrices(png);
        const { payload } = await compactVerify(decoded!, rotated, { algorithms: ['ES256'] });
        assert.equal(JSON.parse(new TextDecoder().decode(payload)).jti, s.id);
      }
    });
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import sharp from 'sharp';
import { createShipment, forEachDatabase, sampleShipment, type TestApp, withTestApp } from '../helpers.ts';
import { signedLink } from '../../src/http/signed-links.ts';
import { LABEL_FORMATS, mediaTypeOf } from '../../src/render/index.ts';
import { rasterizePdf, scan } from '../render/scan.ts';

async function createLabel(t: TestApp, shipmentId: string, extra: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId, ...extra } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** Fetches a download link the way a printer would: no credentials at all. */
function fetchLink(t: TestApp, url: string, headers: Record<string, string> = {}) {
  const u = new URL(url);
  return t.app.inject({ method: 'GET', url: u.pathname + u.search, headers });
}

async function labelUrl(t: TestApp, labelId: string, format: string): Promise<string> {
  return (await t.request({ method: 'GET', url: `/v1/labels/${labelId}?format=${format}` })).json().url;
}

/** The link with one character of one part replaced (parts: id in the path, then the query values). */
function tampered(url: string, part: 'id' | 'format' | 'expires' | 'sig', at: number, replacement: string): string {
  const u = new URL(url);
  const parts = {
    id: u.pathname.split('/').pop()!,
    format: u.searchParams.get('format')!,
    expires: u.searchParams.get('expires')!,
    sig: u.searchParams.get('sig')!,
  };
  const value = parts[part];
  parts[part] = value.slice(0, at) + replacement + value.slice(at + 1);
  const q = (['format', 'expires', 'sig'] as const).map((k) => `${k}=${encodeURIComponent(parts[k])}`).join('&');
  return `${u.origin}/v1/downloads/labels/${encodeURIComponent(parts.id)}?${q}`;
}

forEachDatabase((database) => {
  const t = withTestApp(database);

  describe('GET /v1/downloads/labels/{id} (the signed url)', () => {
    it('answers the document with its real media type, an inline file name with the tracking number, private caching until expiry and an ETag — with no credential', async () => {
      const s = await createShipment(t);
      const label = await createLabel(t, s.id);
      const expected: Record<string, { type: string; ext: string; magic: (b: Buffer) => boolean }> = {
        PDF: { type: 'application/pdf', ext: 'pdf', magic: (b) => b.subarray(0, 5).toString() === '%PDF-' },
        PNG: { type: 'image/png', ext: 'png', magic: (b) => b.subarray(1, 4).toString() === 'PNG' },
        ZPL: { type: 'application/zpl', ext: 'zpl', magic: (b) => b.toString().startsWith('^XA') && b.toString().includes('^CI28') },
        SVG: { type: 'image/svg+xml', ext: 'svg', magic: (b) => b.toString().includes('<svg') },
      };
      for (const format of LABEL_FORMATS) {
        const res = await fetchLink(t, await labelUrl(t, label.id, format));
        assert.equal(res.statusCode, 200, `${format}: ${res.body.slice(0, 200)}`);
        assert.equal(res.headers['content-type'], mediaTypeOf(format));
        const want = expected[format];
        if (want) {
          assert.equal(res.headers['content-type'], want.type);
          assert.equal(res.headers['content-disposition'], `inline; filename="label-${label.trackingNumber}.${want.ext}"`);
          assert.ok(want.magic(res.rawPayload), `${format} body looks like ${format}`);
        }
        const maxAge = Number(/^private, max-age=(\d+)$/.exec(String(res.headers['cache-control']))?.[1]);
        assert.ok(maxAge > 86000 && maxAge <= 86400, `cache-control ${res.headers['cache-control']}`);
        assert.match(String(res.headers.etag), /^"[A-Za-z0-9_-]+"$/);
        assert.equal(res.headers['x-content-type-options'], 'nosniff');
      }
    });

    it('renders the same document again for the same link (deterministic), and answers 304 to If-None-Match', async () => {
      const s = await createShipment(t);
      const label = await createLabel(t, s.id, { format: 'PNG' });
      const a = await fetchLink(t, label.url);
      const b = await fetchLink(t, label.url);
      assert.ok(a.rawPayload.equals(b.rawPayload));
      assert.equal(a.headers.etag, b.headers.etag);
      const cached = await fetchLink(t, label.url, { 'if-none-match': String(a.headers.etag) });
      assert.equal(cached.statusCode, 304);
      assert.equal(cached.body, '');
      // RFC 9110 §13.1.2: `*` matches any current representation; a list matches by any member, weakly.
      assert.equal((await fetchLink(t, label.url, { 'if-none-match': '*' })).statusCode, 304);
      assert.equal((await fetchLink(t, label.url, { 'if-none-match': `"other", W/${a.headers.etag}` })).statusCode, 304);
      assert.equal((await fetchLink(t, label.url, { 'if-none-match': '"other"' })).statusCode, 200);
      const pdf = await fetchLink(t, await labelUrl(t, label.id, 'PDF'));
      assert.notEqual(pdf.headers.etag, a.headers.etag);
    });

    it('accepts dpi=300 for raster formats (a larger image) and rejects other resolutions with 400', async () => {
      const s = await createShipment(t);
      const label = await createLabel(t, s.id, { format: 'PNG' });
      const normal = await fetchLink(t, label.url);
      const fine = await fetchLink(t, `${label.url}&dpi=300`);
      assert.equal(fine.statusCode, 200);
      assert.equal(fine.headers['content-type'], 'image/png');
      const [m203, m300] = await Promise.all([sharp(normal.rawPayload).metadata(), sharp(fine.rawPayload).metadata()]);
      assert.equal(m203.width, 4 * 203);
      assert.equal(m203.height, 6 * 203);
      assert.equal(m300.width, 4 * 300);
      assert.equal(m300.height, 6 * 300);
      const odd = await fetchLink(t, `${label.url}&dpi=150`);
      assert.equal(odd.statusCode, 400);
      assert.equal(odd.json().code, 'INVALID_INPUT');
      assert.notEqual(fine.headers.etag, normal.headers.etag);
      // A vector format is the same document at 300 dpi: the same bytes under the same ETag, drawn once.
      const pdfUrl = await labelUrl(t, label.id, 'PDF');
      const pdf = await fetchLink(t, pdfUrl);
      const pdf300 = await fetchLink(t, `${pdfUrl}&dpi=300`);
      assert.equal(pdf300.statusCode, 200);
      assert.equal(pdf300.headers.etag, pdf.headers.etag);
      assert.ok(pdf300.rawPayload.equals(pdf.rawPayload));
      assert.equal((await fetchLink(t, `${pdfUrl}&dpi=300`, { 'if-none-match': String(pdf.headers.etag) })).statusCode, 304);
    });

    it('answers 403 FORBIDDEN to a link changed in any single character of id, format, expiry or signature (property)', async () => {
      const s = await createShipment(t);
      const label = await createLabel(t, s.id);
      assert.equal((await fetchLink(t, label.url)).statusCode, 200);
      const alphabet = [...'0123456789abcdefABCDEFxyzXYZ-_.~+/= é%'];
      // Every position of every part, exhaustively with one replacement, then random replacements.
      const u = new URL(label.url);
      const parts = { id: u.pathname.split('/').pop()!, format: 'PDF', expires: u.searchParams.get('expires')!, sig: u.searchParams.get('sig')! };
      for (const part of ['id', 'format', 'expires', 'sig'] as const) {
        for (let at = 0; at < parts[part].length; at++) {
          const original = parts[part][at]!;
          const replacement = original === '0' ? '1' : original === 'A' ? 'B' : /[0-9]/.test(original) ? '0' : 'A';
          const res = await fetchLink(t, tampered(label.url, part, at, replacement));
          assert.equal(res.statusCode, 403, `${part}[${at}] ${original}→${replacement}: ${res.body}`);
          assert.equal(res.json().code, 'FORBIDDEN');
        }
      }
      await fc.assert(
        fc.asyncProperty(fc.constantFrom('id', 'format', 'expires', 'sig') as fc.Arbitrary<keyof typeof parts>, fc.nat(), fc.constantFrom(...alphabet), async (part, n, replacement) => {
          const at = n % parts[part].length;
          fc.pre(parts[part][at] !== replacement);
          const res = await fetchLink(t, tampered(label.url, part, at, replacement));
          assert.equal(res.statusCode, 403, `${part}[${at}]→${replacement}: ${res.body}`);
          assert.deepEqual(Object.keys(res.json()).sort(), ['code', 'message']);
          assert.equal(res.json().code, 'FORBIDDEN');
        }),
        { numRuns: 150 },
      );
    });

    it('answers 403 to a link of another format than it was signed for, and to one signed with another key', async () => {
      const s = await createShipment(t);
      const label = await createLabel(t, s.id);
      const swapped = label.url.replace('format=PDF', 'format=PNG');
      assert.equal((await fetchLink(t, swapped)).statusCode, 403);
      const foreign = signedLink(randomBytes(32), 'http://localhost:8080/v1', 'labels', label.id, 'PDF', label.expiresAt);
      const res = await fetchLink(t, foreign);
      assert.equal(res.statusCode, 403);
      assert.equal(res.json().code, 'FORBIDDEN');
      const leadingZero = label.url.replace(/expires=(\d+)/, 'expires=0$1');
      assert.equal((await fetchLink(t, leadingZero)).statusCode, 403);
      const noSig = label.url.replace(/&sig=[^&]+/, '&sig=');
      assert.equal((await fetchLink(t, noSig)).statusCode, 403);
    });

    it('answers 410 GONE after invalidation, for every format', async () => {
      const s = await createShipment(t);
      const label = await createLabel(t, s.id);
      const png = await labelUrl(t, label.id, 'PNG');
      assert.equal((await t.request({ method: 'PUT', url: `/v1/labels/${label.id}/invalidate` })).statusCode, 204);
      for (const url of [label.url, png]) {
        const res = await fetchLink(t, url);
        assert.equal(res.statusCode, 410);
        assert.deepEqual(res.json(), { code: 'GONE', message: `label ${label.id} was invalidated and can no longer be downloaded` });
      }
    });

    it('answers 410 GONE after expiresAt: a link signed for a past expiry, and the original link once the label expired', async () => {
      const s = await createShipment(t);
      const label = await createLabel(t, s.id);
      const past = new Date(Date.now() - 60_000).toISOString();
      await t.ctx.db.updateTable('labels').set({ expires_at: past }).where('id', '=', label.id).execute();
      const expiredLink = signedLink(t.ctx.urlKey, t.ctx.config.baseUrl, 'labels', label.id, 'PDF', past);
      const res = await fetchLink(t, expiredLink);
      assert.equal(res.statusCode, 410);
      assert.equal(res.json().code, 'GONE');
      assert.match(res.json().message, new RegExp(`^the download link of label ${label.id} expired at `));
      const original = await fetchLink(t, label.url);
      assert.equal(original.statusCode, 410);
      assert.equal(original.json().code, 'GONE');
      // The label itself is still there to look at.
      assert.equal((await t.request({ method: 'GET', url: `/v1/labels/${label.id}` })).json().expiresAt, past);
    });

    it('answers 410 to a validly signed link whose own expiry has passed even if the label has not', async () => {
      const s = await createShipment(t);
      const label = await createLabel(t, s.id);
      const expires = Math.floor(Date.now() / 1000) - 5;
      const sig = createHmac('sha256', t.ctx.urlKey).update(`labels\n${label.id}\nPDF\n${expires}`).digest('base64url');
      const res = await fetchLink(t, `http://localhost:8080/v1/downloads/labels/${label.id}?format=PDF&expires=${expires}&sig=${sig}`);
      assert.equal(res.statusCode, 410);
    });

    it('checks the signature before anything else: a tampered link of an invalidated label is 403, not 410', async () => {
      const s = await createShipment(t);
      const label = await createLabel(t, s.id);
      await t.request({ method: 'PUT', url: `/v1/labels/${label.id}/invalidate` });
      assert.equal((await fetchLink(t, tampered(label.url, 'sig', 0, label.url.includes('sig=A') ? 'B' : 'A'))).statusCode, 403);
    });
  });

  describe('labels print whatever a shipment may hold', () => {
    const nasty: [string, Record<string, unknown>][] = [
      // Hong Kong has no postal codes and no required state, so every field can be as long as the schema allows.
      ['lines at the length limit', { name: 'W'.repeat(100), company: 'M'.repeat(100), street1: '9'.repeat(100), street2: 'Ш'.repeat(100), city: 'C'.repeat(60), state: 'S'.repeat(40), postalCode: '1'.repeat(16), country: 'HK' }],
      ['emoji', { name: '📦 Paket 🚚', street1: 'Straße der 👩‍👩‍👧‍👦 Familie 1', city: '🏙️ City' }],
      ['right-to-left text', { name: 'محمد عبد الله', street1: 'שדרות רוטשילד 1', city: 'תל אביב-יפו', country: 'IL', postalCode: '6688101' }],
      ['CJK and combining marks', { name: '山田太郎', street1: '東京都千代田区丸の内1-1', city: 'Zürich e\u0301\u0301\u0301', country: 'JP', postalCode: '100-0005' }],
      ['zero-width and bidi controls', { name: 'A\u200bB\u200dC\u202eD\u2066E', street1: '\ufeffStreet 1', city: 'Town' }],
    ];
    for (const [name, to] of nasty) {
      it(`renders a label for addresses with ${name} in every supported format (no 500)`, async () => {
        const s = await createShipment(t, { to: { ...sampleShipment.to, ...to }, reference: 'R'.repeat(100) });
        const label = await createLabel(t, s.id);
        for (const format of LABEL_FORMATS) {
          const res = await fetchLink(t, await labelUrl(t, label.id, format));
          assert.equal(res.statusCode, 200, `${format}: ${res.body.slice(0, 200)}`);
          assert.ok(res.rawPayload.length > 100);
        }
      });
    }
  });

  describe('end to end: the printed barcode is the tracking number', () => {
    it('creates a shipment and a label, downloads PDF and PNG, and the Code 128 decodes to trackingNumber', async () => {
      const s = await createShipment(t);
      const label = await createLabel(t, s.id);
      const pdf = await fetchLink(t, label.url);
      assert.equal(pdf.statusCode, 200);
      const fromPdf = await scan(await rasterizePdf(pdf.rawPayload, 300), { formats: ['Code128'] });
      assert.ok(fromPdf.some((b) => b.text === label.trackingNumber), `PDF barcodes: ${JSON.stringify(fromPdf)}`);
      const png = await fetchLink(t, await labelUrl(t, label.id, 'PNG'));
      assert.equal(png.statusCode, 200);
      const fromPng = await scan(png.rawPayload, { formats: ['Code128'] });
      assert.ok(fromPng.some((b) => b.text === label.trackingNumber), `PNG barcodes: ${JSON.stringify(fromPng)}`);
    });
  });
});

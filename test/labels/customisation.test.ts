// §10 label customisation: up to three messages per shipment and an account logo, printed on every
// label in all 13 formats through the one drawing model. Messages are read back with pdftotext from
// the PDF and from the ZPL's fields; everywhere else (and the logo everywhere) by pixels, in the
// picture another program draws of the file.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { logoFromImage } from '../../src/labels/logo.ts';
import { LABEL_FORMATS, layoutLabel, renderLabel, type LabelData, type Logo } from '../../src/render/index.ts';
import type { ImagePrimitive, TextPrimitive } from '../../src/render/model.ts';
import { forEachDatabase, sampleShipment, withTestApp } from '../helpers.ts';
import { DHL_LABEL, USPS_LABEL } from '../render/fixtures.ts';
import { darkShare, pictureOf, pdfText } from '../render/pictures.ts';

const _run = promisify(execFile);
const MESSAGES = ['FRAGILE - GLASS INSIDE', 'Gift wrap with the blue ribbon', 'Thank you for shopping with us!'];

/** A solid black square PNG: its box on the label must come out dark. */
async function blackSquare(px = 120): Promise<Buffer> {
  return sharp({ create: { width: px, height: px, channels: 3, background: '#000' } }).png().toBuffer();
}


function logoBox(d: LabelData): ImagePrimitive {
  const image = layoutLabel(d).primitives.find((p): p is ImagePrimitive => p.kind === 'image');
  assert.ok(image, 'the drawing has the logo');
  return image;
}

/** The boxes of the message lines in the drawing (baseline less the font size, to just below it). */
function messageBoxes(d: LabelData): { x: number; y: number; w: number; h: number }[] {
  const texts = layoutLabel(d).primitives.filter((p): p is TextPrimitive => p.kind === 'text' && MESSAGES.includes(p.text));
  assert.equal(texts.length, MESSAGES.length, 'every message is laid out');
  return texts.map((t) => ({ x: t.x, y: t.y - t.size, w: 90, h: t.size * 1.2 }));
}

describe('§10 messages and logo in every format', async () => {
  const logo: Logo = await logoFromImage(await blackSquare(), 'image/png');
  for (const base of [USPS_LABEL, { ...DHL_LABEL, size: '6x4' as const }]) {
    const withBoth: LabelData = { ...base, messages: MESSAGES, logo };
    // The same layout with blank messages and a white logo: what is dark there is not a message or the logo.
    const white: Logo = { ...logo, bits: Buffer.alloc(Buffer.from(logo.bits, 'base64').length).toString('base64') };
    const blank: LabelData = { ...base, messages: [' ', ' ', ' '], logo: white };
    const { widthPt } = layoutLabel(base);
    for (const format of LABEL_FORMATS) {
      it(`${base.carrier} ${base.size} ${format}`, async () => {
        const body = (await renderLabel(withBoth, format)).body;
        if (format === 'ZPL') {
          const zpl = body.toString('utf8');
          for (const m of MESSAGES) assert.ok(zpl.includes(`^FD${m}^FS`), `ZPL field of ${m}`);
          const gf = /\^GFA,(\d+),\d+,(\d+),([0-9A-F]+)\^FS/.exec(zpl.split('\n').find((l) => l.startsWith(`^FO${Math.round(logoBox(withBoth).x * 203 / 72)},`) && l.includes('^GFA'))!);
          assert.ok(gf, 'the logo is a ^GF graphic at its place');
          const bits = Buffer.from(gf[3]!, 'hex');
          const ones = [...bits].reduce((n, b) => n + (b.toString(2).match(/1/g)?.length ?? 0), 0);
          assert.ok(ones / (bits.length * 8) > 0.9, `the logo graphic is black (${ones} of ${bits.length * 8} dots)`);
          return;
        }
        if (format === 'PDF') {
          const text = await pdfText(body);
          for (const m of MESSAGES) assert.ok(text.includes(m), `pdftotext finds ${m}`);
        }
        const picture = await pictureOf(format, body, widthPt);
        const empty = await pictureOf(format, (await renderLabel(blank, format)).body, widthPt);
        const box = logoBox(withBoth);
        const inner = { x: box.x + 2, y: box.y + 2, w: box.w - 4, h: box.h - 4 };
        assert.ok(darkShare(picture, widthPt, inner) > 0.9, `the logo is printed: ${darkShare(picture, widthPt, inner)}`);
        assert.ok(darkShare(empty, widthPt, inner) < 0.1, 'without a logo its box is white');
        for (const [i, mbox] of messageBoxes(withBoth).entries()) {
          const ink = darkShare(picture, widthPt, mbox);
          assert.ok(ink > 0.08 && darkShare(empty, widthPt, mbox) < 0.02, `message ${i + 1} is printed (${ink.toFixed(3)} dark)`);
        }
      });
    }
  }
});

forEachDatabase((database) => {
  describe('messages and the account logo through the API', () => {
    const t = withTestApp(database);

    it('messages: at most three, each 1-35 printable characters, kept on the shipment and printed on its label', async () => {
      for (const [messages, field] of [
        [['a', 'b', 'c', 'd'], 'messages'],
        [['x'.repeat(36)], 'messages[0]'],
        [['ok', 'bell\u0007'], 'messages[1]'],
        [[''], 'messages[0]'],
        ['Fragile', 'messages'],
      ] as const) {
        const before = await t.request({ method: 'GET', url: '/v1/shipments' });
        const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, messages } });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().details[0].field, field, res.body);
        assert.equal((await t.request({ method: 'GET', url: '/v1/shipments' })).body, before.body, 'nothing created');
      }
      const created = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, messages: MESSAGES } });
      assert.equal(created.statusCode, 201, created.body);
      assert.deepEqual(created.json().messages, MESSAGES);
      assert.deepEqual((await t.request({ method: 'GET', url: `/v1/shipments/${created.json().id}` })).json().messages, MESSAGES);
      const label = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: created.json().id } })).json();
      const pdf = await t.app.inject({ method: 'GET', url: label.url.replace('http://localhost:8080', '') });
      const text = await pdfText(pdf.rawPayload);
      for (const m of MESSAGES) assert.ok(text.includes(m), `${m} on the label`);
    });

    it('logo: PNG or JPEG up to 256 KiB (415 other types, 400 what does not decode, 413 larger), on labels created afterwards only', async () => {
      const acct = await t.newAccount();
      const as = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: Buffer | object, type?: string) =>
        t.app.inject({ method, url, headers: { 'x-api-key': acct.apiKey, ...(type ? { 'content-type': type } : {}) }, ...(body ? { payload: body as Buffer } : {}) });
      const labelOf = async () => {
        const s = (await as('POST', '/v1/shipments', sampleShipment)).json();
        return (await as('POST', '/v1/labels', { shipmentId: s.id })).json();
      };
      const before = await labelOf();
      const png = await blackSquare();
      const gif = await as('PUT', '/v1/account/logo', png, 'image/gif');
      assert.equal(gif.statusCode, 415);
      // The refusal names what the route takes, not JSON.
      assert.equal(gif.json().message, 'content type image/gif is not supported; send image/png or image/jpeg');
      assert.equal((await as('PUT', '/v1/account/logo', Buffer.from('hello'), 'text/plain')).statusCode, 415);
      assert.equal((await as('PUT', '/v1/account/logo', { a: 1 })).statusCode, 415);
      const garbage = await as('PUT', '/v1/account/logo', Buffer.from('\x89PNG\r\n\x1a\nnot really'), 'image/png');
      assert.equal(garbage.statusCode, 400, garbage.body);
      assert.equal((await as('PUT', '/v1/account/logo', await sharp(png).jpeg().toBuffer(), 'image/png')).statusCode, 400, 'a JPEG sent as PNG');
      // A small file of a huge picture: refused as too large, not as "not a PNG".
      const huge = await sharp({ create: { width: 6000, height: 5000, channels: 3, background: '#ffffff' } }).greyscale().png({ compressionLevel: 9 }).toBuffer();
      assert.ok(huge.length < 256 * 1024, `${huge.length} bytes`);
      const tooLarge = await as('PUT', '/v1/account/logo', huge, 'image/png');
      assert.equal(tooLarge.statusCode, 400, tooLarge.body);
      assert.equal(tooLarge.json().message, 'the image is too large: it is 6000 x 5000 pixels; a logo has at most 25 million');
      const big = await as('PUT', '/v1/account/logo', Buffer.concat([png, Buffer.alloc(256 * 1024)]), 'image/png');
      assert.equal(big.statusCode, 413, big.body);
      assert.match(big.json().message, /256 KiB/);
      const ok = await as('PUT', '/v1/account/logo', await sharp(png).jpeg().toBuffer(), 'image/jpeg');
      assert.equal(ok.statusCode, 204, ok.body);
      const after = await labelOf();
      // The PDFs: only the label created after the upload has the logo's dark box.
      const darkOf = async (label: { url: string }) => {
        const pdf = (await t.app.inject({ method: 'GET', url: label.url.replace('http://localhost:8080', '') })).rawPayload;
        return pictureOf('PDF', pdf, 288);
      };
      const row = await t.ctx.db.selectFrom('labels').select('label_data').where('id', '=', after.id).executeTakeFirstOrThrow();
      const box = logoBox(JSON.parse(row.label_data) as LabelData);
      const inner = { x: box.x + 2, y: box.y + 2, w: box.w - 4, h: box.h - 4 };
      assert.ok(darkShare(await darkOf(after), 288, inner) > 0.9, 'the new label has the logo');
      assert.ok(darkShare(await darkOf(before), 288, inner) < 0.1, 'the earlier label has none');
      assert.equal((await as('DELETE', '/v1/account/logo')).statusCode, 204);
      assert.equal((await as('DELETE', '/v1/account/logo')).statusCode, 204, 'again');
      const none = await labelOf();
      const noneRow = await t.ctx.db.selectFrom('labels').select('label_data').where('id', '=', none.id).executeTakeFirstOrThrow();
      assert.equal((JSON.parse(noneRow.label_data) as LabelData).logo, undefined);
      // The earlier label keeps its logo: its drawing never changes.
      assert.ok(darkShare(await darkOf(after), 288, inner) > 0.9);
    });
  });
});

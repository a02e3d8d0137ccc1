// §5: ZPL II at 203 dpi with ^CI28. Checked with an independent ZPL renderer (zpl-renderer-js,
// a WASM build of zebrash) whose PNG is decoded by zxing like every other format.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ready } from 'zpl-renderer-js';
import { layoutLabel, renderDrawing, renderLabel } from '../../src/render/index.ts';
import type { LabelData } from '../../src/render/index.ts';
import { ALL_CARRIERS, DHL_LABEL, UPS_INTERNATIONAL, UPS_LABEL } from './fixtures.ts';
import { assertAllRead, expectedBarcodes, expectedMaxiCode } from './expected.ts';
import { scan } from './scan.ts';

async function zplToPng(zpl: string, widthIn: number, heightIn: number, dpmm = 8): Promise<Buffer> {
  const { api } = await ready;
  return Buffer.from(await api.zplToBase64Async(zpl, widthIn * 25.4, heightIn * 25.4, dpmm), 'base64');
}

async function zplOf(d: LabelData, dpi: 203 | 300 = 203): Promise<string> {
  return (await renderLabel(d, 'ZPL', { dpi })).body.toString('utf8');
}

describe('ZPL document', () => {
  it('is one ^XA … ^XZ label in UTF-8 (^CI28) with width and length from the size', async () => {
    const z = await zplOf(UPS_LABEL);
    assert.match(z, /^\^XA\n\^CI28\n/);
    assert.match(z, /\^XZ\n$/);
    assert.ok(z.includes('^PW812\n'), '4 in at 203 dpi');
    assert.ok(z.includes('^LL1218\n'), '6 in at 203 dpi');
    const landscape = await zplOf({ ...UPS_LABEL, size: '6x4' });
    assert.ok(landscape.includes('^PW1218\n') && landscape.includes('^LL812\n'));
    const tall = await zplOf({ ...UPS_LABEL, size: '4x8' });
    assert.ok(tall.includes('^LL1624\n'));
    const letter = await zplOf({ ...UPS_LABEL, size: '8.5x11' });
    assert.ok(letter.includes('^PW1726\n') && letter.includes('^LL2233\n'));
  });

  it('uses the printer\'s barcode commands with whole-dot module widths', async () => {
    const ups = await zplOf(UPS_LABEL);
    assert.match(ups, /\^BY3\^BCN,\d+,N,N,N,A\^FH\^FD1Z5R89390357567127\^FS/);
    assert.match(ups, /\^BD2,1,1\^FH\^FD003840101180000\[\)>_1E01_1D961Z5R89390357567127_1DUPSN/);
    assert.match(await zplOf(ALL_CARRIERS[1]!), /\^BCN,\d+,N,N,N,N\^FD>;>842010118>89400111206206406260787\^FS/);
    assert.match(await zplOf(ALL_CARRIERS[2]!), /\^B7N,\d+,\d,\d+,,N\^FH\^FD/);
    assert.match(await zplOf(DHL_LABEL), /\^BXN,\d+,200,0,0,6\^FH\^FD\[\)>_1E06_1DJ3318810025/);
    // MaxiCode mode 3: the service class (065, Worldwide Saver), Russia's numeric code, the postal code.
    assert.match(await zplOf(UPS_INTERNATIONAL), /\^BD3,1,1\^FH\^FD065643125009/);
  });

  it('prints Latin-1 text with the resident font and other scripts as ^GF bitmaps', async () => {
    const z = await zplOf(DHL_LABEL);
    assert.ok(z.includes('^FDJürgen Müller^FS'), 'Latin-1 text stays text (UTF-8 under ^CI28)');
    assert.ok(!z.includes('Γιώργος'), 'Greek is not sent as text the resident font cannot draw');
    assert.match(z, /\^GFA,\d+,\d+,\d+,[0-9A-F]+\^FS/);
  });

  it('escapes ZPL command characters in field data', async () => {
    const z = await zplOf({ ...UPS_LABEL, reference: 'A^B~C_D' });
    assert.ok(z.includes('^FH^FDREF: A_5EB_7EC_5FD^FS'), z.split('\n').find((l) => l.includes('REF')));
  });

  it('300 dpi scales dots to 12 per mm', async () => {
    const z = await zplOf(UPS_LABEL, 300);
    assert.ok(z.includes('^PW1200\n') && z.includes('^LL1800\n'));
  });
});

describe('ZPL rendered by zpl-renderer-js decodes', () => {
  for (const data of ALL_CARRIERS) {
    it(`${data.carrier}: every linear and 2D barcode`, async () => {
      const png = await zplToPng(await zplOf(data), 4, 6);
      assertAllRead(await scan(png), expectedBarcodes(data), 'ZPL');
    });
  }

  it('UPS: the printer-encoded MaxiCode carries the same message', async () => {
    const png = await zplToPng(await zplOf(UPS_LABEL), 4, 6);
    const b = layoutLabel(UPS_LABEL).primitives.find((p) => p.kind === 'barcode' && p.symbology === 'maxicode')!;
    assert.ok(b.kind === 'barcode');
    // The printer draws its own MaxiCode from ^FO: crop generously around the field origin.
    const k = 203 / 72;
    const found = await scan(png, {
      crop: { left: b.x * k - 6, top: b.y * k - 6, width: b.w * k + 30, height: b.h * k + 20 },
      threshold: true, pure: true, formats: ['MaxiCode'],
    });
    assert.equal(found.length, 1, 'MaxiCode read');
    assert.ok(expectedMaxiCode(UPS_LABEL)(found[0]!.text), found[0]!.text);
  });

  for (const size of ['6x4', '4x8'] as const) {
    it(`${size}: the tracking barcode`, async () => {
      const data = { ...ALL_CARRIERS[1]!, size };
      const drawing = layoutLabel(data);
      const png = await zplToPng((await renderDrawing(drawing, 'ZPL')).body.toString(), drawing.widthPt / 72, drawing.heightPt / 72);
      assertAllRead(await scan(png), expectedBarcodes(data), `ZPL ${size}`);
    });
  }
});

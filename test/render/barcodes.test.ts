// §5: "A real scanner decodes every barcode from every raster and vector format."
// zxing-wasm reads the PNG (203 and 300 dpi), the PDF as poppler and Ghostscript rasterise it, and
// the SVG as resvg renders it, for all four carriers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Resvg } from '@resvg/resvg-js';
import bwipjs from 'bwip-js';
import fc from 'fast-check';
import { DOT, PDF417_EC_LEVEL, pdf417 } from '../../src/render/barcodes.ts';
import { layoutLabel, renderDrawing, renderLabel } from '../../src/render/index.ts';
import type { BarcodePrimitive, LabelData } from '../../src/render/index.ts';
import { ALL_CARRIERS, UPS_INTERNATIONAL, UPS_LABEL, USPS_INTERNATIONAL } from './fixtures.ts';
import { assertAllRead, expectedBarcodes, expectedMaxiCode } from './expected.ts';
import { pixelBox, rasterizePdf, rasterizePdfWithGhostscript, scan } from './scan.ts';

function maxiCodeOf(d: LabelData): BarcodePrimitive {
  const b = layoutLabel(d).primitives.find((p) => p.kind === 'barcode' && p.symbology === 'maxicode');
  assert.ok(b && b.kind === 'barcode', 'a UPS label has a MaxiCode');
  return b;
}

async function assertMaxiCodeRead(png: Buffer, d: LabelData, dpi: number, where: string): Promise<void> {
  const found = await scan(png, { crop: pixelBox(maxiCodeOf(d), dpi, 3), threshold: true, pure: true, formats: ['MaxiCode'] });
  assert.equal(found.length, 1, `${where}: MaxiCode not read`);
  assert.ok(expectedMaxiCode(d)(found[0]!.text), `${where}: MaxiCode message ${JSON.stringify(found[0]!.text)}`);
}

for (const data of [...ALL_CARRIERS, USPS_INTERNATIONAL]) {
  describe(`${data.carrier}${data === USPS_INTERNATIONAL ? ' international' : ''} 4x6 label barcodes`, () => {
    for (const dpi of [203, 300] as const) {
      it(`decode from the PNG at ${dpi} dpi`, async () => {
        const png = (await renderLabel(data, 'PNG', { dpi })).body;
        assertAllRead(await scan(png), expectedBarcodes(data), `PNG ${dpi}`);
        if (data.carrier === 'UPS') await assertMaxiCodeRead(png, data, dpi, `PNG ${dpi}`);
      });
    }

    it('decode from the PDF rasterised by pdftoppm -r 203', async () => {
      const png = await rasterizePdf((await renderLabel(data, 'PDF')).body, 203);
      assertAllRead(await scan(png), expectedBarcodes(data), 'PDF');
      if (data.carrier === 'UPS') await assertMaxiCodeRead(png, data, 203, 'PDF');
    });

    it('decode from the PDF rasterised by Ghostscript at 203 dpi', async () => {
      const png = await rasterizePdfWithGhostscript((await renderLabel(data, 'PDF')).body, 203);
      assertAllRead(await scan(png), expectedBarcodes(data), 'PDF (gs)');
      if (data.carrier === 'UPS') await assertMaxiCodeRead(png, data, 203, 'PDF (gs)');
    });

    it('decode from the SVG rendered by resvg', async () => {
      const svg = (await renderLabel(data, 'SVG')).body.toString('utf8');
      // The SVG is sized in points: 288pt wide is 812 pixels at 203 dpi.
      const png = new Resvg(svg, { fitTo: { mode: 'width', value: 812 }, background: '#fff', font: { loadSystemFonts: false } }).render().asPng();
      assertAllRead(await scan(png), expectedBarcodes(data), 'SVG');
      if (data.carrier === 'UPS') await assertMaxiCodeRead(png, data, 203, 'SVG');
    });
  });
}

describe('UPS MaxiCode modes', () => {
  it('mode 2 for a US ZIP code, mode 3 for an alphanumeric or foreign postal code', async () => {
    for (const [d, mode] of [[UPS_LABEL, 2], [UPS_INTERNATIONAL, 3]] as const) {
      const b = maxiCodeOf(d);
      assert.ok(b.data.startsWith('[)>\x1e01\x1d96'), 'structured carrier message header');
      const png = (await renderLabel(d, 'PNG')).body;
      const found = await scan(png, { crop: pixelBox(b, 203, 3), threshold: true, pure: true, formats: ['MaxiCode'] });
      assert.equal(found.length, 1, `mode ${mode} MaxiCode read`);
      assert.ok(expectedMaxiCode(d)(found[0]!.text), found[0]!.text);
      if (mode === 3) assert.ok(found[0]!.text.includes('\x1d643\x1d'), 'ISO 3166 numeric country code of Russia');
    }
  });
});

describe('every label size keeps its barcodes readable', () => {
  for (const size of ['4x8', '6x4', '8.5x11'] as const) {
    for (const base of ALL_CARRIERS) {
      it(`${base.carrier} ${size} PNG`, async () => {
        const data = { ...base, size };
        const drawing = layoutLabel(data);
        const png = (await renderDrawing(drawing, 'PNG')).body;
        assertAllRead(await scan(png), expectedBarcodes(data), `${size} PNG`);
        if (data.carrier === 'UPS') await assertMaxiCodeRead(png, data, 203, `${size} PNG`);
      });
    }
  }
});

describe('PDF417 fitted to its area', () => {
  /** The definition: encode every column count at 3, then 2 dots; the largest symbol that fits. */
  function largestThatFits(text: string, w: number, h: number): { module: number; pixx: number; pixy: number } | undefined {
    for (const dots of [3, 2]) {
      const module = dots * DOT;
      let best: { module: number; pixx: number; pixy: number } | undefined;
      for (let columns = 1; (17 * columns + 73) * module <= w && columns <= 30; columns++) {
        let m: { pixx: number; pixy: number };
        try {
          m = bwipjs.raw({ bcid: 'pdf417', text, columns, eclevel: PDF417_EC_LEVEL } as Parameters<typeof bwipjs.raw>[0])[0] as unknown as { pixx: number; pixy: number };
        } catch {
          continue;
        }
        if ((m.pixy + 4) * module > h) continue;
        if (!best || m.pixx * m.pixy > best.pixx * best.pixy) best = { module, pixx: m.pixx, pixy: m.pixy };
      }
      if (best) return best;
    }
    return undefined;
  }

  it('gives a message too long for six columns a symbol even in an area too small for it', () => {
    const text = 'The quick brown fox 0123456789 '.repeat(40); // about 1,240 characters: over 540 codewords
    const b = pdf417(text, { x: 0, y: 0, w: 60, h: 30 });
    if (b.modules.shape !== 'matrix') return assert.fail('a matrix symbol');
    assert.ok(b.modules.columns > 6 * 17 + 69, 'more than six data columns');
    assert.ok((b.modules.columns + 4) * b.module <= 60 + 1e-9 && (b.modules.rows * b.modules.rowHeight + 4) * b.module <= 30 + 1e-9, 'fits the area');
  });

  it('is the largest symbol that fits with its quiet zones, as encoding every column count finds (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 260 }), fc.integer({ min: 110, max: 300 }), fc.integer({ min: 40, max: 200 }), (text, w, h) => {
        const b = pdf417(text, { x: 0, y: 0, w, h });
        assert.equal(b.data, text);
        if (b.modules.shape !== 'matrix') return assert.fail('a matrix symbol');
        const pixy = b.modules.rows * b.modules.rowHeight;
        assert.ok((b.modules.columns + 4) * b.module <= w + 1e-9, 'fits the width');
        assert.ok((pixy + 4) * b.module <= h + 1e-9, 'fits the height');
        const expected = largestThatFits(text, w, h);
        if (expected) assert.deepEqual({ module: b.module, pixx: b.modules.columns, pixy }, expected);
      }),
      { numRuns: 200 },
    );
  });
});

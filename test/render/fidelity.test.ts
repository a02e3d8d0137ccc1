// §10 print fidelity: the vector formats put every bar on whole printer dots, so a file rasterised
// WITHOUT anti-aliasing (as a thermal printer prints it) at 203 and at 300 dpi still scans. PDF by
// poppler and by Ghostscript, PostScript and EPS by Ghostscript, SVG by resvg with crisp edges.
// (EMF carries the label as a 203 or 300 dpi bitmap; its readers are tested in formats-readers.)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Resvg } from '@resvg/resvg-js';
import { layoutLabel, renderLabel } from '../../src/render/index.ts';
import { DOT } from '../../src/render/barcodes.ts';
import { LABEL_SIZES } from '../../src/render/label.ts';
import type { BarcodePrimitive, LabelData } from '../../src/render/index.ts';
import { ALL_CARRIERS } from './fixtures.ts';
import { expectedBarcodes, expectedMaxiCode } from './expected.ts';
import { pixelBox, rasterizePdf, rasterizePdfWithGhostscript, scan } from './scan.ts';

type Raster = (d: LabelData, dpi: 203 | 300) => Promise<Buffer>;

const READERS: Record<string, Raster> = {
  'PDF (poppler, -aa no -aaVector no)': async (d, dpi) => rasterizePdf((await renderLabel(d, 'PDF')).body, dpi, { aliased: true }),
  'PDF (Ghostscript)': async (d, dpi) => rasterizePdfWithGhostscript((await renderLabel(d, 'PDF')).body, dpi),
  'PS (Ghostscript)': async (d, dpi) => rasterizePdfWithGhostscript((await renderLabel(d, 'PS')).body, dpi, { kind: 'ps' }),
  'EPS (Ghostscript)': async (d, dpi) => rasterizePdfWithGhostscript((await renderLabel(d, 'EPS')).body, dpi, { kind: 'eps' }),
  'SVG (resvg, crisp edges)': async (d, dpi) => {
    const svg = (await renderLabel(d, 'SVG')).body.toString('utf8');
    const width = Math.round((layoutLabel(d).widthPt * dpi) / 72);
    return Buffer.from(new Resvg(svg, { fitTo: { mode: 'width', value: width }, background: '#fff', shapeRendering: 0, textRendering: 0, font: { loadSystemFonts: false } }).render().asPng());
  },
};

/** Each barcode read alone from its own crop, so one symbol that does not scan cannot hide behind another. */
async function assertEveryBarcodeReads(png: Buffer, d: LabelData, dpi: number, where: string): Promise<void> {
  const bars = layoutLabel(d).primitives.filter((p): p is BarcodePrimitive => p.kind === 'barcode');
  const expected = expectedBarcodes(d);
  for (const b of bars) {
    if (b.symbology === 'maxicode') {
      const found = await scan(png, { crop: pixelBox(b, dpi, 3), threshold: true, pure: true, formats: ['MaxiCode'] });
      assert.ok(found.length === 1 && expectedMaxiCode(d)(found[0]!.text), `${where}: the MaxiCode does not scan`);
      continue;
    }
    const found = await scan(png, { crop: pixelBox(b, dpi, 10), threshold: true });
    assert.ok(
      found.some((s) => expected.some((e) => e.format === s.format && e.test(s.text))),
      `${where}: the ${b.symbology} barcode of ${JSON.stringify(b.data)} does not scan; read ${JSON.stringify(found)}`,
    );
  }
}

describe('§10 vector formats rasterised without anti-aliasing still scan', () => {
  for (const [reader, raster] of Object.entries(READERS)) {
    for (const dpi of [203, 300] as const) {
      it(`${reader} at ${dpi} dpi, all four carriers`, async () => {
        for (const d of ALL_CARRIERS) await assertEveryBarcodeReads(await raster(d, dpi), d, dpi, `${d.carrier} ${reader} ${dpi} dpi`);
      });
    }
  }
});

describe('§10 every label size keeps its barcodes on whole printer dots', () => {
  const onGrid = (v: number) => Math.abs(v / DOT - Math.round(v / DOT)) < 1e-6;
  for (const size of LABEL_SIZES) {
    it(`${size}: every barcode starts on the 203 dpi dot grid, all four carriers`, () => {
      for (const base of ALL_CARRIERS) {
        for (const b of layoutLabel({ ...base, size }).primitives.filter((p): p is BarcodePrimitive => p.kind === 'barcode')) {
          assert.ok(onGrid(b.x) && onGrid(b.y), `${base.carrier} ${size} ${b.symbology} at (${b.x}, ${b.y}) pt: ${b.x / DOT}, ${b.y / DOT} dots`);
        }
      }
    });
  }
  it('8.5x11: the PDF rasterised without anti-aliasing at 203 dpi scans, all four carriers', async () => {
    for (const base of ALL_CARRIERS) {
      const d = { ...base, size: '8.5x11' as const };
      await assertEveryBarcodeReads(await READERS['PDF (poppler, -aa no -aaVector no)']!(d, 203), d, 203, `${d.carrier} 8.5x11 PDF`);
    }
  });
});

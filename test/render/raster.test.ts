// The raster backend draws the primitives itself (1-bit, pixel centres sampled); resvg rendering
// the pixel-grid SVG with anti-aliasing off is the reference it must agree with.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Resvg } from '@resvg/resvg-js';
import { layoutLabel, renderLabel } from '../../src/render/index.ts';
import { isInk } from '../../src/render/bitmap.ts';
import { rasterize } from '../../src/render/raster.ts';
import { drawingToSvg } from '../../src/render/svg.ts';
import { ALL_CARRIERS, NASTY_LABEL } from './fixtures.ts';

describe('1-bit rasteriser', () => {
  for (const data of [...ALL_CARRIERS, NASTY_LABEL]) {
    for (const dpi of [203, 300]) {
      it(`${data.carrier} ${data.labelId.slice(0, 9)} at ${dpi} dpi: the same pixels as resvg (≤ 1.5 % of the ink differs)`, () => {
        const drawing = layoutLabel(data);
        const ours = rasterize(drawing, dpi);
        const ref = new Resvg(drawingToSvg(drawing, { rasterDpi: dpi }), { background: '#fff', shapeRendering: 1, textRendering: 0, font: { loadSystemFonts: false } }).render();
        assert.deepEqual([ours.width, ours.height], [ref.width, ref.height]);
        const px = ref.pixels;
        let ink = 0;
        let differ = 0;
        for (let y = 0, i = 0; y < ours.height; y++) {
          for (let x = 0; x < ours.width; x++, i++) {
            const dark = px[i * 4 + 1]! < 128;
            if (dark) ink++;
            if (dark !== isInk(ours, x, y)) differ++;
          }
        }
        assert.ok(ink > 50_000, `${ink} dark pixels`);
        assert.ok(differ / ink <= 0.015, `${differ} of ${ink} pixels differ`);
      });
    }
  }

  it('the PNG is 1-bit greyscale with its resolution in pHYs', async () => {
    const png = (await renderLabel(ALL_CARRIERS[0]!, 'PNG', { dpi: 300 })).body;
    assert.equal(png.toString('latin1', 12, 16), 'IHDR');
    assert.equal(png[24], 1, 'bit depth 1');
    assert.equal(png[25], 0, 'greyscale');
    const phys = png.indexOf('pHYs');
    assert.equal(png.readUInt32BE(phys + 4), Math.round(300 / 0.0254));
  });
});

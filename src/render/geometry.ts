// Barcode geometry shared by the backends: bars, matrix runs and MaxiCode hexagons as rectangles
// and polygons, either in points (vector formats) or snapped to whole pixels (raster formats).
import { DOT, MAXICODE_BULLSEYE, hexagonCorners } from './barcodes.ts';
import type { BarcodePrimitive, ImagePrimitive } from './model.ts';

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface BarcodeShapes {
  rects: Rect[];
  polygons: [number, number][][];
  /** Bullseye rings: dark between inner and outer radius. */
  rings: { cx: number; cy: number; inner: number; outer: number }[];
}

/** What a bar of a vector document gives up on each side: a quarter of a 203 dpi dot. */
const BAR_INSET = DOT / 4;

/** MaxiCode's bullseye: three dark rings. */
export function bullseyeRings(b: BarcodePrimitive, scale = 1): BarcodeShapes['rings'] {
  const p = b.module * scale;
  const e = MAXICODE_BULLSEYE;
  const rings: BarcodeShapes['rings'] = [];
  for (let k = 0; k < e.radii.length; k += 2) {
    rings.push({ cx: (b.x + e.cx * b.module) * scale, cy: (b.y + e.cy * b.module) * scale, inner: e.radii[k]! * p, outer: e.radii[k + 1]! * p });
  }
  return rings;
}

/**
 * The dark parts of a barcode. With `pxPerPt` the modules are whole pixels (at least one) and the
 * coordinates are pixels; otherwise points. The symbol stays centred on its box when snapping
 * changes its size.
 */
export function barcodeShapes(b: BarcodePrimitive, pxPerPt?: number): BarcodeShapes {
  const out: BarcodeShapes = { rects: [], polygons: [], rings: [] };
  const scale = pxPerPt ?? 1;
  const m = b.modules;
  if (m.shape === 'hexagons') {
    // Hexagons are not grid-aligned anyway: scale them smoothly.
    const p = b.module * scale;
    const ox = b.x * scale;
    const oy = b.y * scale;
    for (const i of m.dark) out.polygons.push(hexagonCorners(i).map(([x, y]) => [ox + x * p, oy + y * p]));
    out.rings = bullseyeRings(b, scale);
    return out;
  }
  const total = m.shape === 'bars' ? m.widths.reduce((a, c) => a + c, 0) : m.columns;
  let mod = b.module * scale;
  let x0 = b.x * scale;
  let y0 = b.y * scale;
  let height = b.h * scale;
  if (pxPerPt) {
    const boxW = b.w * scale;
    mod = Math.max(1, Math.round(mod));
    // Rounding up may not grow the symbol by more than one module past its box.
    if (mod > 1 && mod * total > boxW + mod) mod--;
    const w = mod * total;
    x0 = Math.round(x0 + (boxW - w) / 2);
    if (m.shape === 'matrix') {
      const h = mod * m.rows * m.rowHeight;
      y0 = Math.round(y0 + (height - h) / 2);
      height = h;
    } else {
      y0 = Math.round(y0);
      height = Math.round(height);
    }
  }
  // In points, each bar (and each run of dark modules) gives up a quarter dot on either side (bar
  // width reduction): a printer or reader that blackens every dot a shape touches then prints it
  // exactly on its whole dots.
  const inset = pxPerPt ? 0 : BAR_INSET;
  if (m.shape === 'bars') {
    let x = x0;
    for (let i = 0; i < m.widths.length; i++) {
      const w = m.widths[i]! * mod;
      if (i % 2 === 0) out.rects.push({ x: x + inset, y: y0, w: w - 2 * inset, h: height });
      x += w;
    }
  } else {
    const rowH = mod * m.rowHeight;
    for (let r = 0; r < m.rows; r++) {
      const row = r * m.columns;
      let c = 0;
      while (c < m.columns) {
        if (!m.dark[row + c]) { c++; continue; }
        const start = c;
        while (c < m.columns && m.dark[row + c]) c++;
        out.rects.push({ x: x0 + start * mod + inset, y: y0 + r * rowH, w: (c - start) * mod - 2 * inset, h: rowH });
      }
    }
  }
  return out;
}

/** The dark runs of a 1-bit image as rectangles, in points or (with `pxPerPt`) in pixels. */
export function imageRuns(p: ImagePrimitive, pxPerPt = 1): Rect[] {
  const bits = Buffer.from(p.bits, 'base64');
  const rowBytes = (p.columns + 7) >> 3;
  const cw = (p.w / p.columns) * pxPerPt;
  const ch = (p.h / p.rows) * pxPerPt;
  const dark = (r: number, c: number): boolean => ((bits[r * rowBytes + (c >> 3)] ?? 0) & (0x80 >> (c & 7))) !== 0;
  const out: Rect[] = [];
  for (let r = 0; r < p.rows; r++) {
    let c = 0;
    while (c < p.columns) {
      if (!dark(r, c)) { c++; continue; }
      const start = c;
      while (c < p.columns && dark(r, c)) c++;
      out.push({ x: p.x * pxPerPt + start * cw, y: p.y * pxPerPt + r * ch, w: (c - start) * cw, h: ch });
    }
  }
  return out;
}

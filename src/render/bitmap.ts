// The raster backend's own 1-bit rasteriser: draws the primitives straight into a black-and-white
// bitmap, sampling each pixel at its centre (what resvg does with anti-aliasing off, which a test
// checks), with barcode modules snapped to whole pixels. Written by hand because resvg spends
// more time allocating, clearing and handing over a full RGBA page than this takes to draw the
// whole label; see docs/rendering.md for the measurements.
import { glyphOutline, placeText, type PlacedRun } from './fonts.ts';
import { barcodeShapes, imageRuns } from './geometry.ts';
import type { Drawing, TextPrimitive } from './model.ts';

export interface Bitmap {
  width: number;
  height: number;
  /** Bytes per row of `bits`. */
  rowBytes: number;
  /**
   * 1 bit per pixel, most significant bit first, 1 = white, 0 = black: what 1-bit PNG, BMP and PCX
   * store, so encoders copy rows as they are (and a label is 124 KB, not 1 MB, at 203 dpi).
   */
  bits: Buffer;
  dpi: number;
}

/** Whether pixel (x, y) is black. */
export function isInk(bm: Bitmap, x: number, y: number): boolean {
  return ((bm.bits[y * bm.rowBytes + (x >> 3)]! >> (7 - (x & 7))) & 1) === 0;
}

/** Blackens pixels [from, to) of one row. */
function inkSpan(bm: Bitmap, row: number, from: number, to: number): void {
  if (to <= from) return;
  const bits = bm.bits;
  const base = row * bm.rowBytes;
  let i = base + (from >> 3);
  const last = base + ((to - 1) >> 3);
  const head = 0xff >> (from & 7);
  const tail = (0xff << (7 - ((to - 1) & 7))) & 0xff;
  if (i === last) {
    bits[i] = bits[i]! & ~(head & tail);
    return;
  }
  bits[i] = bits[i]! & ~head;
  i++;
  if (last > i) bits.fill(0, i, last);
  bits[last] = bits[last]! & ~tail;
}

/** Closed polygons in pixel coordinates, filled with the non-zero winding rule. */
type Contours = number[][];

function fillContours(bm: Bitmap, contours: Contours): void {
  // Edges, top to bottom: x at the top, y top, y bottom, dx/dy, winding direction.
  const edges: number[] = [];
  let minY = Infinity;
  let maxY = -Infinity;
  for (const c of contours) {
    const n = c.length >> 1;
    for (let i = 0; i < n; i++) {
      const j = i + 1 === n ? 0 : i + 1;
      const x0 = c[2 * i]!;
      const y0 = c[2 * i + 1]!;
      const x1 = c[2 * j]!;
      const y1 = c[2 * j + 1]!;
      if (y0 === y1) continue;
      if (y0 < y1) edges.push(x0, y0, y1, (x1 - x0) / (y1 - y0), 1);
      else edges.push(x1, y1, y0, (x0 - x1) / (y0 - y1), -1);
      if (y0 < minY) minY = y0;
      if (y1 < minY) minY = y1;
      if (y0 > maxY) maxY = y0;
      if (y1 > maxY) maxY = y1;
    }
  }
  if (!edges.length) return;
  const { width, height } = bm;
  const rowStart = Math.max(0, Math.ceil(minY - 0.5));
  const rowEnd = Math.min(height - 1, Math.floor(maxY - 0.5));
  const xs: number[] = [];
  const ws: number[] = [];
  for (let row = rowStart; row <= rowEnd; row++) {
    const y = row + 0.5;
    let count = 0;
    for (let e = 0; e < edges.length; e += 5) {
      const top = edges[e + 1]!;
      if (y < top || y >= edges[e + 2]!) continue;
      const x = edges[e]! + (y - top) * edges[e + 3]!;
      const w = edges[e + 4]!;
      // Insertion into the sorted crossings (a scanline crosses few edges of one glyph).
      let k = count++;
      while (k > 0 && xs[k - 1]! > x) {
        xs[k] = xs[k - 1]!;
        ws[k] = ws[k - 1]!;
        k--;
      }
      xs[k] = x;
      ws[k] = w;
    }
    let winding = 0;
    for (let k = 0; k < count - 1; k++) {
      winding += ws[k]!;
      if (winding === 0) continue;
      inkSpan(bm, row, Math.max(0, Math.ceil(xs[k]! - 0.5)), Math.min(width, Math.ceil(xs[k + 1]! - 0.5)));
    }
  }
}

/** Pixels whose centres lie in the rectangle. */
function fillRect(bm: Bitmap, x: number, y: number, w: number, h: number): void {
  const x0 = Math.max(0, Math.ceil(x - 0.5));
  const x1 = Math.min(bm.width, Math.ceil(x + w - 0.5));
  const y0 = Math.max(0, Math.ceil(y - 0.5));
  const y1 = Math.min(bm.height, Math.ceil(y + h - 0.5));
  if (x1 <= x0) return;
  for (let row = y0; row < y1; row++) inkSpan(bm, row, x0, x1);
}

/** A stroke at least one pixel wide, so hairlines never vanish. */
function strokeRect(bm: Bitmap, x: number, y: number, w: number, h: number): void {
  const cx = x + w / 2;
  const cy = y + h / 2;
  fillRect(bm, cx - Math.max(w, 1) / 2, cy - Math.max(h, 1) / 2, Math.max(w, 1), Math.max(h, 1));
}

function fillRing(bm: Bitmap, cx: number, cy: number, inner: number, outer: number): void {
  const r2o = outer * outer;
  const r2i = inner * inner;
  const y0 = Math.max(0, Math.floor(cy - outer));
  const y1 = Math.min(bm.height - 1, Math.ceil(cy + outer));
  const x0 = Math.max(0, Math.floor(cx - outer));
  const x1 = Math.min(bm.width - 1, Math.ceil(cx + outer));
  for (let row = y0; row <= y1; row++) {
    const dy = row + 0.5 - cy;
    for (let col = x0; col <= x1; col++) {
      const dx = col + 0.5 - cx;
      const d = dx * dx + dy * dy;
      if (d <= r2o && d >= r2i) inkSpan(bm, row, col, col + 1);
    }
  }
}

/** Glyph outlines of a text primitive, flattened into pixel-space contours, one set per glyph. */
function textContours(t: TextPrimitive, scale: number): Contours[] {
  const y0 = t.y * scale;
  // Curves split in pieces of about two pixels.
  const glyphs: Contours[] = [];
  for (const run of placeText(t).runs) glyphs.push(...runContours(run, scale, y0));
  return glyphs;
}

/** One run's glyphs as contours (see textContours). */
function runContours(run: PlacedRun, scale: number, y0: number): Contours[] {
  const s = run.shaped;
  const k = run.scale * scale;
  const x0 = run.left * scale;
  const glyphs: Contours[] = [];
  for (let i = 0; i < s.glyphs.length; i++) {
    const contours: Contours = [];
    const gx = x0 + s.x[i]! * k;
    const gy = y0 - s.y[i]! * k;
    let cur: number[] | undefined;
    let px = 0;
    let py = 0;
    for (const c of glyphOutline(s.glyphs[i]!, run.face)) {
      switch (c.op) {
        case 'M':
          if (cur && cur.length >= 6) contours.push(cur);
          px = gx + c.x * k;
          py = gy + c.y * k;
          cur = [px, py];
          break;
        case 'L':
          px = gx + c.x * k;
          py = gy + c.y * k;
          cur?.push(px, py);
          break;
        case 'Q': {
          const cx = gx + c.x1 * k;
          const cy = gy + c.y1 * k;
          const ex = gx + c.x * k;
          const ey = gy + c.y * k;
          const steps = Math.min(16, Math.max(1, Math.ceil(Math.hypot(ex - px, ey - py) / 2)));
          for (let j = 1; j <= steps; j++) {
            const u = j / steps;
            const a = (1 - u) * (1 - u);
            const b = 2 * u * (1 - u);
            const d = u * u;
            cur?.push(a * px + b * cx + d * ex, a * py + b * cy + d * ey);
          }
          px = ex;
          py = ey;
          break;
        }
        case 'C': {
          const c1x = gx + c.x1 * k;
          const c1y = gy + c.y1 * k;
          const c2x = gx + c.x2 * k;
          const c2y = gy + c.y2 * k;
          const ex = gx + c.x * k;
          const ey = gy + c.y * k;
          const steps = Math.min(24, Math.max(1, Math.ceil(Math.hypot(ex - px, ey - py) / 2)));
          for (let j = 1; j <= steps; j++) {
            const u = j / steps;
            const v = 1 - u;
            cur?.push(v * v * v * px + 3 * v * v * u * c1x + 3 * v * u * u * c2x + u * u * u * ex, v * v * v * py + 3 * v * v * u * c1y + 3 * v * u * u * c2y + u * u * u * ey);
          }
          px = ex;
          py = ey;
          break;
        }
        case 'Z':
          if (cur && cur.length >= 6) contours.push(cur);
          cur = undefined;
          break;
      }
    }
    if (cur && cur.length >= 6) contours.push(cur);
    glyphs.push(contours);
  }
  return glyphs;
}

/** Draws the drawing at `dpi` into a new 1-bit bitmap. */
export function drawBitmap(drawing: Drawing, dpi: number): Bitmap {
  const scale = dpi / 72;
  const width = Math.round(drawing.widthPt * scale);
  const height = Math.round(drawing.heightPt * scale);
  const rowBytes = (width + 7) >> 3;
  const bm: Bitmap = { width, height, rowBytes, bits: Buffer.alloc(rowBytes * height, 0xff), dpi };
  for (const p of drawing.primitives) {
    switch (p.kind) {
      case 'text':
        for (const glyph of textContours(p, scale)) fillContours(bm, glyph);
        break;
      case 'line': {
        const w = p.width * scale;
        if (p.y1 === p.y2) strokeRect(bm, Math.min(p.x1, p.x2) * scale, p.y1 * scale - w / 2, Math.abs(p.x2 - p.x1) * scale, w);
        else if (p.x1 === p.x2) strokeRect(bm, p.x1 * scale - w / 2, Math.min(p.y1, p.y2) * scale, w, Math.abs(p.y2 - p.y1) * scale);
        else {
          const len = Math.hypot(p.x2 - p.x1, p.y2 - p.y1);
          const nx = (-(p.y2 - p.y1) / len) * (w / 2);
          const ny = ((p.x2 - p.x1) / len) * (w / 2);
          const [ax, ay, bx, by] = [p.x1 * scale, p.y1 * scale, p.x2 * scale, p.y2 * scale];
          fillContours(bm, [[ax + nx, ay + ny, bx + nx, by + ny, bx - nx, by - ny, ax - nx, ay - ny]]);
        }
        break;
      }
      case 'box': {
        const [x, y, w, h] = [p.x * scale, p.y * scale, p.w * scale, p.h * scale];
        if (p.fill) fillRect(bm, x, y, w, h);
        if (p.stroke) {
          const t = p.stroke * scale;
          strokeRect(bm, x - t / 2, y - t / 2, w + t, t);
          strokeRect(bm, x - t / 2, y + h - t / 2, w + t, t);
          strokeRect(bm, x - t / 2, y - t / 2, t, h + t);
          strokeRect(bm, x + w - t / 2, y - t / 2, t, h + t);
        }
        break;
      }
      case 'barcode': {
        const sh = barcodeShapes(p, scale);
        for (const r of sh.rects) fillRect(bm, r.x, r.y, r.w, r.h);
        for (const poly of sh.polygons) fillContours(bm, [poly.flat()]);
        for (const ring of sh.rings) fillRing(bm, ring.cx, ring.cy, ring.inner, ring.outer);
        break;
      }
      case 'image':
        for (const r of imageRuns(p, scale)) fillRect(bm, r.x, r.y, r.w, r.h);
        break;
    }
  }
  return bm;
}

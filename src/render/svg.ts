// SVG backend. Text is drawn as glyph outlines (DejaVu Sans, and Noto Sans for CJK) (each glyph defined once, then <use>d),
// so the document looks the same in every viewer and in resvg without any font installed; the
// text itself is kept in aria-label attributes. With `rasterDpi` the SVG is in pixels and barcode
// modules are whole pixels: that variant feeds the raster backends.
import { glyphSvgPath, placeText, type Face } from './fonts.ts';
import { hexagonCentre, hexagonCorners } from './barcodes.ts';
import { barcodeShapes, bullseyeRings, imageRuns } from './geometry.ts';
import type { BarcodeShapes } from './geometry.ts';
import type { BarcodePrimitive, Drawing, TextPrimitive } from './model.ts';

export interface SvgOptions {
  /** Lay the SVG out in pixels at this resolution, with barcodes snapped to the pixel grid. */
  rasterDpi?: number;
}

function n(v: number): string {
  return String(Math.round(v * 100) / 100);
}

function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
}

/** Draws `<use>`s of the glyph definitions for one text primitive; records the glyphs used. */
function textSvg(t: TextPrimitive, used: Set<string>): string {
  let out = '';
  for (const { face, shaped: s, scale: k, left: x } of placeText(t).runs) {
    let uses = '';
    for (let i = 0; i < s.glyphs.length; i++) {
      const id = face + s.glyphs[i];
      used.add(id);
      uses += `<use xlink:href="#${id}" x="${Math.round(s.x[i]!)}"${s.y[i] ? ` y="${Math.round(-s.y[i]!)}"` : ''}/>`;
    }
    out += `<g transform="translate(${n(x)} ${n(t.y)}) scale(${k.toPrecision(5)})">${uses}</g>`;
  }
  return `<g aria-label="${escapeXml(t.text)}">${out}</g>`;
}

function shapesSvg(sh: BarcodeShapes): string {
  let d = '';
  for (const r of sh.rects) d += `M${n(r.x)} ${n(r.y)}h${n(r.w)}v${n(r.h)}h${n(-r.w)}z`;
  for (const p of sh.polygons) d += `M${p.map(([x, y]) => `${n(x)} ${n(y)}`).join('L')}z`;
  let out = d ? `<path d="${d}"${sh.polygons.length ? '' : ' shape-rendering="crispEdges"'}/>` : '';
  for (const r of sh.rings) {
    out += `<circle cx="${n(r.cx)}" cy="${n(r.cy)}" r="${n((r.inner + r.outer) / 2)}" fill="none" stroke="#000" stroke-width="${n(r.outer - r.inner)}"/>`;
  }
  return out;
}

/** The corners of hexagon 0 relative to its centre, as relative path steps (same for all). */
const HEXAGON_STEPS = (() => {
  const pts = hexagonCorners(0);
  const { cx, cy } = hexagonCentre(0);
  let d = `m${n(pts[0]![0] - cx)} ${n(pts[0]![1] - cy)}`;
  for (let i = 1; i < pts.length; i++) d += `l${n(pts[i]![0] - pts[i - 1]![0])} ${n(pts[i]![1] - pts[i - 1]![1])}`;
  return `${d}z`;
})();

/** MaxiCode: one path of hexagons in pitch units (two numbers each), scaled into place. */
function maxiCodeSvg(b: BarcodePrimitive, pxPerPt = 1): string {
  if (b.modules.shape !== 'hexagons') return '';
  let d = '';
  for (const i of b.modules.dark) {
    const { cx, cy } = hexagonCentre(i);
    d += `M${n(cx)} ${n(cy)}${HEXAGON_STEPS}`;
  }
  const rings = bullseyeRings(b, pxPerPt);
  return `<path transform="translate(${n(b.x * pxPerPt)} ${n(b.y * pxPerPt)}) scale(${(b.module * pxPerPt).toPrecision(6)})" d="${d}"/>`
    + shapesSvg({ rects: [], polygons: [], rings });
}

function barcodeSvg(b: BarcodePrimitive, pxPerPt?: number): string {
  const body = b.modules.shape === 'hexagons' ? maxiCodeSvg(b, pxPerPt) : shapesSvg(barcodeShapes(b, pxPerPt));
  return `<g data-symbology="${b.symbology}">${body}</g>`;
}

export function drawingToSvg(drawing: Drawing, opts: SvgOptions = {}): string {
  const pxPerPt = opts.rasterDpi ? opts.rasterDpi / 72 : undefined;
  const used = new Set<string>();
  const body: string[] = [];
  const barcodes: string[] = [];
  for (const p of drawing.primitives) {
    switch (p.kind) {
      case 'text':
        body.push(textSvg(p, used));
        break;
      case 'line':
        body.push(`<line x1="${n(p.x1)}" y1="${n(p.y1)}" x2="${n(p.x2)}" y2="${n(p.y2)}" stroke="#000" stroke-width="${n(p.width)}"/>`);
        break;
      case 'box': {
        const fill = p.fill ? '#000' : 'none';
        const stroke = p.stroke ? ` stroke="#000" stroke-width="${n(p.stroke)}"` : '';
        body.push(`<rect x="${n(p.x)}" y="${n(p.y)}" width="${n(p.w)}" height="${n(p.h)}" fill="${fill}"${stroke}/>`);
        break;
      }
      case 'barcode':
        // In pixel mode barcodes are drawn outside the points-to-pixels scaling.
        (pxPerPt ? barcodes : body).push(barcodeSvg(p, pxPerPt));
        break;
      case 'image':
        body.push(`<g data-image="logo">${shapesSvg({ rects: imageRuns(p), polygons: [], rings: [] })}</g>`);
        break;
    }
  }
  const defs = [...used].sort().map((id) => `<path id="${id}" d="${glyphSvgPath(Number(id.slice(1)), id[0] as Face)}"/>`).join('');
  const W = drawing.widthPt;
  const H = drawing.heightPt;
  const title = drawing.meta?.title ? `<title>${escapeXml(drawing.meta.title)}</title>` : '';
  const head = '<?xml version="1.0" encoding="UTF-8"?>\n';
  const ns = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"';
  if (pxPerPt) {
    const wpx = Math.round(W * pxPerPt);
    const hpx = Math.round(H * pxPerPt);
    return `${head}<svg ${ns} width="${wpx}" height="${hpx}" viewBox="0 0 ${wpx} ${hpx}">${title}<defs>${defs}</defs>`
      + `<rect width="${wpx}" height="${hpx}" fill="#fff"/><g transform="scale(${pxPerPt.toPrecision(8)})">${body.join('')}</g>${barcodes.join('')}</svg>\n`;
  }
  return `${head}<svg ${ns} width="${n(W)}pt" height="${n(H)}pt" viewBox="0 0 ${n(W)} ${n(H)}">${title}<defs>${defs}</defs>`
    + `<rect width="${n(W)}" height="${n(H)}" fill="#fff"/>${body.join('')}</svg>\n`;
}

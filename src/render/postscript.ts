// PostScript (PS, one page, LanguageLevel 2) and EPS (EPSF-3.0 with BoundingBox) backend. Text is
// drawn as glyph outlines (DejaVu, and Noto Sans for CJK), each glyph a procedure defined once in the prolog, so the file
// needs no font on the printer or in the importing application.
import { hexagonCentre, hexagonCorners } from './barcodes.ts';
import { glyphOutline, placeText, type Face } from './fonts.ts';
import { barcodeShapes, bullseyeRings, imageRuns } from './geometry.ts';
import type { Drawing, TextPrimitive } from './model.ts';

function n(v: number): string {
  return String(Math.round(v * 100) / 100);
}

/** A glyph outline as a PostScript path procedure (font units, y down; quadratics as cubics). */
function glyphProc(id: number, face: Face): string {
  const ops: string[] = [];
  let px = 0;
  let py = 0;
  for (const c of glyphOutline(id, face)) {
    switch (c.op) {
      case 'M': ops.push(`${n(c.x)} ${n(c.y)} moveto`); px = c.x; py = c.y; break;
      case 'L': ops.push(`${n(c.x)} ${n(c.y)} lineto`); px = c.x; py = c.y; break;
      case 'Q': {
        const c1x = px + (2 / 3) * (c.x1 - px);
        const c1y = py + (2 / 3) * (c.y1 - py);
        const c2x = c.x + (2 / 3) * (c.x1 - c.x);
        const c2y = c.y + (2 / 3) * (c.y1 - c.y);
        ops.push(`${n(c1x)} ${n(c1y)} ${n(c2x)} ${n(c2y)} ${n(c.x)} ${n(c.y)} curveto`);
        px = c.x;
        py = c.y;
        break;
      }
      case 'C': ops.push(`${n(c.x1)} ${n(c.y1)} ${n(c.x2)} ${n(c.y2)} ${n(c.x)} ${n(c.y)} curveto`); px = c.x; py = c.y; break;
      case 'Z': ops.push('closepath'); break;
    }
  }
  return `/${face}${id} {${ops.join(' ')}} bind def`;
}

/** PostScript string literal of ASCII text, for comments and the title. */
function asciiComment(s: string): string {
  return s.normalize('NFKD').replace(/[^\x20-\x7e]/g, '?').slice(0, 200);
}

function textPs(t: TextPrimitive, used: Set<string>): string {
  let out = `% ${asciiComment(t.text)}`;
  for (const { face, shaped: s, scale: k, left: x } of placeText(t).runs) {
    let glyphs = '';
    for (let i = 0; i < s.glyphs.length; i++) {
      const name = face + s.glyphs[i];
      used.add(name);
      glyphs += ` ${Math.round(s.x[i]!)} ${Math.round(-s.y[i]!)} /${name} G`;
    }
    out += `\ngsave ${n(x)} ${n(t.y)} translate ${k.toPrecision(5)} dup scale${glyphs} grestore`;
  }
  return out;
}

const PROLOG = [
  '/G { gsave 3 1 roll translate load exec fill grestore } bind def',
  '/R { rectfill } bind def',
  // One MaxiCode hexagon around (cx, cy), in pitch units.
  `/H { moveto ${(() => {
    const pts = hexagonCorners(0);
    const c = hexagonCentre(0);
    const steps = [`${n(pts[0]![0] - c.cx)} ${n(pts[0]![1] - c.cy)} rmoveto`];
    for (let i = 1; i < pts.length; i++) steps.push(`${n(pts[i]![0] - pts[i - 1]![0])} ${n(pts[i]![1] - pts[i - 1]![1])} rlineto`);
    return steps.join(' ');
  })()} closepath } bind def`,
];

export function drawingToPostScript(drawing: Drawing, kind: 'PS' | 'EPS'): string {
  const W = drawing.widthPt;
  const H = drawing.heightPt;
  const used = new Set<string>();
  const body: string[] = [];
  for (const p of drawing.primitives) {
    switch (p.kind) {
      case 'text':
        body.push(textPs(p, used));
        break;
      case 'line':
        body.push(`${n(p.width)} setlinewidth ${n(p.x1)} ${n(p.y1)} moveto ${n(p.x2)} ${n(p.y2)} lineto stroke`);
        break;
      case 'box':
        if (p.fill) body.push(`${n(p.x)} ${n(p.y)} ${n(p.w)} ${n(p.h)} rectfill`);
        if (p.stroke) body.push(`${n(p.stroke)} setlinewidth ${n(p.x)} ${n(p.y)} ${n(p.w)} ${n(p.h)} rectstroke`);
        break;
      case 'barcode': {
        if (p.modules.shape === 'hexagons') {
          const hex = p.modules.dark.map((i) => {
            const c = hexagonCentre(i);
            return `${n(c.cx)} ${n(c.cy)} H`;
          });
          body.push(`gsave ${n(p.x)} ${n(p.y)} translate ${p.module.toPrecision(6)} dup scale newpath ${hex.join(' ')} fill grestore`);
          for (const r of bullseyeRings(p)) {
            body.push(`newpath ${n(r.cx)} ${n(r.cy)} ${n(r.outer)} 0 360 arc closepath ${n(r.cx + r.inner)} ${n(r.cy)} moveto ${n(r.cx)} ${n(r.cy)} ${n(r.inner)} 360 0 arcn closepath eofill`);
          }
          break;
        }
        const rects = barcodeShapes(p).rects.map((r) => `${n(r.x)} ${n(r.y)} ${n(r.w)} ${n(r.h)} R`);
        body.push(rects.join('\n'));
        break;
      }
      case 'image':
        body.push(imageRuns(p).map((r) => `${n(r.x)} ${n(r.y)} ${n(r.w)} ${n(r.h)} R`).join('\n'));
        break;
    }
  }
  const glyphs = [...used].sort().map((name) => glyphProc(Number(name.slice(1)), name[0] as Face));
  const title = asciiComment(drawing.meta?.title ?? 'Label');
  const created = drawing.meta?.createdAt ? asciiComment(drawing.meta.createdAt) : '2000-01-01T00:00:00Z';
  const header = [
    kind === 'EPS' ? '%!PS-Adobe-3.0 EPSF-3.0' : '%!PS-Adobe-3.0',
    `%%BoundingBox: 0 0 ${Math.ceil(W)} ${Math.ceil(H)}`,
    `%%HiResBoundingBox: 0 0 ${n(W)} ${n(H)}`,
    '%%Creator: shipping-platform',
    `%%Title: ${title}`,
    `%%CreationDate: ${created}`,
    '%%LanguageLevel: 2',
    '%%Pages: 1',
    ...(kind === 'PS' ? [`%%DocumentMedia: Label ${n(W)} ${n(H)} 0 () ()`] : []),
    '%%EndComments',
    '%%BeginProlog',
    '10 dict begin',
    ...PROLOG,
    ...glyphs,
    '%%EndProlog',
  ];
  const setup = kind === 'PS' ? ['%%BeginSetup', `<< /PageSize [${n(W)} ${n(H)}] >> setpagedevice`, '%%EndSetup'] : [];
  return [
    ...header,
    ...setup,
    '%%Page: 1 1',
    ...(kind === 'PS' ? [`%%PageMedia: Label`] : []),
    // The drawing model is y-down from the top-left corner.
    `gsave 0 ${n(H)} translate 1 -1 scale 0 setgray`,
    ...body,
    'grestore',
    'showpage',
    '%%Trailer',
    'end',
    '%%EOF',
    '',
  ].join('\n');
}

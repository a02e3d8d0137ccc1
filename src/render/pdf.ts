// PDF backend: pdfkit, each face (DejaVu Sans, and Noto Sans for CJK text) embedded as a subset (CID font, Identity-H, with ToUnicode so
// text can be searched and copied). pdfkit would parse and subset the font again for every document;
// instead it gets the fontkit font parsed once per process, with shaping served from our cache and
// the subset written by our own TrueType subsetter. That leans on how pdfkit's EmbeddedFont uses a
// fontkit font (layout, createSubset, the subset's encode) and on two pdfkit internals (page.fonts,
// addContent), so pdfkit and fontkit are pinned exactly (docs/decisions.md; test/render/pins.test.ts).
import PDFDocument from 'pdfkit';
import type { Font } from 'fontkit';
import { loadFace, NO_LIGATURES, placeText, shape } from './fonts.ts';
import type { Face, LoadedFont, ShapedText } from './fonts.ts';
import { hexagonCentre, hexagonCorners } from './barcodes.ts';
import { barcodeShapes, bullseyeRings, imageRuns } from './geometry.ts';
import type { BarcodePrimitive, Drawing } from './model.ts';
import { TrueTypeSubset, parseTrueType } from './ttf-subset.ts';

const pdfFonts: Partial<Record<Face, Font>> = {};

/** The fontkit font of a face as pdfkit sees it, with shaping and subsetting replaced by cached versions. */
function pdfFont(face: Face): Font {
  let f = pdfFonts[face];
  if (!f) {
    const loaded: LoadedFont = loadFace(face);
    const parsed = parseTrueType(loaded.bytes);
    const font = loaded.font;
    f = Object.create(font) as Font;
    const advanceOf = (id: number): number => font.getGlyph(id).advanceWidth;
    Object.assign(f, {
      createSubset: () => new TrueTypeSubset(parsed),
      // pdfkit scales the positions it gets in place, so every call gets fresh objects.
      layout: (text: string) => {
        const s = shape(text, face);
        const glyphs = s.glyphs.map((id, i) => ({ id, advanceWidth: advanceOf(id), codePoints: codePointsOf(s, i, font) }));
        const positions = s.glyphs.map((_, i) => ({ xAdvance: s.xAdvance[i]!, yAdvance: 0, xOffset: s.xOffset[i]!, yOffset: s.y[i]! }));
        return {
          glyphs,
          positions,
          get advanceWidth() {
            return positions.reduce((a, p) => a + p.xAdvance, 0);
          },
        };
      },
    });
    pdfFonts[face] = f;
  }
  return f;
}

/**
 * The characters a glyph stands for, for the PDF's ToUnicode map: a pure function of the text, so
 * the document does not depend on which text the process shaped first. The shaper's own answer when
 * it accounts for every character (a joined Arabic letter is its letter, lam-alef is lam and alef).
 */
function codePointsOf(s: ShapedText, i: number, font: Font): number[] {
  // A right-to-left run is drawn last character first, and readers reverse it character by character:
  // a ligature's characters go in drawing order too (alef, lam), to be read back lam, alef.
  if (s.chars) return s.rtl ? s.chars[i]!.toReversed() : s.chars[i]!;
  if (s.glyphs.length === s.codePoints.length) return [s.codePoints[s.rtl ? s.codePoints.length - 1 - i : i]!];
  // Otherwise the lowest character the font's cmap maps to the glyph (a property of the font).
  const cp = lowestCodePointOf(font).get(s.glyphs[i]!);
  return cp === undefined ? [] : [cp];
}

const lowestCodePoints = new WeakMap<Font, Map<number, number>>();

/** Glyph id → the lowest code point the font maps to it, from fontkit's public character set. */
export function lowestCodePointOf(font: Font): Map<number, number> {
  let map = lowestCodePoints.get(font);
  if (!map) {
    map = new Map();
    for (const cp of font.characterSet) {
      const id = font.glyphForCodePoint(cp).id;
      const known = map.get(id);
      if (known === undefined || cp < known) map.set(id, cp);
    }
    lowestCodePoints.set(font, map);
  }
  return map;
}

/** Numbers to 0.01 pt (3.5 µm): far finer than any printer dot. */
function f(v: number): string {
  return String(Math.round(v * 100) / 100);
}

/** A circle as four Bézier arcs. */
function circle(cx: number, cy: number, r: number): string {
  const k = r * 0.5522847498;
  return [
    `${f(cx + r)} ${f(cy)} m`,
    `${f(cx + r)} ${f(cy + k)} ${f(cx + k)} ${f(cy + r)} ${f(cx)} ${f(cy + r)} c`,
    `${f(cx - k)} ${f(cy + r)} ${f(cx - r)} ${f(cy + k)} ${f(cx - r)} ${f(cy)} c`,
    `${f(cx - r)} ${f(cy - k)} ${f(cx - k)} ${f(cy - r)} ${f(cx)} ${f(cy - r)} c`,
    `${f(cx + k)} ${f(cy - r)} ${f(cx + r)} ${f(cy - k)} ${f(cx + r)} ${f(cy)} c h`,
  ].join('\n');
}

type Doc = InstanceType<typeof PDFDocument>;

/**
 * A Type 3 font of two glyphs, a MaxiCode hexagon ('1') and a blank ('0'), each one pitch wide
 * (100 units at 1/100 pitch): a MaxiCode is then 33 short strings instead of 3,000 path
 * operators, which keeps the PDF small and fast to write and to rasterise.
 */
function hexagonFont(doc: Doc): string {
  const name = 'MaxiHex';
  const page = (doc as unknown as { page: { fonts: Record<string, unknown> } }).page;
  if (page.fonts[name]) return name;
  const corners = hexagonCorners(0);
  const c = hexagonCentre(0);
  const path = corners.map(([x, y], i) => `${Math.round((x - c.cx) * 100) + 50} ${Math.round((c.cy - y) * 100)} ${i ? 'l' : 'm'}`).join(' ');
  const hex = doc.ref({});
  hex.end(`100 0 0 -60 100 60 d1\n${path} h f`);
  const blank = doc.ref({});
  blank.end('100 0 0 0 0 0 d1');
  const toUnicode = doc.ref({});
  toUnicode.end([
    '/CIDInit /ProcSet findresource begin 12 dict begin begincmap',
    '/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def',
    '/CMapName /Adobe-Identity-UCS def /CMapType 2 def',
    '1 begincodespacerange <00> <FF> endcodespacerange',
    '2 beginbfchar <30> <0020> <31> <0020> endbfchar',
    'endcmap CMapName currentdict /CMap defineresource pop end end',
  ].join('\n'));
  const font = doc.ref({
    Type: 'Font',
    Subtype: 'Type3',
    FontBBox: [0, -60, 100, 60],
    FontMatrix: [0.01, 0, 0, 0.01, 0, 0],
    CharProcs: { blank, hex },
    Encoding: { Type: 'Encoding', Differences: [48, 'blank', 'hex'] },
    FirstChar: 48,
    LastChar: 49,
    Widths: [100, 100],
    Resources: {},
    ToUnicode: toUnicode,
  });
  font.end(''); // a dictionary, no stream
  page.fonts[name] = font;
  return name;
}

function maxiCodeAsText(doc: Doc, b: BarcodePrimitive, pageHeight: number): string {
  if (b.modules.shape !== 'hexagons') return '';
  const font = hexagonFont(doc);
  const rows = new Map<number, string[]>();
  for (const i of b.modules.dark) {
    const row = Math.floor(i / 30);
    let cells = rows.get(row);
    if (!cells) {
      cells = Array<string>(30).fill('0');
      rows.set(row, cells);
    }
    cells[i % 30] = '1';
  }
  // Text space is y-up: undo pdfkit's y-down page transform for this block.
  const ops = [`q 1 0 0 -1 0 ${f(pageHeight)} cm BT /${font} ${f(b.module)} Tf`];
  for (const [row, cells] of [...rows].sort((a, c) => a[0] - c[0])) {
    const { cy } = hexagonCentre(row * 30);
    const x = b.x + (row & 1 ? 0.5 : 0) * b.module;
    ops.push(`1 0 0 1 ${f(x)} ${f(pageHeight - (b.y + cy * b.module))} Tm (${cells.join('').replace(/0+$/, '')}) Tj`);
  }
  ops.push('ET Q');
  const rings = bullseyeRings(b);
  for (const ring of rings) ops.push(`${circle(ring.cx, ring.cy, ring.outer)}\n${circle(ring.cx, ring.cy, ring.inner)}\nf*`);
  return ops.join('\n');
}

function creationDate(d: Drawing): Date {
  const t = d.meta?.createdAt ? Date.parse(d.meta.createdAt) : NaN;
  return new Date(Number.isFinite(t) ? t : Date.UTC(2000, 0, 1));
}

export function drawingToPdf(drawing: Drawing): Promise<Buffer> {
  const chunks: Buffer[] = [];
  return pagesToPdf([drawing], drawing.meta ?? {}, (c) => {
    chunks.push(c);
  }).then(() => Buffer.concat(chunks));
}

/**
 * Writes a PDF of one page per drawing, each page its drawing's size, handing the bytes to `write`
 * as pdfkit produces them: each page goes out when the next begins, so a long document is never
 * held whole. `write` may return a promise (the reader is behind); the next page waits for it.
 */
export async function pagesToPdf(pages: Iterable<Drawing>, meta: NonNullable<Drawing['meta']>, write: (chunk: Buffer) => void | Promise<void>): Promise<void> {
  const it = pages[Symbol.iterator]();
  let next = it.next();
  if (next.done) throw new Error('a PDF needs at least one page');
  const created = creationDate({ widthPt: 0, heightPt: 0, primitives: [], meta });
  const doc = new PDFDocument({
    size: [next.value.widthPt, next.value.heightPt],
    margin: 0,
    font: null as unknown as string, // no default Helvetica: nothing is drawn with it
    info: {
      Title: meta.title ?? 'Label',
      Subject: meta.subject ?? '',
      Producer: 'shipping-platform',
      Creator: 'shipping-platform',
      CreationDate: created,
      ModDate: created,
    },
    autoFirstPage: true,
  });
  const ended = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });
  ended.catch(() => {}); // awaited below; a failure before then must not go unhandled
  let pending: Promise<void> | undefined;
  doc.on('data', (c: Buffer) => {
    const w = write(c);
    if (!w) return;
    pending = (pending ?? Promise.resolve()).then(() => w);
    // Awaited in page order below; until then a failed write (the reader went away) must not count
    // as unhandled, which would end the thread.
    w.catch(() => {});
    pending.catch(() => {});
  });
  drawPage(doc, next.value);
  for (next = it.next(); !next.done; next = it.next()) {
    // The finished page goes out now: when the reader is behind, wait for it.
    doc.addPage({ size: [next.value.widthPt, next.value.heightPt], margin: 0 });
    await new Promise<void>((resolve) => setImmediate(resolve)); // pdfkit hands its data out on a later tick
    if (pending) {
      const p = pending;
      pending = undefined;
      await p;
    }
    drawPage(doc, next.value);
  }
  doc.end();
  await ended;
  if (pending) await pending;
}

/** The faces registered with each document. */
const facesOf = new WeakMap<Doc, Set<Face>>();

function drawPage(doc: Doc, drawing: Drawing): void {
  // pdfkit's path helpers format every number through several layers; barcodes have hundreds of
  // shapes, so their path operators are written directly (pdfkit's page space is y-down already).
  const raw = doc as unknown as { addContent(s: string): void };
  let currentFont: Face | undefined;
  const registered = facesOf.get(doc) ?? new Set<Face>();
  facesOf.set(doc, registered);
  for (const p of drawing.primitives) {
    switch (p.kind) {
      case 'text': {
        for (const run of placeText(p).runs) {
          if (currentFont !== run.face) {
            // A face is registered with the document when it first draws there: a CJK face is parsed only for text that needs it.
            if (!registered.has(run.face)) {
              doc.registerFont(run.face, pdfFont(run.face) as unknown as string);
              registered.add(run.face);
            }
            doc.font(run.face);
            currentFont = run.face;
          }
          // `features` makes pdfkit shape the whole run at once (as the other backends do) instead of
          // word by word, and with the same features as the other backends (no Latin ligatures).
          doc.fontSize(p.size).text(run.text, run.left, p.y, { lineBreak: false, baseline: 'alphabetic', features: NO_LIGATURES } as unknown as PDFKit.Mixins.TextOptions);
        }
        break;
      }
      case 'line':
        raw.addContent(`${f(p.width)} w ${f(p.x1)} ${f(p.y1)} m ${f(p.x2)} ${f(p.y2)} l S`);
        break;
      case 'box': {
        const rect = `${f(p.x)} ${f(p.y)} ${f(p.w)} ${f(p.h)} re`;
        if (p.fill && p.stroke) raw.addContent(`${f(p.stroke)} w ${rect} B`);
        else if (p.fill) raw.addContent(`${rect} f`);
        else raw.addContent(`${f(p.stroke ?? 1)} w ${rect} S`);
        break;
      }
      case 'barcode': {
        if (p.modules.shape === 'hexagons') {
          raw.addContent(maxiCodeAsText(doc, p, drawing.heightPt));
          break;
        }
        const sh = barcodeShapes(p);
        const ops: string[] = [];
        for (const r of sh.rects) ops.push(`${f(r.x)} ${f(r.y)} ${f(r.w)} ${f(r.h)} re`);
        for (const poly of sh.polygons) {
          let d = `${f(poly[0]![0])} ${f(poly[0]![1])} m`;
          for (let i = 1; i < poly.length; i++) d += ` ${f(poly[i]![0])} ${f(poly[i]![1])} l`;
          ops.push(`${d} h`);
        }
        if (ops.length) raw.addContent(`${ops.join('\n')}\nf`);
        for (const ring of sh.rings) raw.addContent(`${circle(ring.cx, ring.cy, ring.outer)}\n${circle(ring.cx, ring.cy, ring.inner)}\nf*`);
        break;
      }
      case 'image': {
        const runs = imageRuns(p).map((r) => `${f(r.x)} ${f(r.y)} ${f(r.w)} ${f(r.h)} re`);
        if (runs.length) raw.addContent(`${runs.join('\n')}\nf`);
        break;
      }
    }
  }
}

// PDF backend: pdfkit, DejaVu Sans embedded as a subset (CID font, Identity-H, with ToUnicode so
// text can be searched and copied). pdfkit would parse and subset the font again for every document;
// instead it gets the fontkit font parsed once per process, with shaping served from our cache and
// the subset written by our own TrueType subsetter.
import PDFDocument from 'pdfkit';
import type { Font } from 'fontkit';
import { dejaVu, shape } from './fonts.ts';
import type { LoadedFont, ShapedText } from './fonts.ts';
import { barcodeShapes } from './geometry.ts';
import type { Drawing } from './model.ts';
import { TrueTypeSubset, parseTrueType } from './ttf-subset.ts';

const pdfFonts: { regular?: Font; bold?: Font } = {};

/** The fontkit font as pdfkit sees it, with shaping and subsetting replaced by cached versions. */
function pdfFont(bold: boolean): Font {
  const key = bold ? 'bold' : 'regular';
  let f = pdfFonts[key];
  if (!f) {
    const loaded: LoadedFont = dejaVu(bold);
    const parsed = parseTrueType(loaded.bytes);
    const font = loaded.font;
    f = Object.create(font) as Font;
    const advanceOf = (id: number): number => font.getGlyph(id).advanceWidth;
    Object.assign(f, {
      createSubset: () => new TrueTypeSubset(parsed),
      // pdfkit scales the positions it gets in place, so every call gets fresh objects.
      layout: (text: string) => {
        const s = shape(text, bold);
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
    pdfFonts[key] = f;
  }
  return f;
}

/**
 * The characters a glyph stands for, for the PDF's ToUnicode map: a pure function of the text, so
 * the document does not depend on which text the process shaped first (fontkit's glyph objects
 * remember the first characters they were made for).
 */
function codePointsOf(s: ShapedText, i: number, font: Font): number[] {
  if (s.glyphs.length === s.codePoints.length) return [s.codePoints[s.rtl ? s.codePoints.length - 1 - i : i]!];
  // Ligatures, lam-alef, marks: what the font's cmap says the glyph is (a property of the font).
  const cmap = (font as unknown as { _cmapProcessor?: { codePointsForGlyph(g: number): number[] } })._cmapProcessor;
  const cps = cmap?.codePointsForGlyph(s.glyphs[i]!) ?? [];
  return cps.length ? [Math.min(...cps)] : [];
}

function creationDate(d: Drawing): Date {
  const t = d.meta?.createdAt ? Date.parse(d.meta.createdAt) : NaN;
  return new Date(Number.isFinite(t) ? t : Date.UTC(2000, 0, 1));
}

export function drawingToPdf(drawing: Drawing): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const created = creationDate(drawing);
    const doc = new PDFDocument({
      size: [drawing.widthPt, drawing.heightPt],
      margin: 0,
      font: null as unknown as string, // no default Helvetica: nothing is drawn with it
      info: {
        Title: drawing.meta?.title ?? 'Label',
        Subject: drawing.meta?.subject ?? '',
        Producer: 'shipping-platform',
        Creator: 'shipping-platform',
        CreationDate: created,
        ModDate: created,
      },
      autoFirstPage: true,
    });
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);

    let currentFont: boolean | undefined;
    for (const p of drawing.primitives) {
      switch (p.kind) {
        case 'text': {
          const bold = p.bold ?? false;
          if (currentFont !== bold) {
            doc.font(pdfFont(bold) as unknown as string);
            currentFont = bold;
          }
          const s = shape(p.text, bold);
          const width = (s.advance / s.unitsPerEm) * p.size;
          const x = p.anchor === 'middle' ? p.x - width / 2 : p.anchor === 'end' ? p.x - width : p.x;
          // `features` makes pdfkit shape the whole line at once (as the other backends do)
          // instead of word by word.
          doc.fontSize(p.size).text(p.text, x, p.y, { lineBreak: false, baseline: 'alphabetic', features: [] } as PDFKit.Mixins.TextOptions);
          break;
        }
        case 'line':
          doc.moveTo(p.x1, p.y1).lineTo(p.x2, p.y2).lineWidth(p.width).stroke('#000');
          break;
        case 'box':
          doc.rect(p.x, p.y, p.w, p.h);
          if (p.fill && p.stroke) doc.lineWidth(p.stroke).fillAndStroke('#000', '#000');
          else if (p.fill) doc.fill('#000');
          else doc.lineWidth(p.stroke ?? 1).stroke('#000');
          break;
        case 'barcode': {
          const sh = barcodeShapes(p);
          for (const r of sh.rects) doc.rect(r.x, r.y, r.w, r.h);
          for (const poly of sh.polygons) doc.polygon(...poly);
          if (sh.rects.length || sh.polygons.length) doc.fill('#000');
          for (const ring of sh.rings) {
            doc.circle(ring.cx, ring.cy, ring.outer).circle(ring.cx, ring.cy, ring.inner).fill('#000', 'even-odd');
          }
          break;
        }
      }
    }
    doc.end();
  });
}

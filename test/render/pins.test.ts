// pdfkit and fontkit are pinned exactly: the PDF backend hands pdfkit a fontkit font of its own
// making (shaping and subsetting replaced) and writes to two pdfkit internals (src/render/pdf.ts,
// docs/decisions.md). An upgrade must fail here first, so someone checks those seams on purpose.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { loadFace, shape } from '../../src/render/fonts.ts';
import { lowestCodePointOf } from '../../src/render/pdf.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const PINS = { pdfkit: '0.20.2', fontkit: '2.0.4' };

describe('pinned libraries', () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  for (const [name, version] of Object.entries(PINS)) {
    it(`${name} is pinned to ${version} and installed at it`, () => {
      assert.equal(manifest.dependencies[name], version, `package.json must pin ${name} exactly; after checking src/render/pdf.ts against the new version, update PINS here`);
      assert.equal((JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version, version);
    });
  }

  it("pdfkit's page keeps its font resources where the MaxiCode font is added", async () => {
    const { default: PDFDocument } = await import('pdfkit');
    const doc = new PDFDocument({ size: [100, 100], margin: 0, font: null as unknown as string });
    const page = (doc as unknown as { page: { fonts?: unknown } }).page;
    assert.equal(typeof page.fonts, 'object');
    assert.equal(typeof (doc as unknown as { addContent?: unknown }).addContent, 'function');
  });
});

describe('the glyph → character map of the PDF text layer', () => {
  const font = loadFace('r').font;
  const map = lowestCodePointOf(font);

  it('a plain letter maps back to itself', () => {
    for (const ch of 'AZaz09Жλ') {
      const cp = ch.codePointAt(0)!;
      assert.equal(map.get(font.glyphForCodePoint(cp).id), cp, ch);
    }
  });

  it("fontkit's shaping gives each glyph this text's characters (shaped through a font whose getGlyph we replace), though fontkit made the glyph for another character first", () => {
    // lowestCodePointOf has made fontkit's glyph objects from every character of the cmap, the
    // lam-alef ligature's from U+FEFB; its shaping must still say lam and alef.
    assert.equal(map.get(font.glyphForCodePoint(0xfefb).id), 0xfefb);
    const s = shape('\u0633\u0644\u0627\u0645', 'r');
    assert.equal(s.glyphs.length, 3, 'DejaVu Sans shapes سلام with lam-alef as one glyph');
    assert.ok(s.rtl);
    assert.deepEqual(s.chars, [[0x645], [0x644, 0x627], [0x633]], 'in drawing order: meem, lam-alef, seen');
  });
});

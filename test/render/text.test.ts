// Text on the label: any script DejaVu Sans has is drawn (PDF, SVG, PNG, ZPL), nothing the user
// types can make the renderer throw or print outside the label.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { Resvg } from '@resvg/resvg-js';
import fc from 'fast-check';
import { LABEL_SIZES, LABEL_FORMATS, layoutLabel, renderLabel } from '../../src/render/index.ts';
import type { LabelData } from '../../src/render/index.ts';
import { faceRuns, loadFace, placeText, textWidth } from '../../src/render/fonts.ts';
import { cleanText, fitText, postalCapitals } from '../../src/render/text.ts';
import { DHL_LABEL, NASTY_LABEL, UPS_LABEL } from './fixtures.ts';

const run = promisify(execFile);

const MULTILINGUAL: LabelData = {
  ...UPS_LABEL,
  labelId: 'lbl_text',
  from: { ...UPS_LABEL.from, name: 'Jürgen Müller', company: 'Ελλάδα Export' },
  to: { name: 'Анна Каренина', company: 'Ελλάδα', street1: 'Тверская ул. 7', city: 'Москва', postalCode: '125009', country: 'RU' },
};

async function pdfText(pdf: Buffer): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'render-text-'));
  try {
    await writeFile(join(dir, 'l.pdf'), pdf);
    return (await run('pdftotext', ['-enc', 'UTF-8', join(dir, 'l.pdf'), '-'])).stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A strict enough well-formedness check: balanced tags, quoted attributes, known entities only. */
function assertWellFormedXml(xml: string): void {
  const body = xml.replace(/^<\?xml[^?]*\?>\s*/, '');
  const stack: string[] = [];
  const token = /<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/gy;
  let m: RegExpExecArray | null;
  let pos = 0;
  while (pos < body.length) {
    m = token.exec(body);
    if (!m) break;
    pos = token.lastIndex;
    if (m[5] !== undefined) {
      assert.ok(!/&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(m[5]), `bad entity in text ${m[5].slice(0, 40)}`);
      continue;
    }
    const [, closing, name, attrs, selfClosing] = m;
    assert.ok(!/&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(attrs!), `bad entity in attributes of <${name}>`);
    if (closing) assert.equal(stack.pop(), name, `</${name}> closes the wrong element`);
    else if (!selfClosing) stack.push(name!);
  }
  assert.ok(pos >= body.trimEnd().length, `unparsable XML at ${body.slice(pos, pos + 60)}`);
  assert.deepEqual(stack, [], 'unclosed elements');
}

describe('non-Latin text', () => {
  it('the PDF embeds the glyphs: pdftotext reads МОСКВА (the locality in capitals across a border), Ελλάδα, Müller back', async () => {
    const text = await pdfText((await renderLabel(MULTILINGUAL, 'PDF')).body);
    for (const word of ['МОСКВА', 'Ελλάδα', 'Müller', 'Анна Каренина', 'RUSSIAN FEDERATION']) assert.ok(text.includes(word), `${word} in ${text}`);
  });

  it('the PDF\'s text layer reads words as typed: no Latin ligature code points (ﬀ, ﬃ) for a search to miss', async () => {
    const text = await pdfText((await renderLabel({ ...UPS_LABEL, to: { ...UPS_LABEL.to, name: 'Coffee Office Shuffle' } }, 'PDF')).body);
    assert.match(text, /Coffee Office Shuffle/);
    assert.doesNotMatch(text, /[\ufb00-\ufb06]/);
  });

  it('Arabic with lam-alef, drawn as the ligature, reads back as its letters in reading order, not as presentation forms', async () => {
    // Each word has lam-alef (لا) but شركة, which has none, and a joined form for every other letter.
    for (const company of ['سلام', 'شركة النور للتجارة العامة والمقاولات المحدودة', 'شركة النور']) {
      const text = await pdfText((await renderLabel({ ...UPS_LABEL, to: { ...UPS_LABEL.to, company } }, 'PDF')).body);
      assert.ok(text.includes(company), `${company} in ${JSON.stringify(text.match(/.*[\u0600-\u06ff\ufb50-\ufeff].*/g))}`);
      assert.doesNotMatch(text, /[\ufb50-\ufdff\ufe70-\ufefe]/, 'no presentation forms');
    }
  });

  it('the PDF embeds DejaVu Sans as a subset and no other text font', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'render-fonts-'));
    try {
      await writeFile(join(dir, 'l.pdf'), (await renderLabel(MULTILINGUAL, 'PDF')).body);
      const out = (await run('pdffonts', [join(dir, 'l.pdf')])).stdout.trim().split('\n').slice(2);
      const text = out.filter((l) => !/\sType 3\s/.test(l));
      assert.equal(text.length, 2, out.join('\n'));
      for (const line of text) assert.match(line, /^[A-Z]{6}\+DejaVuSans(-Bold)?\s+CID TrueType\s+Identity-H\s+yes yes yes/);
      // The UPS label's MaxiCode hexagons are glyphs of a small Type 3 font in the PDF itself.
      assert.ok(out.some((l) => /\sType 3\s/.test(l)), out.join('\n'));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('the SVG is well-formed XML, carries the text, and needs no font to render', async () => {
    const svg = (await renderLabel(MULTILINGUAL, 'SVG')).body.toString('utf8');
    assertWellFormedXml(svg);
    for (const word of ['МОСКВА', 'Ελλάδα', 'Jürgen Müller']) assert.ok(svg.includes(word), word);
    // resvg's XML parser is strict; with no fonts at all the glyph outlines still draw.
    const img = new Resvg(svg, { font: { loadSystemFonts: false } }).render();
    const px = img.pixels;
    let dark = 0;
    for (let i = 0; i < px.length; i += 4) if (px[i]! < 128 && px[i + 1]! < 128 && px[i + 3]! > 128) dark++;
    assert.ok(dark > 10000, `drawn: ${dark} dark pixels`);
  });

  it('the PNG draws Cyrillic text (the name line is not empty)', async () => {
    const drawing = layoutLabel(MULTILINGUAL);
    const name = drawing.primitives.find((p) => p.kind === 'text' && p.text === 'Анна Каренина');
    assert.ok(name && name.kind === 'text');
    const { rasterize } = await import('../../src/render/raster.ts');
    const { isInk } = await import('../../src/render/bitmap.ts');
    const img = rasterize({ ...drawing, primitives: [name] }, 203);
    let dark = 0;
    for (let y = 0; y < img.height; y++) for (let x = 0; x < img.width; x++) if (isInk(img, x, y)) dark++;
    assert.ok(dark > 300, `${dark} dark pixels`);
  });
});

describe('capitals for the post (postalCapitals)', () => {
  it('Greek loses its tonos (and the polytonic accents and breathings) in capitals; the dialytika stays', () => {
    assert.equal(postalCapitals('Αθήνα'), 'ΑΘΗΝΑ');
    assert.equal(postalCapitals('Ηράκλειο'), 'ΗΡΑΚΛΕΙΟ');
    assert.equal(postalCapitals('Ελληνικό-Αργυρούπολη'), 'ΕΛΛΗΝΙΚΟ-ΑΡΓΥΡΟΥΠΟΛΗ');
    assert.equal(postalCapitals('Καΐρου ϊ ϋ ΰ'), 'ΚΑΪΡΟΥ Ϊ Ϋ Ϋ');
    // A tonos that keeps two vowels apart becomes a dialytika, as Greek capitals write it.
    assert.equal(postalCapitals('Μαΐου άι'), 'ΜΑΪΟΥ ΑΪ');
    assert.equal(postalCapitals('Ἀθῆναι'), 'ΑΘΗΝΑΙ');
    // But for the word ή ("or"), which keeps it: Ή.
    assert.equal(postalCapitals('Αθήνα ή Πειραιάς'), 'ΑΘΗΝΑ Ή ΠΕΙΡΑΙΑΣ');
    // Other scripts as toUpperCase has them, also beside Greek.
    assert.equal(postalCapitals('105 63 Αθήνα, Straße é Ørsted Москва'), '105 63 ΑΘΗΝΑ, STRASSE É ØRSTED МОСКВА');
  });

  it('property: no accent but the dialytika is left on a Greek capital (but the word Ή), and the letters are toUpperCase\'s', () => {
    const chars = [...'αβγδεζηθικλμνξοπρστυφχψωςάέήίόύώΐΰϊϋἀἁὰᾶᾳὐὖῆῥΆΈΉΊΌΎΏΪΫabcéñßøıİ ,-0123456789', '\u0301', '\u0308', '\u0342', 'е\u0301'];
    const strip = (t: string) => t.normalize('NFD').replace(/\p{M}/gu, '');
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...chars), maxLength: 40 }), (text) => {
        const capitals = postalCapitals(text);
        const words = capitals.normalize('NFD').replace(/(?<!\p{L}\p{M}*)Η(\p{M}*)(?!\p{L})/gu, (_, marks: string) => `Η${marks.replace('\u0301', '')}`);
        assert.doesNotMatch(words, /\p{Script=Greek}\p{M}*[\u0300\u0301\u0313\u0314\u0342\u0343\u0344]/u, `${text} → ${capitals}`);
        assert.equal(strip(capitals), strip(text.toUpperCase()), text);
      }),
      { numRuns: 500 },
    );
  });
});

describe('the service banner', () => {
  it('a return with a CN23 mark still names its whole service on every size (smaller type before an ellipsis)', () => {
    const customs = { contentsType: 'returned_goods' as const, signer: 'A', items: [{ description: 'x', quantity: 1, netWeight: { value: 1, unit: 'kg' as const }, value: { amount: 500, currency: 'EUR' }, hsCode: '123456', originCountry: 'DE' }] };
    for (const size of LABEL_SIZES) {
      const drawing = JSON.stringify(layoutLabel({ ...DHL_LABEL, size, serviceName: 'DHL EXPRESS WORLDWIDE RETURN', isReturn: true, customs, customsForm: 'CN23' }));
      assert.ok(drawing.includes('"DHL EXPRESS WORLDWIDE RETURN"') && !drawing.includes('DHL EXPRESS WORLDWIDE RET…'), size);
    }
  });
});

describe('text in runs of one face', () => {
  it('CJK is drawn with the Noto faces, the rest with DejaVu; spaces stay in their run, a mark only in a face that has it', () => {
    assert.deepEqual(faceRuns('Müller 東京都 1-1 서울'), [
      { face: 'r', text: 'Müller ' },
      { face: 'c', text: '東京都 ' },
      { face: 'r', text: '1-1 ' },
      { face: 'k', text: '서울' },
    ]);
    assert.deepEqual(faceRuns('Müller', true), [{ face: 'b', text: 'Müller' }]);
    // Noto Sans SC has no combining dot below: DejaVu draws it, not the CJK face's missing-glyph box.
    assert.deepEqual(faceRuns('東\u0323'), [{ face: 'c', text: '東' }, { face: 'r', text: '\u0323' }]);
  });

  it('a line that starts right to left places its runs from the right; the runs together are as wide as measured', () => {
    const p = placeText({ text: 'שלום 東京', size: 10, x: 100, anchor: 'end' });
    const [hebrew, cjk] = p.runs;
    assert.equal(hebrew!.face, 'r');
    assert.equal(cjk!.face, 'c');
    assert.ok(cjk!.left < hebrew!.left, 'the CJK run is left of the Hebrew one');
    assert.ok(Math.abs(p.left + p.width - 100) < 1e-9);
    assert.ok(Math.abs(p.width - textWidth('שלום 東京', 10)) < 1e-9);
    const ltr = placeText({ text: 'Tokyo 東京', size: 10, x: 0 });
    assert.ok(ltr.runs[0]!.left < ltr.runs[1]!.left, 'left to right otherwise');
  });

  it('a number or a Latin word inside a right-to-left line is drawn left to right: a house number is not reversed', () => {
    const one = loadFace('r').font.glyphForCodePoint(0x31).id;
    const two = loadFace('r').font.glyphForCodePoint(0x32).id;
    for (const text of ['شارع الملك فهد 12', 'רחוב הרצל 12']) {
      const p = placeText({ text, size: 10, x: 0 });
      assert.deepEqual(p.runs.map((r) => r.text), [text.slice(0, -2), '12'], text);
      const [words, number] = p.runs;
      assert.ok(words!.shaped.rtl && !number!.shaped.rtl, text);
      assert.deepEqual(number!.shaped.glyphs, [one, two], `${text}: 1 then 2, left to right`);
      assert.ok(number!.left < words!.left, `${text}: the number at the line's left end, where a right-to-left reader ends`);
      assert.ok(Math.abs(p.width - textWidth(text, 10)) < 1e-9);
    }
    // A Latin name inside Arabic keeps its letters' order; a line of Latin text with no right-to-left character is one run.
    assert.deepEqual(faceRuns('شركة ACME Corp للتجارة').map((r) => r.text), ['شركة ', 'ACME Corp', ' للتجارة']);
    // A space between a number and the Arabic after it goes with the Arabic: one space each side of 345 when drawn.
    assert.deepEqual(faceRuns('شقة 345 الطابق 7').map((r) => r.text), ['شقة ', '345', ' الطابق ', '7']);
    assert.deepEqual(faceRuns('Suite 12, Building 3'), [{ face: 'r', text: 'Suite 12, Building 3' }]);
  });
});

describe('hostile input never throws and never leaves the label', () => {
  for (const size of LABEL_SIZES) {
    for (const format of LABEL_FORMATS) {
      it(`${size} ${format}`, async () => {
        const doc = await renderLabel({ ...NASTY_LABEL, size }, format);
        assert.ok(doc.body.length > 100);
      });
    }
  }

  it('control characters are gone, CJK is drawn, missing glyphs become ? and emoji are dropped', () => {
    const d = layoutLabel(NASTY_LABEL);
    const texts = d.primitives.flatMap((p) => (p.kind === 'text' ? [p.text] : []));
    for (const t of texts) assert.ok(!/[\u0000-\u001f\u007f-\u009f]/.test(t), JSON.stringify(t));
    assert.ok(texts.some((t) => t.startsWith('ctrl[31mred')), texts.join(' | '));
    assert.ok(texts.some((t) => t.startsWith('Emoji Street')), 'emoji dropped');
    assert.ok(texts.some((t) => t.startsWith('東京都千代田区 1-1')), 'CJK is drawn (Noto Sans), not ?');
    // What no face has (Devanagari, Thai, a private-use character) is `?`.
    assert.deepEqual(['नमस्ते', 'ทดสอบ', '\ue000x', '서울 東京 ひらがな、'].map(cleanText), ['?', '?', '?x', '서울 東京 ひらがな、']);
    assert.ok(texts.some((t) => t.endsWith('…')), 'long lines are cut with an ellipsis');
  });

  it('property: any address text stays inside the label', () => {
    const anyText = fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 120 }), fc.constantFrom('', ' ', '\u202e\u0627\u0644\u0639\u0631\u0628\u064a\u0629', 'x'.repeat(1000)));
    fc.assert(
      fc.property(anyText, anyText, anyText, anyText, fc.constantFrom(...LABEL_SIZES), (name, street, city, postal, size) => {
        const d = layoutLabel({ ...UPS_LABEL, size, to: { ...UPS_LABEL.to, name, street1: street, city, postalCode: postal } });
        for (const p of d.primitives) {
          if (p.kind !== 'text') continue;
          const w = textWidth(p.text, p.size, p.bold ?? false);
          const left = p.anchor === 'middle' ? p.x - w / 2 : p.anchor === 'end' ? p.x - w : p.x;
          assert.ok(left >= -0.01 && left + w <= d.widthPt + 0.01, `${JSON.stringify(p.text)} spans ${left}..${left + w}`);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('property: cleanText leaves no control characters, fitText never exceeds its width', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.integer({ min: 10, max: 300 }), fc.integer({ min: 6, max: 24 }), fc.boolean(), (s, maxWidth, size, bold) => {
        const clean = cleanText(s);
        assert.ok(!/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(clean));
        const fitted = fitText(clean, maxWidth, size, bold);
        assert.ok(textWidth(fitted.text, fitted.size, bold) <= maxWidth + 1e-6);
      }),
      { numRuns: 200 },
    );
  });
});

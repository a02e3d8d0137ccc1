// Fonts ship with the project (never a system font): DejaVu Sans from the `dejavu-fonts-ttf` package
// for every script it has, and for the Chinese, Japanese and Korean characters it lacks Noto Sans SC
// and Noto Sans KR (`@expo-google-fonts/noto-sans-sc`, `-kr`: Google's TrueType builds, OFL). Each is
// parsed once per process with fontkit, when first needed; shaping results and glyph outlines are
// cached because every label repeats them.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as fontkit from 'fontkit';
import type { Font, Glyph } from 'fontkit';
import { createCache, type Cache } from '../cache.ts';


const require = createRequire(import.meta.url);

/**
 * A face: DejaVu Sans regular (`r`) and bold (`b`); Noto Sans SC (`c`: Chinese characters, kana) and
 * Noto Sans KR (`k`: Hangul), regular only, for text of either weight. The letter also prefixes the
 * glyph names the vector backends define.
 */
export type Face = 'r' | 'b' | 'c' | 'k';

export const FONT_FILES: Record<Face, string> = {
  r: require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'),
  b: require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf'),
  c: require.resolve('@expo-google-fonts/noto-sans-sc/400Regular/NotoSansSC_400Regular.ttf'),
  k: require.resolve('@expo-google-fonts/noto-sans-kr/400Regular/NotoSansKR_400Regular.ttf'),
};

export interface LoadedFont {
  face: Face;
  bytes: Buffer;
  font: Font;
  /** The same font for `layout()`, whose glyphs say which characters of this text they stand for. */
  shaper: Font;
  unitsPerEm: number;
  /** Ascent and descent in font units (descent negative). */
  ascent: number;
  descent: number;
}

const loaded: Partial<Record<Face, LoadedFont>> = {};

export function loadFace(face: Face): LoadedFont {
  let f = loaded[face];
  if (!f) {
    const bytes = readFileSync(FONT_FILES[face]);
    const font = fontkit.create(bytes);
    f = { face, bytes, font, shaper: shaper(font), unitsPerEm: font.unitsPerEm, ascent: font.ascent, descent: font.descent };
    loaded[face] = f;
  }
  return f;
}

/**
 * fontkit keeps one glyph object per glyph id, holding the characters of whichever text made it
 * first, so a run's `glyph.codePoints` may be another text's (the lam-alef glyph made from U+FEFB
 * stays U+FEFB). Layout through this font gets a fresh glyph object for every glyph it makes, with the
 * characters the shaper gave it in this text: lam and alef for lam-alef, the letter for its joined form.
 */
function shaper(font: Font): Font {
  const f = Object.create(font) as Font;
  f.getGlyph = (id: number, codePoints: number[] = []) => Object.create(font.getGlyph(id, codePoints), { codePoints: { value: codePoints } }) as Glyph;
  // fontkit makes a font's layout engine on first use and keeps it on that object; one inherited from
  // `font` would call `font.getGlyph`. So this one gets its own now, made for it, whichever lays out first.
  const engine = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(font), '_layoutEngine')?.get;
  if (!engine) throw new Error("fontkit's layout engine is not where the text shaping expects it (src/render/fonts.ts)");
  engine.call(f);
  return f;
}

/** A shaped run in font units: glyph ids with their pen positions (x grows right, y up). */
export interface ShapedText {
  glyphs: number[];
  /** Where each glyph is drawn (pen position plus offset). */
  x: number[];
  y: number[];
  /** The shaper's advances and offsets, as PDF text positioning needs them. */
  xAdvance: number[];
  xOffset: number[];
  /** Total advance in font units. */
  advance: number;
  unitsPerEm: number;
  /** The shaper reversed the glyphs (right-to-left script). */
  rtl: boolean;
  /** Code points of the shaped text. */
  codePoints: number[];
  /**
   * The characters each glyph stands for, in reading order (lam-alef: U+0644 U+0627), when the
   * glyphs account for every character of the text once; else undefined.
   */
  chars?: number[][];
}

/** A bounded cache for each face, made when the face is first used. */
function perFace<K extends {}, V extends {}>(max: number): (face: Face) => Cache<K, V> {
  const caches = new Map<Face, Cache<K, V>>();
  return (face) => {
    let cache = caches.get(face);
    if (!cache) {
      cache = createCache<K, V>({ max });
      caches.set(face, cache);
    }
    return cache;
  };
}

const SHAPE_CACHE_LIMIT = 4000;
const shapeCache = perFace<string, ShapedText>(SHAPE_CACHE_LIMIT);

/**
 * Latin ligatures off (ﬀ, ﬁ, ﬃ): a PDF's text layer would give their code points, so "Coffee" could
 * not be searched for or copied; the ligatures scripts need (Arabic's `rlig`) stay.
 */
export const NO_LIGATURES = { liga: false, clig: false, dlig: false };

/** Shapes `text` with one face (kerning, required ligatures, Arabic joining), cached per process. */
export function shape(text: string, face: Face): ShapedText {
  const cache = shapeCache(face);
  let s = cache.get(text);
  if (s) return s;
  const f = loadFace(face);
  const codePoints = Array.from(text, (c) => c.codePointAt(0)!);
  let run = f.font.layout(text, NO_LIGATURES);
  // One glyph a character, as in most text: each glyph is its character (pdf.ts). Otherwise (lam-alef,
  // marks) shaped again through `shaper`, whose glyphs say their characters: it costs about twice as
  // much, since fontkit's remembered glyph metrics are not reused.
  const oneToOne = run.glyphs.length === codePoints.length;
  if (!oneToOne) run = f.shaper.layout(text, NO_LIGATURES);
  const glyphs: number[] = [];
  const xs: number[] = [];
  const ys: number[] = [];
  const xAdvance: number[] = [];
  const xOffset: number[] = [];
  let pen = 0;
  for (let i = 0; i < run.glyphs.length; i++) {
    const p = run.positions[i]!;
    glyphs.push(run.glyphs[i]!.id);
    xs.push(pen + p.xOffset);
    ys.push(p.yOffset);
    xAdvance.push(p.xAdvance);
    xOffset.push(p.xOffset);
    pen += p.xAdvance;
  }
  const chars = oneToOne ? undefined : run.glyphs.map((g) => [...g.codePoints]);
  s = {
    glyphs, x: xs, y: ys, xAdvance, xOffset, advance: pen, unitsPerEm: f.unitsPerEm,
    rtl: run.direction === 'rtl', codePoints, chars: chars && sameCharacters(chars.flat(), codePoints) ? chars : undefined,
  };
  cache.set(text, s);
  return s;
}

/** Whether two lists hold the same characters, in any order (a mark inside a ligature comes after it). */
function sameCharacters(a: number[], b: number[]): boolean {
  if (a.length !== b.length) return false;
  const x = a.toSorted((p, q) => p - q);
  const y = b.toSorted((p, q) => p - q);
  return x.every((cp, i) => cp === y[i]);
}

/** The face that draws `codePoint` in a text of this weight: DejaVu where it has the character, else the first CJK face that does. */
function faceOf(codePoint: number, bold: boolean): Face | undefined {
  const dejavu: Face = bold ? 'b' : 'r';
  if (has(dejavu, codePoint)) return dejavu;
  // Before the CJK radicals only DejaVu is asked: the CJK faces' few symbols there (⑪, Ⓐ, 〈) print `?`.
  if (codePoint < 0x2e80) return undefined;
  if (has('c', codePoint)) return 'c';
  if (has('k', codePoint)) return 'k';
  return undefined;
}

const RIGHT_TO_LEFT = /[\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;
const LEFT_TO_RIGHT = /[\p{L}\p{Nd}]/u;

/** A character's own direction: right to left (Hebrew, Arabic letters and digits), left to right (other letters, digits), or none (spaces, punctuation, marks). */
function directionOf(ch: string): 'rtl' | 'ltr' | undefined {
  if (RIGHT_TO_LEFT.test(ch)) return 'rtl';
  return LEFT_TO_RIGHT.test(ch) ? 'ltr' : undefined;
}

/**
 * A text's runs of one face each (DejaVu's, and the CJK faces' for what DejaVu lacks) and of one
 * direction: in `شارع 12` the number is a run of its own, so it is not drawn right to left (`21`).
 */
export function faceRuns(text: string, bold = false): { face: Face; text: string }[] {
  const dejavu: Face = bold ? 'b' : 'r';
  const runs: { face: Face; text: string; direction?: 'rtl' | 'ltr' }[] = [];
  // Directions matter only where a right-to-left character is (most text has none: one test).
  const mixed = RIGHT_TO_LEFT.test(text);
  const line = mixed && rightToLeft(text) ? 'rtl' : 'ltr';
  // Spaces after a run that goes against the line wait for the next character: they go on with that
  // run if it goes on (`ACME Corp`), else they begin the next run, which then takes the line's way
  // (`شقة 345 الطابق`: the space after 345 belongs to the Arabic words on either side of it).
  let waiting = '';
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    const last = runs.at(-1);
    if (mixed && cp === 0x20 && last?.direction !== undefined && last.direction !== line) {
      waiting += ch;
      continue;
    }
    // A space goes on with the run it is in, so a CJK line is not cut at every space; so does a mark
    // the run's face has (else DejaVu draws it, which has every mark `cleanText` keeps).
    const joins = last && waiting === '' && (cp === 0x20 || (/\p{M}/u.test(ch) && has(last.face, cp)));
    const face = joins ? last.face : (faceOf(cp, bold) ?? dejavu);
    const direction = joins || !mixed ? undefined : directionOf(ch);
    // A character with no direction of its own goes on with the run it is in.
    if (last?.face === face && (direction === undefined || last.direction === undefined || last.direction === direction)) {
      last.text += waiting + ch;
      last.direction ??= direction;
    } else runs.push({ face, text: waiting + ch, direction });
    waiting = '';
  }
  if (waiting) runs.at(-1)!.text += waiting;
  return runs.map(({ face, text }) => ({ face, text }));
}

/** Whether a line reads right to left: its first character with a direction is Hebrew, Arabic, …. */
export function rightToLeft(text: string): boolean {
  for (const ch of text) {
    const direction = directionOf(ch);
    if (direction) return direction === 'rtl';
  }
  return false;
}

/** A run of one face, shaped and placed: its left edge, and points per font unit. */
export interface PlacedRun {
  face: Face;
  text: string;
  shaped: ShapedText;
  scale: number;
  left: number;
}

/** A text primitive shaped and placed: its runs from its left edge, and its width in points. */
export interface PlacedText {
  runs: PlacedRun[];
  width: number;
  left: number;
}

export function placeText(t: { text: string; size: number; x: number; bold?: boolean; anchor?: 'start' | 'middle' | 'end' }): PlacedText {
  const runs: PlacedRun[] = [];
  let width = 0;
  for (const { face, text } of faceRuns(t.text, t.bold ?? false)) {
    const shaped = shape(text, face);
    runs.push({ face, text, shaped, scale: t.size / shaped.unitsPerEm, left: 0 });
  }
  // A line that starts right to left (Hebrew, Arabic) reads its runs from the right, as fontkit
  // reads the characters inside each run: `שלום 東京` is drawn `東京 םולש`, `شارع 12` `12 عراش`.
  // (Not the full bidi algorithm: a line's runs go one way, the line's.)
  const visual = rightToLeft(t.text) ? runs.toReversed() : runs;
  for (const r of visual) {
    r.left = width;
    width += r.shaped.advance * r.scale;
  }
  const left = t.anchor === 'middle' ? t.x - width / 2 : t.anchor === 'end' ? t.x - width : t.x;
  for (const r of runs) r.left += left;
  return { runs, width, left };
}

/** Width of `text` in points at `size`. */
export function textWidth(text: string, size: number, bold = false): number {
  if (!text) return 0;
  let width = 0;
  for (const run of faceRuns(text, bold)) {
    const s = shape(run.text, run.face);
    width += (s.advance / s.unitsPerEm) * size;
  }
  return width;
}

// Per code point and per glyph: bounded by what the font holds.
const GLYPH_CACHE_LIMIT = 8192;
const coverage = perFace<number, boolean>(GLYPH_CACHE_LIMIT);

function has(face: Face, codePoint: number): boolean {
  const cache = coverage(face);
  let ok = cache.get(codePoint);
  if (ok === undefined) {
    ok = loadFace(face).font.hasGlyphForCodePoint(codePoint);
    cache.set(codePoint, ok);
  }
  return ok;
}

const drawable = createCache<number, boolean>({ max: GLYPH_CACHE_LIMIT });

/** Whether text of either weight can draw this code point: both DejaVu faces have it, or a CJK face does. */
export function hasGlyph(codePoint: number): boolean {
  let ok = drawable.get(codePoint);
  if (ok === undefined) {
    ok = (has('r', codePoint) && has('b', codePoint)) || (codePoint >= 0x2e80 && (has('c', codePoint) || has('k', codePoint)));
    drawable.set(codePoint, ok);
  }
  return ok;
}

export type PathCommand =
  | { op: 'M' | 'L'; x: number; y: number }
  | { op: 'Q'; x1: number; y1: number; x: number; y: number }
  | { op: 'C'; x1: number; y1: number; x2: number; y2: number; x: number; y: number }
  | { op: 'Z' };

const outlineCache = perFace<number, PathCommand[]>(GLYPH_CACHE_LIMIT);

/** A glyph's outline in font units with y pointing DOWN (the drawing model's orientation). */
export function glyphOutline(glyphId: number, face: Face): PathCommand[] {
  const cache = outlineCache(face);
  let out = cache.get(glyphId);
  if (out) return out;
  const glyph: Glyph = loadFace(face).font.getGlyph(glyphId);
  out = [];
  for (const c of glyph.path.commands) {
    const a = c.args;
    switch (c.command) {
      case 'moveTo': out.push({ op: 'M', x: a[0]!, y: -a[1]! }); break;
      case 'lineTo': out.push({ op: 'L', x: a[0]!, y: -a[1]! }); break;
      case 'quadraticCurveTo': out.push({ op: 'Q', x1: a[0]!, y1: -a[1]!, x: a[2]!, y: -a[3]! }); break;
      case 'bezierCurveTo': out.push({ op: 'C', x1: a[0]!, y1: -a[1]!, x2: a[2]!, y2: -a[3]!, x: a[4]!, y: -a[5]! }); break;
      case 'closePath': out.push({ op: 'Z' }); break;
    }
  }
  cache.set(glyphId, out);
  return out;
}

const svgPathCache = perFace<number, string>(GLYPH_CACHE_LIMIT);

/** SVG path data of a glyph in font units, y down. */
export function glyphSvgPath(glyphId: number, face: Face): string {
  const cache = svgPathCache(face);
  let d = cache.get(glyphId);
  if (d !== undefined) return d;
  const parts: string[] = [];
  for (const c of glyphOutline(glyphId, face)) {
    switch (c.op) {
      case 'M': case 'L': parts.push(`${c.op}${r(c.x)} ${r(c.y)}`); break;
      case 'Q': parts.push(`Q${r(c.x1)} ${r(c.y1)} ${r(c.x)} ${r(c.y)}`); break;
      case 'C': parts.push(`C${r(c.x1)} ${r(c.y1)} ${r(c.x2)} ${r(c.y2)} ${r(c.x)} ${r(c.y)}`); break;
      case 'Z': parts.push('Z'); break;
    }
  }
  d = parts.join('');
  cache.set(glyphId, d);
  return d;
}

function r(n: number): string {
  return String(Math.round(n * 10) / 10);
}

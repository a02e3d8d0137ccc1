// DejaVu Sans from the `dejavu-fonts-ttf` package (never a system font), parsed once per process
// with fontkit; shaping results and glyph outlines are cached because every label repeats them.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as fontkit from 'fontkit';
import type { Font, Glyph } from 'fontkit';
import { createCache } from '../cache.ts';


const require = createRequire(import.meta.url);

export const FONT_FILES = {
  regular: require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'),
  bold: require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf'),
} as const;

export interface LoadedFont {
  bold: boolean;
  bytes: Buffer;
  font: Font;
  unitsPerEm: number;
  /** Ascent and descent in font units (descent negative). */
  ascent: number;
  descent: number;
}

const loaded: { regular?: LoadedFont; bold?: LoadedFont } = {};

export function dejaVu(bold = false): LoadedFont {
  const key = bold ? 'bold' : 'regular';
  let f = loaded[key];
  if (!f) {
    const bytes = readFileSync(FONT_FILES[key]);
    const font = fontkit.create(bytes);
    f = { bold, bytes, font, unitsPerEm: font.unitsPerEm, ascent: font.ascent, descent: font.descent };
    loaded[key] = f;
  }
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
}

const SHAPE_CACHE_LIMIT = 4000;
const shapeCache = [createCache<string, ShapedText>({ max: SHAPE_CACHE_LIMIT }), createCache<string, ShapedText>({ max: SHAPE_CACHE_LIMIT })];

/** Shapes `text` with DejaVu Sans (kerning, ligatures, Arabic joining), cached per process. */
export function shape(text: string, bold = false): ShapedText {
  const cache = shapeCache[bold ? 1 : 0]!;
  let s = cache.get(text);
  if (s) return s;
  const f = dejaVu(bold);
  const run = f.font.layout(text);
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
  s = {
    glyphs, x: xs, y: ys, xAdvance, xOffset, advance: pen, unitsPerEm: f.unitsPerEm,
    rtl: run.direction === 'rtl', codePoints: Array.from(text, (c) => c.codePointAt(0)!),
  };
  cache.set(text, s);
  return s;
}

/** A text primitive shaped and placed: its left edge from the anchor, and font units per point. */
export interface PlacedText {
  shaped: ShapedText;
  /** Points per font unit at the primitive's size. */
  scale: number;
  width: number;
  left: number;
}

export function placeText(t: { text: string; size: number; x: number; bold?: boolean; anchor?: 'start' | 'middle' | 'end' }): PlacedText {
  const shaped = shape(t.text, t.bold ?? false);
  const scale = t.size / shaped.unitsPerEm;
  const width = shaped.advance * scale;
  const left = t.anchor === 'middle' ? t.x - width / 2 : t.anchor === 'end' ? t.x - width : t.x;
  return { shaped, scale, width, left };
}

/** Width of `text` in points at `size`. */
export function textWidth(text: string, size: number, bold = false): number {
  if (!text) return 0;
  const s = shape(text, bold);
  return (s.advance / s.unitsPerEm) * size;
}

// Per code point and per glyph: bounded by what the font holds.
const GLYPH_CACHE_LIMIT = 8192;
const coverage = createCache<number, boolean>({ max: GLYPH_CACHE_LIMIT });

/** Whether both DejaVu Sans faces draw this code point. */
export function hasGlyph(codePoint: number): boolean {
  let ok = coverage.get(codePoint);
  if (ok === undefined) {
    ok = dejaVu(false).font.hasGlyphForCodePoint(codePoint) && dejaVu(true).font.hasGlyphForCodePoint(codePoint);
    coverage.set(codePoint, ok);
  }
  return ok;
}

export type PathCommand =
  | { op: 'M' | 'L'; x: number; y: number }
  | { op: 'Q'; x1: number; y1: number; x: number; y: number }
  | { op: 'C'; x1: number; y1: number; x2: number; y2: number; x: number; y: number }
  | { op: 'Z' };

const outlineCache = [createCache<number, PathCommand[]>({ max: GLYPH_CACHE_LIMIT }), createCache<number, PathCommand[]>({ max: GLYPH_CACHE_LIMIT })];

/** A glyph's outline in font units with y pointing DOWN (the drawing model's orientation). */
export function glyphOutline(glyphId: number, bold = false): PathCommand[] {
  const cache = outlineCache[bold ? 1 : 0]!;
  let out = cache.get(glyphId);
  if (out) return out;
  const glyph: Glyph = dejaVu(bold).font.getGlyph(glyphId);
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

const svgPathCache = [createCache<number, string>({ max: GLYPH_CACHE_LIMIT }), createCache<number, string>({ max: GLYPH_CACHE_LIMIT })];

/** SVG path data of a glyph in font units, y down. */
export function glyphSvgPath(glyphId: number, bold = false): string {
  const cache = svgPathCache[bold ? 1 : 0]!;
  let d = cache.get(glyphId);
  if (d !== undefined) return d;
  const parts: string[] = [];
  for (const c of glyphOutline(glyphId, bold)) {
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

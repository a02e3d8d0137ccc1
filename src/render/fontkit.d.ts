// The small part of fontkit 2 (the font engine pdfkit uses) that the renderer calls.
declare module 'fontkit' {
  export interface Glyph {
    id: number;
    codePoints: number[];
    advanceWidth: number;
    path: { commands: { command: string; args: number[] }[]; toSVG(): string };
  }
  export interface GlyphPosition { xAdvance: number; yAdvance: number; xOffset: number; yOffset: number }
  export interface GlyphRun {
    glyphs: Glyph[];
    positions: GlyphPosition[];
    readonly advanceWidth: number;
    direction: 'ltr' | 'rtl';
  }
  export interface Font {
    postscriptName: string;
    unitsPerEm: number;
    ascent: number;
    descent: number;
    capHeight: number;
    xHeight: number;
    numGlyphs: number;
    layout(text: string, features?: unknown): GlyphRun;
    /** The glyph of an id; `codePoints`, the characters it stands for, are kept only by the first call for that id. */
    getGlyph(id: number, codePoints?: number[]): Glyph;
    hasGlyphForCodePoint(codePoint: number): boolean;
    glyphForCodePoint(codePoint: number): Glyph;
    /** Every code point the font's cmap maps. */
    characterSet: number[];
    createSubset(): unknown;
  }
  export function create(buffer: Uint8Array, postscriptName?: string): Font;
}

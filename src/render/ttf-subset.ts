// A TrueType subsetter for PDF embedding: head, hhea, maxp, hmtx, loca, glyf, with the hinting
// (cvt, fpgm, prep and the glyph programs) left out, which halves the embedded font. Written by
// hand because fontkit's subsetter re-encodes every table through its generic struct machinery,
// which costs more than the rest of a label's PDF together; here the source font is parsed once
// and a subset is a few buffer copies.

interface Table {
  offset: number;
  length: number;
}

export interface ParsedTrueType {
  bytes: Buffer;
  tables: Map<string, Table>;
  /** glyf byte range of every glyph. */
  glyphStart: Uint32Array;
  glyphEnd: Uint32Array;
  advance: Uint16Array;
  lsb: Int16Array;
}

const parsedCache = new WeakMap<Buffer, ParsedTrueType>();

export function parseTrueType(bytes: Buffer): ParsedTrueType {
  const cached = parsedCache.get(bytes);
  if (cached) return cached;
  const tables = new Map<string, Table>();
  const numTables = bytes.readUInt16BE(4);
  for (let i = 0; i < numTables; i++) {
    const rec = 12 + i * 16;
    tables.set(bytes.toString('latin1', rec, rec + 4), { offset: bytes.readUInt32BE(rec + 8), length: bytes.readUInt32BE(rec + 12) });
  }
  const need = (tag: string): Table => {
    const t = tables.get(tag);
    if (!t) throw new Error(`TrueType font has no ${tag} table`);
    return t;
  };
  const head = need('head');
  const maxp = need('maxp');
  const hhea = need('hhea');
  const hmtx = need('hmtx');
  const loca = need('loca');
  const glyf = need('glyf');
  const numGlyphs = bytes.readUInt16BE(maxp.offset + 4);
  const longLoca = bytes.readInt16BE(head.offset + 50) === 1;
  const glyphStart = new Uint32Array(numGlyphs);
  const glyphEnd = new Uint32Array(numGlyphs);
  const locaAt = (i: number): number => (longLoca ? bytes.readUInt32BE(loca.offset + i * 4) : bytes.readUInt16BE(loca.offset + i * 2) * 2);
  for (let g = 0; g < numGlyphs; g++) {
    glyphStart[g] = glyf.offset + locaAt(g);
    glyphEnd[g] = glyf.offset + locaAt(g + 1);
  }
  const numberOfHMetrics = bytes.readUInt16BE(hhea.offset + 34);
  const advance = new Uint16Array(numGlyphs);
  const lsb = new Int16Array(numGlyphs);
  for (let g = 0; g < numGlyphs; g++) {
    if (g < numberOfHMetrics) {
      advance[g] = bytes.readUInt16BE(hmtx.offset + g * 4);
      lsb[g] = bytes.readInt16BE(hmtx.offset + g * 4 + 2);
    } else {
      advance[g] = advance[numberOfHMetrics - 1]!;
      lsb[g] = bytes.readInt16BE(hmtx.offset + numberOfHMetrics * 4 + (g - numberOfHMetrics) * 2);
    }
  }
  const parsed = { bytes, tables, glyphStart, glyphEnd, advance, lsb };
  parsedCache.set(bytes, parsed);
  return parsed;
}

const ARG_1_AND_2_ARE_WORDS = 0x0001;
const WE_HAVE_A_SCALE = 0x0008;
const MORE_COMPONENTS = 0x0020;
const WE_HAVE_AN_X_AND_Y_SCALE = 0x0040;
const WE_HAVE_A_TWO_BY_TWO = 0x0080;
const WE_HAVE_INSTRUCTIONS = 0x0100;

function checksum(buf: Buffer): number {
  let sum = 0;
  for (let i = 0; i < buf.length; i += 4) sum = (sum + buf.readUInt32BE(i)) >>> 0;
  return sum;
}

function pad4(buf: Buffer): Buffer {
  const extra = (4 - (buf.length % 4)) % 4;
  return extra ? Buffer.concat([buf, Buffer.alloc(extra)]) : buf;
}

/** Same surface as fontkit's subset, which is all pdfkit's EmbeddedFont uses. */
export class TrueTypeSubset {
  readonly font: ParsedTrueType;
  /** Old glyph id of each new glyph id; glyph 0 (.notdef) always first. */
  readonly glyphs: number[] = [0];
  readonly mapping = new Map<number, number>([[0, 0]]);
  readonly cff = undefined;

  constructor(font: ParsedTrueType) {
    this.font = font;
  }

  includeGlyph(glyph: number | { id: number }): number {
    const id = typeof glyph === 'object' ? glyph.id : glyph;
    let mapped = this.mapping.get(id);
    if (mapped === undefined) {
      mapped = this.glyphs.length;
      this.glyphs.push(id);
      this.mapping.set(id, mapped);
    }
    return mapped;
  }

  encode(): Buffer {
    const f = this.font;
    const src = f.bytes;
    const pieces: Buffer[] = [];
    const offsets: number[] = [];
    let offset = 0;
    // Composite glyphs add their components while we go, so the list may grow.
    for (let i = 0; i < this.glyphs.length; i++) {
      const g = this.glyphs[i]!;
      let data: Buffer = src.subarray(f.glyphStart[g], f.glyphEnd[g]);
      if (data.length >= 10 && data.readInt16BE(0) < 0) {
        data = Buffer.from(data); // copy: component ids are rewritten
        let pos = 10;
        for (;;) {
          const flags = data.readUInt16BE(pos);
          data.writeUInt16BE(this.includeGlyph(data.readUInt16BE(pos + 2)), pos + 2);
          const last = !(flags & MORE_COMPONENTS);
          if (last && flags & WE_HAVE_INSTRUCTIONS) data.writeUInt16BE(flags & ~WE_HAVE_INSTRUCTIONS, pos);
          pos += 4 + (flags & ARG_1_AND_2_ARE_WORDS ? 4 : 2);
          if (flags & WE_HAVE_A_SCALE) pos += 2;
          else if (flags & WE_HAVE_AN_X_AND_Y_SCALE) pos += 4;
          else if (flags & WE_HAVE_A_TWO_BY_TWO) pos += 8;
          if (last) break;
        }
        data = data.subarray(0, pos); // without the hinting instructions
      } else if (data.length >= 10) {
        // Simple glyph: drop the hinting instructions (printers and viewers rasterise well without).
        const contours = data.readInt16BE(0);
        const at = 10 + 2 * contours;
        const length = data.readUInt16BE(at);
        if (length) {
          const out = Buffer.alloc(data.length - length);
          data.copy(out, 0, 0, at);
          out.writeUInt16BE(0, at);
          data.copy(out, at + 2, at + 2 + length);
          data = out;
        }
      }
      offsets.push(offset);
      const padded = pad4(data);
      pieces.push(padded);
      offset += padded.length;
    }
    offsets.push(offset);
    const n = this.glyphs.length;

    const glyf = Buffer.concat(pieces);
    const loca = Buffer.alloc(4 * (n + 1));
    offsets.forEach((o, i) => {
      loca.writeUInt32BE(o, i * 4);
    });
    const hmtx = Buffer.alloc(4 * n);
    this.glyphs.forEach((g, i) => {
      hmtx.writeUInt16BE(f.advance[g]!, i * 4);
      hmtx.writeInt16BE(f.lsb[g]!, i * 4 + 2);
    });
    const copy = (tag: string): Buffer | undefined => {
      const t = f.tables.get(tag);
      return t ? Buffer.from(src.subarray(t.offset, t.offset + t.length)) : undefined;
    };
    const head = copy('head')!;
    head.writeUInt32BE(0, 8); // checkSumAdjustment, set below
    head.writeInt16BE(1, 50); // long loca
    const hhea = copy('hhea')!;
    hhea.writeUInt16BE(n, 34);
    const maxp = copy('maxp')!;
    maxp.writeUInt16BE(n, 4);

    const tables: [string, Buffer][] = [];
    const add = (tag: string, buf: Buffer | undefined): void => {
      if (buf) tables.push([tag, buf]);
    };
    add('glyf', glyf);
    add('head', head);
    add('hhea', hhea);
    add('hmtx', hmtx);
    add('loca', loca);
    add('maxp', maxp);

    const numTables = tables.length;
    const dir = Buffer.alloc(12 + 16 * numTables);
    const entrySelector = Math.floor(Math.log2(numTables));
    const searchRange = 2 ** entrySelector * 16;
    dir.writeUInt32BE(0x00010000, 0);
    dir.writeUInt16BE(numTables, 4);
    dir.writeUInt16BE(searchRange, 6);
    dir.writeUInt16BE(entrySelector, 8);
    dir.writeUInt16BE(numTables * 16 - searchRange, 10);
    let at = dir.length;
    const bodies: Buffer[] = [];
    let headAt = 0;
    tables.forEach(([tag, buf], i) => {
      const padded = pad4(buf);
      const rec = 12 + i * 16;
      dir.write(tag, rec, 'latin1');
      dir.writeUInt32BE(checksum(padded), rec + 4);
      dir.writeUInt32BE(at, rec + 8);
      dir.writeUInt32BE(buf.length, rec + 12);
      if (tag === 'head') headAt = at;
      bodies.push(padded);
      at += padded.length;
    });
    const out = Buffer.concat([dir, ...bodies]);
    out.writeUInt32BE((0xb1b0afba - checksum(out)) >>> 0, headAt + 8);
    return out;
  }
}

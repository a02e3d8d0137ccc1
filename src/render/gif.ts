// GIF backend: the 1-bit raster as a two-colour GIF89a (global colour table black, white; pixel
// index = the bitmap's bit, 1 white), LZW-compressed here. Written by hand because sharp's GIF
// path quantises the image with libimagequant first and took 45–110 ms for a label that this
// encoder writes in a few: with two symbols the LZW dictionary is a binary trie in a typed array.
import type { Bitmap } from './bitmap.ts';

/** GIF's smallest LZW code size (the format does not allow 1, even for two colours). */
export const GIF_MIN_CODE_SIZE = 2;
const CLEAR = 1 << GIF_MIN_CODE_SIZE; // 4
const END = CLEAR + 1; // 5
const FIRST = CLEAR + 2; // 6
const MAX_CODES = 4096;

/**
 * LZW codes of the bitmap's pixels (row by row, the padding bits of each row skipped), packed
 * least significant bit first as GIF wants, without the sub-block framing.
 */
export function gifLzw(img: Bitmap): Buffer {
  const { width, height, rowBytes, bits } = img;
  // child[code * 2 + pixel]: the code for string(code) + pixel, 0 when not in the table yet.
  const child = new Uint16Array(MAX_CODES * 2);
  // At most one 12-bit code per pixel, plus clear codes and the end.
  const out = Buffer.allocUnsafe(Math.ceil((width * height + 2 + (width * height) / (MAX_CODES - FIRST)) * 1.5) + 16);
  let o = 0;
  let acc = 0; // bit accumulator
  let nacc = 0; // bits in acc
  let size = GIF_MIN_CODE_SIZE + 1;
  let next = FIRST;

  // The first code is a clear code, as the GIF specification recommends.
  acc = CLEAR;
  nacc = size;
  // run[code * 2 + colour]: the code reached from `code` by eight more pixels of one colour, when
  // the table has all eight steps (0 otherwise): whole white or black bytes, most of a label, take
  // one lookup instead of eight.
  const run = new Uint16Array(MAX_CODES * 2);
  let cur = -1;
  for (let y = 0; y < height; y++) {
    const row = y * rowBytes;
    for (let x = 0; x < width; ) {
      const byte = bits[row + (x >> 3)]!;
      if ((x & 7) === 0 && x + 8 <= width && cur >= 0 && (byte === 0xff || byte === 0)) {
        const r = run[cur * 2 + (byte & 1)]!;
        if (r !== 0) {
          cur = r;
          x += 8;
          continue;
        }
        // Walk the eight steps; remember the end if no code had to be emitted on the way.
        const p = byte & 1;
        let n = cur;
        let i = 0;
        while (i < 8 && child[n * 2 + p]! !== 0) {
          n = child[n * 2 + p]!;
          i++;
        }
        if (i === 8) {
          run[cur * 2 + p] = n;
          cur = n;
          x += 8;
          continue;
        }
      }
      const p = (byte >> (7 - (x & 7))) & 1;
      x++;
      if (cur < 0) {
        cur = p;
        continue;
      }
      const k = cur * 2 + p;
      const found = child[k]!;
      if (found !== 0) {
        cur = found;
        continue;
      }
      // Emit `cur` (inlined: this runs once per code, about 100,000 times per label).
      acc |= cur << nacc;
      nacc += size;
      while (nacc >= 8) {
        out[o++] = acc & 0xff;
        acc >>>= 8;
        nacc -= 8;
      }
      if (next === MAX_CODES) {
        acc |= CLEAR << nacc;
        nacc += size;
        while (nacc >= 8) {
          out[o++] = acc & 0xff;
          acc >>>= 8;
          nacc -= 8;
        }
        child.fill(0);
        run.fill(0);
        next = FIRST;
        size = GIF_MIN_CODE_SIZE + 1;
      } else {
        // The decoder adds its entries one code behind us, so we widen when it will.
        if (next >= 1 << size) size++;
        child[k] = next++;
      }
      cur = p;
    }
  }
  for (const code of cur >= 0 ? [cur, END] : [END]) {
    acc |= code << nacc;
    nacc += size;
    while (nacc >= 8) {
      out[o++] = acc & 0xff;
      acc >>>= 8;
      nacc -= 8;
    }
    // The decoder adds an entry for the last pixel code too, and reads the end code at the width
    // that entry gives.
    if (code !== END && next < MAX_CODES && next >= 1 << size) size++;
  }
  if (nacc > 0) out[o++] = acc & 0xff;
  return out.subarray(0, o);
}

/** A two-colour GIF89a of the bitmap. GIF has no resolution field; the pixel size is the raster's. */
export function encodeGif(img: Bitmap): Buffer {
  const lzw = gifLzw(img);
  const blocks = Math.ceil(lzw.length / 255);
  const head = 6 + 7 + 6 + 10 + 1;
  const out = Buffer.allocUnsafe(head + lzw.length + blocks + 1 + 1);
  let o = out.write('GIF89a', 0, 'latin1');
  // Logical screen descriptor: global colour table of 2 entries (size field 0), background white.
  o = out.writeUInt16LE(img.width, o);
  o = out.writeUInt16LE(img.height, o);
  out[o++] = 0x80; // global colour table, 1 bit colour resolution, 2 entries
  out[o++] = 1; // background colour index: white
  out[o++] = 0; // pixel aspect ratio: square
  out[o++] = 0x00; out[o++] = 0x00; out[o++] = 0x00; // 0: black
  out[o++] = 0xff; out[o++] = 0xff; out[o++] = 0xff; // 1: white
  // Image descriptor: the whole screen, no local colour table, not interlaced.
  out[o++] = 0x2c;
  o = out.writeUInt16LE(0, o);
  o = out.writeUInt16LE(0, o);
  o = out.writeUInt16LE(img.width, o);
  o = out.writeUInt16LE(img.height, o);
  out[o++] = 0;
  out[o++] = GIF_MIN_CODE_SIZE;
  for (let i = 0; i < lzw.length; i += 255) {
    const n = Math.min(255, lzw.length - i);
    out[o++] = n;
    lzw.copy(out, o, i, i + n);
    o += n;
  }
  out[o++] = 0; // block terminator
  out[o++] = 0x3b; // trailer
  return out.subarray(0, o);
}

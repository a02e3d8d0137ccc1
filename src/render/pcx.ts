// PCX backend: the 1-bit raster as a ZSoft PCX (version 5, run-length encoded, one plane of 1 bit
// per pixel) with the resolution in the header. Written by hand: no maintained npm package writes
// PCX. Bit 1 is white, bit 0 black, as Ghostscript's `pcxmono` device writes it and netpbm, GIMP
// and Pillow read it; the header palette says the same (entry 0 black, entry 1 white).
import type { Bitmap } from './bitmap.ts';

export const PCX_HEADER = 128;
/** Longest run one RLE byte pair can hold (the count is the low six bits of a 0xC0 flag byte). */
export const PCX_MAX_RUN = 63;

/** Bytes per scan line: PCX requires an even number. */
export function pcxBytesPerLine(width: number): number {
  return ((width + 15) >> 4) << 1;
}

/** Run-length encodes `rows` scan lines of `bytesPerLine` bytes each, never letting a run cross a line. */
export function pcxRle(data: Uint8Array, bytesPerLine: number, rows: number): Buffer {
  const out = Buffer.allocUnsafe(data.length * 2);
  let o = 0;
  for (let y = 0; y < rows; y++) {
    const end = (y + 1) * bytesPerLine;
    let i = y * bytesPerLine;
    while (i < end) {
      const v = data[i]!;
      let run = 1;
      while (run < PCX_MAX_RUN && i + run < end && data[i + run] === v) run++;
      // A single byte below 0xC0 stands for itself; anything else needs a count byte.
      if (run > 1 || v >= 0xc0) out[o++] = 0xc0 | run;
      out[o++] = v;
      i += run;
    }
  }
  return out.subarray(0, o);
}

export function encodePcx(img: Bitmap): Buffer {
  const { width, height, rowBytes, bits, dpi } = img;
  const bpl = pcxBytesPerLine(width);
  let data: Buffer = bits;
  if (bpl !== rowBytes) {
    // Padding bytes are white, like the padding bits of the last byte.
    data = Buffer.alloc(bpl * height, 0xff);
    for (let y = 0; y < height; y++) bits.copy(data, y * bpl, y * rowBytes, (y + 1) * rowBytes);
  }
  const header = Buffer.alloc(PCX_HEADER);
  header[0] = 0x0a; // manufacturer: ZSoft
  header[1] = 5; // version 3.0 and later (palette information valid)
  header[2] = 1; // encoding: RLE
  header[3] = 1; // bits per pixel per plane
  header.writeUInt16LE(0, 4); // Xmin
  header.writeUInt16LE(0, 6); // Ymin
  header.writeUInt16LE(width - 1, 8); // Xmax
  header.writeUInt16LE(height - 1, 10); // Ymax
  header.writeUInt16LE(dpi, 12); // HDpi
  header.writeUInt16LE(dpi, 14); // VDpi
  header.fill(0, 16, 19); // palette entry 0: black
  header.fill(0xff, 19, 22); // palette entry 1: white
  header[64] = 0; // reserved
  header[65] = 1; // planes
  header.writeUInt16LE(bpl, 66); // bytes per line
  header.writeUInt16LE(1, 68); // palette info: colour/monochrome
  return Buffer.concat([header, pcxRle(data, bpl, height)]);
}

// BMP backend: the 1-bit raster as a Windows bitmap (BITMAPFILEHEADER + BITMAPINFOHEADER, a
// black/white colour table, rows bottom-up padded to 4 bytes), with the resolution in the header.
// Written by hand: sharp (libvips) does not write BMP, and the format is a header and a row copy.
import type { Bitmap } from './bitmap.ts';

export const BMP_FILE_HEADER = 14;
export const BMP_INFO_HEADER = 40;
const PALETTE = 2 * 4;

/** Pixels per metre for a resolution in dots per inch (203 dpi: 7992). */
export function pixelsPerMetre(dpi: number): number {
  return Math.round(dpi / 0.0254);
}

/** A 1-bit BMP: colour 0 black, colour 1 white (the bitmap's 1 bits), rows bottom-up. */
export function encodeBmp(img: Bitmap): Buffer {
  const { width, height, rowBytes, bits } = img;
  const stride = (rowBytes + 3) & ~3;
  const offBits = BMP_FILE_HEADER + BMP_INFO_HEADER + PALETTE;
  const out = Buffer.alloc(offBits + stride * height);
  // BITMAPFILEHEADER
  out.write('BM', 0, 'latin1');
  out.writeUInt32LE(out.length, 2); // bfSize
  out.writeUInt32LE(offBits, 10); // bfOffBits
  // BITMAPINFOHEADER
  out.writeUInt32LE(BMP_INFO_HEADER, 14);
  out.writeInt32LE(width, 18);
  out.writeInt32LE(height, 22); // positive: bottom-up
  out.writeUInt16LE(1, 26); // planes
  out.writeUInt16LE(1, 28); // bits per pixel
  out.writeUInt32LE(0, 30); // BI_RGB
  out.writeUInt32LE(stride * height, 34); // biSizeImage
  const ppm = pixelsPerMetre(img.dpi);
  out.writeInt32LE(ppm, 38);
  out.writeInt32LE(ppm, 42);
  out.writeUInt32LE(2, 46); // colours used
  out.writeUInt32LE(2, 50); // colours important
  // RGBQUADs (blue, green, red, reserved)
  out.writeUInt32LE(0x00000000, 54); // index 0: black
  out.writeUInt32LE(0x00ffffff, 58); // index 1: white
  for (let y = 0; y < height; y++) bits.copy(out, offBits + (height - 1 - y) * stride, y * rowBytes, (y + 1) * rowBytes);
  return out;
}

// Raster backends: the drawing drawn into a 1-bit bitmap (./bitmap.ts) at 203 or 300 dpi, then
// written as a 1-bit greyscale PNG, as thermal printers print and carriers' PNG labels are.
import { crc32, deflateSync } from 'node:zlib';
import { drawBitmap } from './bitmap.ts';
import type { Bitmap } from './bitmap.ts';
import type { Drawing } from './model.ts';

export type { Bitmap } from './bitmap.ts';

/** Renders the drawing at `dpi` (203 or 300) into black and white pixels. */
export function rasterize(drawing: Drawing, dpi: number): Bitmap {
  return drawBitmap(drawing, dpi);
}

/**
 * 1-bit rows, most significant bit first, 1 = white (PNG greyscale, BMP and PCX with a black-white
 * palette); each row is preceded by `lead` zero bytes (PNG's filter-type byte).
 */
export function packBits(img: Bitmap, lead = 0): { rowBytes: number; data: Buffer } {
  const { rowBytes, height, bits } = img;
  if (!lead) return { rowBytes, data: Buffer.from(bits) };
  const stride = rowBytes + lead;
  const data = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) bits.copy(data, y * stride + lead, y * rowBytes, (y + 1) * rowBytes);
  return { rowBytes, data };
}

function chunk(type: string, body: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(body.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body, crc32(head.subarray(4))) >>> 0, 0);
  return Buffer.concat([head, body, crc]);
}

/** A 1-bit greyscale PNG with the resolution recorded in pHYs. */
export function encodePng1(img: Bitmap): Buffer {
  // Filter type None on every row: 1-bit rows compress well without filters.
  const { data: filtered } = packBits(img, 1);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(img.width, 0);
  ihdr.writeUInt32BE(img.height, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // greyscale
  const phys = Buffer.alloc(9);
  const ppm = Math.round(img.dpi / 0.0254);
  phys.writeUInt32BE(ppm, 0);
  phys.writeUInt32BE(ppm, 4);
  phys[8] = 1; // metre
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('pHYs', phys),
    chunk('IDAT', deflateSync(filtered, { level: 4 })),
    chunk('IEND', new Uint8Array(0)),
  ]);
}

/** Grey pixels (0 black, 255 white), one byte each, for encoders that take 8-bit input. */
function greyPixels(img: Bitmap): Buffer {
  const out = Buffer.alloc(img.width * img.height);
  for (let y = 0, i = 0; y < img.height; y++) {
    const row = y * img.rowBytes;
    for (let x = 0; x < img.width; x++, i++) out[i] = (img.bits[row + (x >> 3)]! >> (7 - (x & 7))) & 1 ? 255 : 0;
  }
  return out;
}

/** JPEG, TIFF (1-bit, CCITT G4), GIF (two colours) and lossless WEBP through sharp (libvips). */
export async function encodeWithSharp(img: Bitmap, format: 'JPEG' | 'TIFF' | 'GIF' | 'WEBP'): Promise<Buffer> {
  const { default: sharp } = await import('sharp');
  const base = sharp(greyPixels(img), { raw: { width: img.width, height: img.height, channels: 1 } }).withDensity(img.dpi);
  switch (format) {
    case 'JPEG':
      return base.toColourspace('b-w').jpeg({ quality: 90 }).toBuffer();
    case 'TIFF': {
      const perMm = img.dpi / 25.4;
      return base.toColourspace('b-w').tiff({ compression: 'ccittfax4', bitdepth: 1, miniswhite: true, xres: perMm, yres: perMm, resolutionUnit: 'inch' }).toBuffer();
    }
    case 'GIF':
      return base.gif({ colours: 2, dither: 0, effort: 1 }).toBuffer();
    case 'WEBP':
      return base.webp({ lossless: true, effort: 0 }).toBuffer();
  }
}

/** A 1-bit BMP (BITMAPINFOHEADER, black-and-white palette, rows bottom-up). */
export function encodeBmp(img: Bitmap): Buffer {
  const { rowBytes, data } = packBits(img);
  const stride = (rowBytes + 3) & ~3;
  const header = 14 + 40 + 8;
  const out = Buffer.alloc(header + stride * img.height);
  out.write('BM', 0, 'latin1');
  out.writeUInt32LE(out.length, 2);
  out.writeUInt32LE(header, 10);
  out.writeUInt32LE(40, 14);
  out.writeInt32LE(img.width, 18);
  out.writeInt32LE(img.height, 22);
  out.writeUInt16LE(1, 26); // planes
  out.writeUInt16LE(1, 28); // bits per pixel
  out.writeUInt32LE(stride * img.height, 34);
  const ppm = Math.round(img.dpi / 0.0254);
  out.writeInt32LE(ppm, 38);
  out.writeInt32LE(ppm, 42);
  out.writeUInt32LE(2, 46); // palette entries
  out.writeUInt32LE(0x00000000, 54); // index 0: black
  out.writeUInt32LE(0x00ffffff, 58); // index 1: white (packBits writes 1 for white)
  for (let y = 0; y < img.height; y++) {
    data.copy(out, header + (img.height - 1 - y) * stride, y * rowBytes, (y + 1) * rowBytes);
  }
  return out;
}

/** A 1-bit PCX (version 5, run-length encoded, black-and-white header palette). */
export function encodePcx(img: Bitmap): Buffer {
  let { rowBytes, data } = packBits(img);
  if (rowBytes & 1) {
    // PCX scan lines have an even number of bytes.
    const padded = Buffer.alloc((rowBytes + 1) * img.height, 0xff);
    for (let y = 0; y < img.height; y++) data.copy(padded, y * (rowBytes + 1), y * rowBytes, (y + 1) * rowBytes);
    data = padded;
    rowBytes++;
  }
  const header = Buffer.alloc(128);
  header[0] = 0x0a;
  header[1] = 5; // version 3.0 with palette information
  header[2] = 1; // RLE
  header[3] = 1; // bits per pixel
  header.writeUInt16LE(0, 4);
  header.writeUInt16LE(0, 6);
  header.writeUInt16LE(img.width - 1, 8);
  header.writeUInt16LE(img.height - 1, 10);
  header.writeUInt16LE(img.dpi, 12);
  header.writeUInt16LE(img.dpi, 14);
  header.fill(0, 16, 19); // palette entry 0: black
  header.fill(0xff, 19, 22); // palette entry 1: white
  header[65] = 1; // planes
  header.writeUInt16LE(rowBytes, 66);
  header.writeUInt16LE(1, 68); // colour/monochrome palette
  const body = Buffer.alloc(data.length * 2);
  let o = 0;
  for (let y = 0; y < img.height; y++) {
    const end = (y + 1) * rowBytes;
    let i = y * rowBytes;
    while (i < end) {
      const v = data[i]!;
      let run = 1;
      while (run < 63 && i + run < end && data[i + run] === v) run++;
      if (run > 1 || v >= 0xc0) body[o++] = 0xc0 | run;
      body[o++] = v;
      i += run;
    }
  }
  return Buffer.concat([header, body.subarray(0, o)]);
}

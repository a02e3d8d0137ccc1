// Raster backends: the drawing drawn into a 1-bit bitmap (./bitmap.ts) at 203 or 300 dpi, then
// written as a 1-bit greyscale PNG, as thermal printers print and carriers' PNG labels are, or as
// JPEG, TIFF and WEBP through sharp. BMP, PCX, GIF and EMF have their own encoders (bmp.ts, …).
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

/** Eight grey pixels (0 or 255) for each byte of 1-bit pixels, as two 32-bit words per byte. */
const GREY_OF_BYTE = (() => {
  const bytes = new Uint8Array(256 * 8);
  for (let b = 0; b < 256; b++) for (let k = 0; k < 8; k++) bytes[b * 8 + k] = (b >> (7 - k)) & 1 ? 255 : 0;
  return new Uint32Array(bytes.buffer);
})();

/** Grey pixels (0 black, 255 white), one byte each, for encoders that take 8-bit input. */
export function greyPixels(img: Bitmap): Buffer {
  const { width, height, rowBytes, bits } = img;
  const out = Buffer.allocUnsafe(width * height);
  // A row expanded word by word (8 pixels per source byte), then copied without its padding.
  const row = new Uint32Array(rowBytes * 2);
  const rowBytesView = new Uint8Array(row.buffer, 0, width);
  for (let y = 0; y < height; y++) {
    const base = y * rowBytes;
    for (let i = 0; i < rowBytes; i++) {
      const b = bits[base + i]! * 2;
      row[2 * i] = GREY_OF_BYTE[b]!;
      row[2 * i + 1] = GREY_OF_BYTE[b + 1]!;
    }
    out.set(rowBytesView, y * width);
  }
  return out;
}

/** JPEG, TIFF (1-bit, CCITT G4) and lossless WEBP through sharp (libvips), from one grey channel. */
type Sharp = typeof import('sharp').default;
let sharpModule: Sharp | undefined;
async function loadSharp(): Promise<Sharp> {
  if (!sharpModule) {
    const sharp = (await import('sharp')).default;
    // Every image is encoded once from fresh pixels: libvips' operation cache only holds memory.
    sharp.cache(false);
    sharp.concurrency(1);
    sharpModule = sharp;
  }
  return sharpModule;
}

export async function encodeWithSharp(img: Bitmap, format: 'JPEG' | 'TIFF' | 'WEBP'): Promise<Buffer> {
  const sharp = await loadSharp();
  const base = sharp(greyPixels(img), { raw: { width: img.width, height: img.height, channels: 1 } }).withDensity(img.dpi);
  switch (format) {
    case 'JPEG':
      // Huffman table optimisation is a second pass over the image: 2–3 times the encoding time for 14 % smaller files.
      return base.toColourspace('b-w').jpeg({ quality: 90, optimiseCoding: false }).toBuffer();
    case 'TIFF': {
      const perMm = img.dpi / 25.4;
      return base.toColourspace('b-w').tiff({ compression: 'ccittfax4', bitdepth: 1, miniswhite: true, xres: perMm, yres: perMm, resolutionUnit: 'inch' }).toBuffer();
    }
    case 'WEBP':
      // Told the image is grey, libvips skips its sRGB conversion (a third of the time).
      return base.toColourspace('b-w').webp({ lossless: true, effort: 0 }).toBuffer();
  }
}

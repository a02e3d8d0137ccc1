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
 * 1-bit rows, most significant bit first, 1 = white (PNG greyscale, TIFF WhiteIsZero = 0); each
 * row is preceded by `lead` zero bytes (PNG's filter-type byte).
 */
export function packBits(img: Bitmap, lead = 0): { rowBytes: number; data: Buffer } {
  const { width, height, ink } = img;
  const rowBytes = (width + 7) >> 3;
  const stride = rowBytes + lead;
  const data = Buffer.alloc(stride * height);
  const whole = width >> 3;
  for (let y = 0; y < height; y++) {
    let src = y * width;
    let dst = y * stride + lead;
    for (let i = 0; i < whole; i++, src += 8) {
      data[dst++] = ~((ink[src]! << 7) | (ink[src + 1]! << 6) | (ink[src + 2]! << 5) | (ink[src + 3]! << 4)
        | (ink[src + 4]! << 3) | (ink[src + 5]! << 2) | (ink[src + 6]! << 1) | ink[src + 7]!) & 0xff;
    }
    if (width & 7) {
      let byte = 0xff;
      for (let b = 0; b < (width & 7); b++, src++) if (ink[src]) byte ^= 0x80 >> b;
      data[dst] = byte;
    }
  }
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

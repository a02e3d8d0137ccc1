// Raster backends: the pixel-grid SVG rendered by resvg into 8-bit grey, then written as a
// 1-bit PNG (thermal printers print 1 bit).
import { Resvg } from '@resvg/resvg-js';
import { crc32, deflateSync } from 'node:zlib';
import type { Drawing } from './model.ts';
import { drawingToSvg } from './svg.ts';

export interface Bitmap {
  width: number;
  height: number;
  /** RGBA as resvg renders it; only black and white occur (no anti-aliasing). */
  rgba: Buffer;
  dpi: number;
}

/**
 * Renders the drawing at `dpi` (203 or 300). Anti-aliasing is off: the result is pure black and
 * white, like a thermal print, and resvg renders it several times faster.
 */
export function rasterize(drawing: Drawing, dpi: number): Bitmap {
  const svg = drawingToSvg(drawing, { rasterDpi: dpi });
  const img = new Resvg(svg, {
    background: '#ffffff',
    fitTo: { mode: 'original' },
    font: { loadSystemFonts: false },
    shapeRendering: 1,
    textRendering: 0,
    logLevel: 'off',
  }).render();
  return { width: img.width, height: img.height, rgba: img.pixels, dpi };
}

/**
 * 1-bit rows, most significant bit first, 1 = white (PNG greyscale); each row is preceded by
 * `lead` zero bytes (PNG's filter-type byte).
 */
export function packBits(img: Bitmap, lead = 0): { rowBytes: number; data: Buffer } {
  const { width, height, rgba } = img;
  const rowBytes = (width + 7) >> 3;
  const stride = rowBytes + lead;
  const data = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    let src = y * width * 4 + 1; // green channel
    let dst = y * stride + lead;
    for (let x = 0; x < width; x += 8) {
      let byte = 0;
      const n = Math.min(8, width - x);
      for (let b = 0; b < n; b++, src += 4) if (rgba[src]! >= 128) byte |= 0x80 >> b;
      data[dst++] = byte;
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

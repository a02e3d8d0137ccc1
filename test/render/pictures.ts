// Every format's picture as another program draws it, for tests that look at pixels: sharp (libvips)
// for PNG, JPEG, TIFF, WEBP and GIF; ImageMagick for BMP and netpbm for PCX; poppler for PDF and Ghostscript for
// PS and EPS, both without anti-aliasing; resvg for SVG; emf2svg then resvg for EMF. ZPL has no
// reader here: tests read its fields.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Resvg } from '@resvg/resvg-js';
import sharp from 'sharp';
import type { LabelFormat } from '../../src/render/index.ts';
import { rasterizePdf, rasterizePdfWithGhostscript } from './scan.ts';

const run = promisify(execFile);

/** A greyscale picture: one byte per pixel, 0 black. */
export interface Picture {
  width: number;
  height: number;
  grey: Buffer;
}

async function command(cmd: string, pkg: string): Promise<void> {
  await run('which', [cmd]).catch(() => assert.fail(`\`${cmd}\` is not installed: install the Debian package ${pkg} (or run .ci/run)`));
}

function svgPicture(svg: string, widthPx: number): Buffer {
  return Buffer.from(new Resvg(svg, { fitTo: { mode: 'width', value: widthPx }, background: '#fff', shapeRendering: 0, font: { loadSystemFonts: false } }).render().asPng());
}

/** A binary PPM (P6, 8 bits) as PNG: its header is three numbers after the magic. */
async function pngOfPpm(ppm: Buffer): Promise<Buffer> {
  const header = /^P6\s+(\d+)\s+(\d+)\s+255\s/.exec(ppm.subarray(0, 64).toString('latin1'));
  assert.ok(header, 'pcxtoppm wrote an 8-bit binary PPM');
  const [width, height] = [Number(header[1]), Number(header[2])];
  return sharp(ppm.subarray(header[0].length), { raw: { width, height, channels: 3 } }).png().toBuffer();
}

/** The picture of a document of `widthPt` points in `format`, at `dpi` where the reader chooses. */
export async function pictureOf(format: Exclude<LabelFormat, 'ZPL'>, body: Buffer, widthPt: number, dpi = 203): Promise<Picture> {
  let image: Buffer;
  const dir = await mkdtemp(join(tmpdir(), 'pictures-'));
  try {
    switch (format) {
      case 'PDF': image = await rasterizePdf(body, dpi, { aliased: true }); break;
      case 'PS': case 'EPS': image = await rasterizePdfWithGhostscript(body, dpi, { kind: format === 'PS' ? 'ps' : 'eps' }); break;
      case 'SVG': image = svgPicture(body.toString('utf8'), Math.round((widthPt * dpi) / 72)); break;
      case 'PNG': case 'JPEG': case 'TIFF': case 'WEBP': case 'GIF': image = body; break;
      case 'BMP': {
        await command('convert', 'imagemagick');
        await writeFile(join(dir, 'in.bmp'), body);
        await run('convert', [join(dir, 'in.bmp'), join(dir, 'out.png')]);
        image = await readFile(join(dir, 'out.png'));
        break;
      }
      case 'PCX': {
        // netpbm, which reads the 1-bit PCX palette (ImageMagick 6 draws 1-bit PCX inverted).
        await command('pcxtoppm', 'netpbm');
        await writeFile(join(dir, 'in.pcx'), body);
        const ppm = await run('pcxtoppm', [join(dir, 'in.pcx')], { encoding: 'buffer', maxBuffer: 64 << 20 });
        image = await pngOfPpm(ppm.stdout);
        break;
      }
      case 'EMF': {
        await command('emf2svg-conv', 'emf2svg');
        const input = join(dir, 'in.emf');
        await writeFile(input, body);
        await run('emf2svg-conv', ['-i', input, '-o', join(dir, 'out.svg')], { maxBuffer: 16 << 20 });
        image = svgPicture(await readFile(join(dir, 'out.svg'), 'utf8'), Math.round((widthPt * dpi) / 72));
        break;
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const { data, info } = await sharp(image).flatten({ background: '#ffffff' }).greyscale().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, grey: data };
}

/** The share of dark pixels (below 50 % grey) in a box given in points of a `widthPt`-wide document. */
export function darkShare(p: Picture, widthPt: number, box: { x: number; y: number; w: number; h: number }): number {
  const k = p.width / widthPt;
  const x0 = Math.max(0, Math.round(box.x * k));
  const y0 = Math.max(0, Math.round(box.y * k));
  const x1 = Math.min(p.width, Math.round((box.x + box.w) * k));
  const y1 = Math.min(p.height, Math.round((box.y + box.h) * k));
  let dark = 0;
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) if (p.grey[y * p.width + x]! < 128) dark++;
  return dark / Math.max(1, (x1 - x0) * (y1 - y0));
}

/** The text of a PDF as poppler's `pdftotext -layout` extracts it. */
export async function pdfText(pdf: Buffer): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'pdftotext-'));
  try {
    await writeFile(join(dir, 'in.pdf'), pdf);
    return (await run('pdftotext', ['-layout', join(dir, 'in.pdf'), '-'], { maxBuffer: 64 << 20 })).stdout;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

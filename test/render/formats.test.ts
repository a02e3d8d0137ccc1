// The other retrieval formats (§5): JPEG, TIFF (1-bit CCITT G4), GIF, WEBP, BMP, PCX, EMF from the
// same 1-bit raster as PNG; PS and EPS as PostScript. Each is opened by a reader that is not ours
// (sharp/libvips, ImageMagick, Ghostscript, emf2svg; PCX by a decoder written here from the format's
// spec) and every barcode of every carrier is decoded. formats-readers.test.ts does the same through
// the HTTP download with the Debian readers only.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { Resvg } from '@resvg/resvg-js';
import sharp from 'sharp';
import { layoutLabel, mediaTypeOf, renderLabel } from '../../src/render/index.ts';
import type { LabelData, LabelFormat } from '../../src/render/index.ts';
import { ALL_CARRIERS, UPS_LABEL } from './fixtures.ts';
import { assertAllRead, expectedBarcodes, expectedMaxiCode } from './expected.ts';
import { pixelBox, scan } from './scan.ts';

const run = promisify(execFile);

async function withFile<T>(name: string, body: Buffer, fn: (path: string, dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'render-fmt-'));
  try {
    await writeFile(join(dir, name), body);
    return await fn(join(dir, name), dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** ImageMagick's `convert` to PNG. */
function viaImageMagick(body: Buffer, ext: string): Promise<Buffer> {
  return withFile(`in.${ext}`, body, async (path, dir) => {
    await run('convert', [path, join(dir, 'out.png')]);
    return readFile(join(dir, 'out.png'));
  });
}

/** Ghostscript renders PS/EPS at 203 dpi (EPS cropped to its BoundingBox). */
function viaGhostscript(body: Buffer, ext: string): Promise<Buffer> {
  return withFile(`in.${ext}`, body, async (path, dir) => {
    await run('gs', ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', ...(ext === 'eps' ? ['-dEPSCrop'] : []), '-sDEVICE=pnggray', '-r203', `-sOutputFile=${join(dir, 'out.png')}`, path]);
    return readFile(join(dir, 'out.png'));
  });
}

/** emf2svg (libemf2svg) turns the EMF into SVG, resvg rasterises that. */
function viaEmf2svg(body: Buffer): Promise<Buffer> {
  return withFile('in.emf', body, async (path, dir) => {
    await run('emf2svg-conv', ['-i', path, '-o', join(dir, 'out.svg')]);
    const svg = await readFile(join(dir, 'out.svg'), 'utf8');
    return Buffer.from(new Resvg(svg, { font: { loadSystemFonts: false }, background: '#fff' }).render().asPng());
  });
}

/** A 1-bit run-length-encoded PCX decoded as the ZSoft spec describes it (0 = black, 1 = white). */
async function decodePcx(pcx: Buffer): Promise<Buffer> {
  assert.equal(pcx[0], 0x0a, 'PCX manufacturer byte');
  assert.equal(pcx[2], 1, 'RLE');
  assert.equal(pcx[3], 1, '1 bit per pixel');
  assert.equal(pcx[65], 1, 'one plane');
  const width = pcx.readUInt16LE(8) - pcx.readUInt16LE(4) + 1;
  const height = pcx.readUInt16LE(10) - pcx.readUInt16LE(6) + 1;
  const bpl = pcx.readUInt16LE(66);
  const raw = Buffer.alloc(bpl * height);
  let o = 0;
  for (let i = 128; i < pcx.length && o < raw.length; ) {
    const b = pcx[i++]!;
    if ((b & 0xc0) === 0xc0) {
      raw.fill(pcx[i++]!, o, o + (b & 0x3f));
      o += b & 0x3f;
    } else raw[o++] = b;
  }
  const grey = Buffer.alloc(width * height);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) grey[y * width + x] = raw[y * bpl + (x >> 3)]! & (0x80 >> (x & 7)) ? 255 : 0;
  return sharp(grey, { raw: { width, height, channels: 1 } }).png().toBuffer();
}

async function asPng(format: LabelFormat, body: Buffer): Promise<Buffer> {
  switch (format) {
    case 'JPEG': case 'TIFF': case 'GIF': case 'WEBP': return sharp(body).png().toBuffer();
    case 'BMP': return viaImageMagick(body, 'bmp');
    case 'PCX': return decodePcx(body);
    case 'PS': return viaGhostscript(body, 'ps');
    case 'EPS': return viaGhostscript(body, 'eps');
    case 'EMF': return viaEmf2svg(body);
    default: throw new Error(format);
  }
}

const FORMATS = ['JPEG', 'TIFF', 'GIF', 'WEBP', 'BMP', 'PCX', 'PS', 'EPS', 'EMF'] as const;

async function assertMaxiCode(png: Buffer, d: LabelData, where: string): Promise<void> {
  const b = layoutLabel(d).primitives.find((p) => p.kind === 'barcode' && p.symbology === 'maxicode')!;
  assert.ok(b.kind === 'barcode');
  const found = await scan(png, { crop: pixelBox(b, 203, 3), threshold: true, pure: true, formats: ['MaxiCode'] });
  assert.equal(found.length, 1, `${where}: MaxiCode`);
  assert.ok(expectedMaxiCode(d)(found[0]!.text));
}

describe('more formats', () => {
  for (const format of FORMATS) {
    describe(format, () => {
      for (const data of ALL_CARRIERS) {
        it(`${data.carrier}: every barcode decodes`, async () => {
          const doc = await renderLabel(data, format);
          assert.equal(doc.mediaType, mediaTypeOf(format));
          const png = await asPng(format, doc.body);
          const meta = await sharp(png).metadata();
          // emf2svg sizes its SVG by the inclusive bounds without the last pixel.
          assert.deepEqual([meta.width, meta.height], format === 'EMF' ? [811, 1217] : [812, 1218], 'the 4x6 label at 203 dpi');
          assertAllRead(await scan(png), expectedBarcodes(data), format);
          if (data.carrier === 'UPS') await assertMaxiCode(png, data, format);
        });
      }
    });
  }

  it('TIFF is 1-bit CCITT Group 4, min-is-white, at 203 dpi', async () => {
    const tiff = (await renderLabel(UPS_LABEL, 'TIFF')).body;
    assert.equal((await sharp(tiff).metadata()).format, 'tiff');
    const identify = await withFile('l.tiff', tiff, async (p) => (await run('identify', ['-format', '%z %[tiff:photometric] %C %x', p])).stdout);
    assert.equal(identify, '1 min-is-white Group4 203');
  });

  it('BMP and PCX are 1-bit and record 300 dpi when asked', async () => {
    const bmp = (await renderLabel(UPS_LABEL, 'BMP', { dpi: 300 })).body;
    assert.equal(bmp.toString('latin1', 0, 2), 'BM');
    assert.equal(bmp.readUInt16LE(28), 1);
    assert.equal(bmp.readInt32LE(18), 1200);
    assert.equal(bmp.readInt32LE(38), Math.round(300 / 0.0254));
    const pcx = (await renderLabel(UPS_LABEL, 'PCX', { dpi: 300 })).body;
    assert.equal(pcx.readUInt16LE(12), 300);
    assert.equal(pcx.readUInt16LE(8), 1199);
  });

  it('EPS is EPSF-3.0 with a BoundingBox of the label; PS sets the page size', async () => {
    const eps = (await renderLabel({ ...UPS_LABEL, size: '6x4' }, 'EPS')).body.toString('latin1');
    assert.match(eps, /^%!PS-Adobe-3\.0 EPSF-3\.0\n%%BoundingBox: 0 0 432 288\n/);
    assert.ok(!eps.includes('setpagedevice'), 'EPS must not set the page device');
    const ps = (await renderLabel(UPS_LABEL, 'PS')).body.toString('latin1');
    assert.match(ps, /^%!PS-Adobe-3\.0\n/);
    assert.ok(ps.includes('<< /PageSize [288 432] >> setpagedevice'));
    // Ghostscript's bbox device agrees that everything is inside the page.
    const bbox = await withFile('l.ps', Buffer.from(ps, 'latin1'), async (p) => {
      const out = await run('gs', ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', '-sDEVICE=bbox', p]);
      return out.stdout + out.stderr;
    });
    const m = /%%HiResBoundingBox: ([\d.-]+) ([\d.-]+) ([\d.-]+) ([\d.-]+)/.exec(bbox);
    assert.ok(m, bbox);
    const [x0, y0, x1, y1] = m.slice(1).map(Number) as [number, number, number, number];
    assert.ok(x0 >= -0.5 && y0 >= -0.5 && x1 <= 288.5 && y1 <= 432.5, bbox);
  });
});

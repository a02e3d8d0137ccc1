// A barcode scanner for tests: zxing-wasm with its reader WASM loaded from node_modules (never a
// CDN), plus helpers to rasterise PDFs with poppler and to cut a symbol out of a page.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { prepareZXingModule, readBarcodes } from 'zxing-wasm/reader';
import type { ReaderOptions } from 'zxing-wasm/reader';

const run = promisify(execFile);
const require = createRequire(import.meta.url);

let ready: Promise<unknown> | undefined;

function zxing(): Promise<unknown> {
  ready ??= (async () => {
    const wasmBinary = await readFile(require.resolve('zxing-wasm/reader/zxing_reader.wasm'));
    const buf = wasmBinary.buffer.slice(wasmBinary.byteOffset, wasmBinary.byteOffset + wasmBinary.byteLength) as ArrayBuffer;
    return prepareZXingModule({ overrides: { wasmBinary: buf }, fireImmediately: true });
  })();
  return ready;
}

export interface ScanOptions {
  /** zxing format names, e.g. ['Code128', 'DataMatrix']; all formats by default. */
  formats?: ReaderOptions['formats'];
  /** Region to read, in pixels. */
  crop?: { left: number; top: number; width: number; height: number };
  /** Binarise at 50 % grey first (what MaxiCode's pure-symbol reader needs). */
  threshold?: boolean;
  /** The image holds one clean, unrotated symbol on white (required for MaxiCode). */
  pure?: boolean;
  /**
   * 'Plain' (default): the bytes as encoded, GS1 separators as GS (0x1D), no leading FNC1;
   * 'HRI': GS1 as `(420)10001…`, control characters as visible symbols.
   */
  textMode?: 'Plain' | 'HRI';
}

export interface Scanned {
  format: string;
  text: string;
}

/** Decodes every barcode zxing finds in an image (PNG or any format sharp reads). */
export async function scan(image: Buffer, opts: ScanOptions = {}): Promise<Scanned[]> {
  await zxing();
  let img = sharp(image).flatten({ background: '#ffffff' }).greyscale();
  if (opts.crop) {
    const meta = await sharp(image).metadata();
    const left = Math.max(0, Math.floor(opts.crop.left));
    const top = Math.max(0, Math.floor(opts.crop.top));
    const width = Math.min(meta.width! - left, Math.ceil(opts.crop.width));
    const height = Math.min(meta.height! - top, Math.ceil(opts.crop.height));
    img = sharp(await img.png().toBuffer()).extract({ left, top, width, height });
  }
  if (opts.threshold) img = img.threshold(128);
  const { data, info } = await img.raw().toBuffer({ resolveWithObject: true });
  const rgba = new Uint8ClampedArray(info.width * info.height * 4);
  const channels = info.channels;
  for (let i = 0, j = 0; i < info.width * info.height; i++, j += 4) {
    const v = data[i * channels]!;
    rgba[j] = v;
    rgba[j + 1] = v;
    rgba[j + 2] = v;
    rgba[j + 3] = 255;
  }
  const results = await readBarcodes(
    { data: rgba, width: info.width, height: info.height, colorSpace: 'srgb' } as unknown as ImageData,
    {
      formats: opts.formats ?? [],
      tryHarder: true,
      isPure: opts.pure ?? false,
      maxNumberOfSymbols: 16,
      textMode: opts.textMode ?? 'Plain',
    },
  );
  return results.filter((r) => r.isValid).map((r) => ({ format: r.format, text: r.text }));
}

/**
 * Rasterises the first page (or `page`) of a PDF with poppler's `pdftoppm -r <dpi> -png`; with
 * `aliased`, without anti-aliasing, as a thermal printer prints it.
 */
export async function rasterizePdf(pdf: Buffer, dpi = 203, opts: { aliased?: boolean; page?: number } = {}): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'render-test-'));
  try {
    const input = join(dir, 'in.pdf');
    await writeFile(input, pdf);
    const page = opts.page ? ['-f', String(opts.page), '-l', String(opts.page)] : [];
    await run('pdftoppm', ['-r', String(dpi), ...(opts.aliased ? ['-aa', 'no', '-aaVector', 'no'] : []), ...page, '-png', '-singlefile', input, join(dir, 'out')]);
    return await readFile(join(dir, 'out.png'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Rasterises the first page (or `page`) of a PDF, PostScript or EPS file with Ghostscript
 * (`gs -sDEVICE=pnggray`, no anti-aliasing: Ghostscript's default), a second, independent reader.
 */
export async function rasterizePdfWithGhostscript(pdf: Buffer, dpi = 203, opts: { page?: number; kind?: 'pdf' | 'ps' | 'eps' } = {}): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'render-test-'));
  try {
    const kind = opts.kind ?? 'pdf';
    const input = join(dir, `in.${kind}`);
    await writeFile(input, pdf);
    const page = opts.page ?? 1;
    await run('gs', ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', ...(kind === 'eps' ? ['-dEPSCrop'] : []), '-sDEVICE=pnggray', `-r${dpi}`, '-dTextAlphaBits=1', '-dGraphicsAlphaBits=1', `-dFirstPage=${page}`, `-dLastPage=${page}`, `-sOutputFile=${join(dir, 'out.png')}`, input]);
    return await readFile(join(dir, 'out.png'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The pixel box of a region given in points, grown by `marginPt` on every side. */
export function pixelBox(box: { x: number; y: number; w: number; h: number }, dpi: number, marginPt = 6): NonNullable<ScanOptions['crop']> {
  const k = dpi / 72;
  return {
    left: (box.x - marginPt) * k,
    top: (box.y - marginPt) * k,
    width: (box.w + 2 * marginPt) * k,
    height: (box.h + 2 * marginPt) * k,
  };
}

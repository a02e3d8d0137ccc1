// The label renderer in-process, one core: the same UPS 4x6 label in every supported format, median
// of many runs, beside baselines measured in the same run: pdfkit used as documented (DejaVu Sans
// registered from its TTF for each document, which re-parses and re-subsets the font), resvg's own
// full-colour PNG of the same SVG, and optionally Chromium printing the same label as HTML to PDF
// (BENCH_CHROMIUM=1), and bwip-js drawing only the barcodes as SVG; for the other formats the
// previous sharp path (per-pixel grey expansion, default options, sharp's GIF), ImageMagick and
// Ghostscript converting our PNG / PDF (what one would shell out to otherwise), and PNG for EMF.
// Targets: PDF ≤ 5 ms, SVG ≤ 2 ms, PNG ≤ 15 ms, ZPL ≤ 1 ms; JPEG, GIF, BMP, PCX, TIFF ≤ 20 ms;
// WEBP ≤ 40 ms; PS, EPS ≤ 5 ms; EMF ≤ 20 ms.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import PDFDocument from 'pdfkit';
import { Resvg } from '@resvg/resvg-js';
import bwipjs from 'bwip-js';
import { FONT_FILES } from '../src/render/fonts.ts';
import { barcodeShapes } from '../src/render/geometry.ts';
import { SUPPORTED_FORMATS, layoutLabel, renderDrawing, renderLabel } from '../src/render/index.ts';
import type { Drawing, LabelData } from '../src/render/index.ts';
import { drawingToSvg } from '../src/render/svg.ts';
import { rasterize } from '../src/render/raster.ts';
import type { Bitmap } from '../src/render/raster.ts';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { atMostMs, fmtMs, progress, table, targetTable } from './lib.ts';

const RUNS = Number(process.env.BENCH_RENDER_RUNS ?? 300);

const LABEL: LabelData = {
  labelId: 'lbl_bench',
  carrier: 'UPS',
  serviceCode: 'ground',
  serviceName: 'UPS GROUND',
  trackingNumber: '1Z5R89390357567127',
  size: '4x6',
  shipDate: '2025-03-14T10:30:00Z',
  from: { name: 'Jürgen Müller', company: 'Müller GmbH', street1: 'Hauptstraße 5', city: 'Berlin', postalCode: '10115', country: 'DE', phone: '+49 30 1234567' },
  to: { name: 'Ελένη Παπαδοπούλου', company: 'Analytical Engines', street1: '350 Fifth Avenue', street2: 'Suite 2100', city: 'New York', state: 'NY', postalCode: '10118', country: 'US' },
  parcel: { weight: { value: 1.2, unit: 'kg' }, length: 30, width: 20, height: 10, dimensionUnit: 'cm' },
  reference: 'bench',
};

interface Timing {
  name: string;
  median: number;
  p90: number;
  min: number;
  /** CPU time (user + system) per run, ms. */
  cpu: number;
  bytes?: number;
}

interface Scenario {
  name: string;
  fn: () => unknown;
  /** Take a sample only every `every` rounds (slow scenarios). */
  every?: number;
}

/** A full garbage collection between rounds, when V8 lets us have one. */
const collectGarbage: () => void = (() => {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return () => {};
  }
})();

/**
 * Runs the scenarios interleaved, one call each per round, so that background load and CPU
 * frequency changes hit all of them alike and none inherits another's garbage; warm-up rounds
 * first (JIT, caches), then `rounds` measured rounds.
 */
async function measureAll(scenarios: Scenario[], rounds: number): Promise<Timing[]> {
  progress(`${scenarios.map((s) => s.name).join(', ')}: ${rounds} interleaved rounds`);
  const samples = scenarios.map(() => [] as number[]);
  const cpu = scenarios.map(() => 0);
  const bytes: (number | undefined)[] = scenarios.map(() => undefined);
  const warmup = Math.max(5, Math.round(rounds / 10));
  for (let round = -warmup; round < rounds; round++) {
    for (let k = 0; k < scenarios.length; k++) {
      const s = scenarios[k]!;
      if (round >= 0 && round % (s.every ?? 1) !== 0) continue;
      const c0 = process.cpuUsage();
      const t = performance.now();
      const out = await s.fn();
      const elapsed = performance.now() - t;
      const c = process.cpuUsage(c0);
      if (round < 0) {
        if (out && typeof out === 'object' && 'body' in out) bytes[k] = (out as { body: Buffer }).body.length;
        else if (Buffer.isBuffer(out)) bytes[k] = out.length;
        continue;
      }
      samples[k]!.push(elapsed);
      cpu[k]! += (c.user + c.system) / 1000;
    }
    if (round % 10 === 0) collectGarbage();
  }
  return scenarios.map((s, k) => {
    const times = Float64Array.from(samples[k]!).sort();
    const n = times.length;
    return {
      name: s.name,
      median: times[n >> 1]!,
      p90: times[Math.floor(n * 0.9)]!,
      min: times[0]!,
      cpu: cpu[k]! / n,
      ...(bytes[k] === undefined ? {} : { bytes: bytes[k] }),
    };
  });
}

/** pdfkit as its documentation shows it: fonts registered from the TTF file for every document. */
function pdfkitAsDocumented(drawing: Drawing, regular: Buffer, bold: Buffer): Promise<Buffer> {
  return new Promise((resolve) => {
    const doc = new PDFDocument({ size: [drawing.widthPt, drawing.heightPt], margin: 0 });
    const chunks: Buffer[] = [];
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.registerFont('R', regular);
    doc.registerFont('B', bold);
    for (const p of drawing.primitives) {
      if (p.kind === 'text') {
        doc.font(p.bold ? 'B' : 'R').fontSize(p.size);
        const w = doc.widthOfString(p.text);
        const x = p.anchor === 'middle' ? p.x - w / 2 : p.anchor === 'end' ? p.x - w : p.x;
        doc.text(p.text, x, p.y, { lineBreak: false, baseline: 'alphabetic' });
      } else if (p.kind === 'line') {
        doc.moveTo(p.x1, p.y1).lineTo(p.x2, p.y2).lineWidth(p.width).stroke();
      } else if (p.kind === 'box') {
        doc.rect(p.x, p.y, p.w, p.h);
        if (p.fill) doc.fill();
        else doc.lineWidth(p.stroke ?? 1).stroke();
      } else {
        const sh = barcodeShapes(p);
        for (const r of sh.rects) doc.rect(r.x, r.y, r.w, r.h);
        for (const poly of sh.polygons) doc.polygon(...poly);
        doc.fill();
        for (const ring of sh.rings) doc.circle(ring.cx, ring.cy, ring.outer).circle(ring.cx, ring.cy, ring.inner).fill('even-odd');
      }
    }
    doc.end();
  });
}

/** The label as HTML for Chromium: the SVG document inline (text as glyph outlines, as in our SVG). */
function labelHtml(drawing: Drawing): string {
  const svg = drawingToSvg(drawing).replace(/^<\?xml[^>]*>\n/, '');
  return `<!doctype html><html><head><style>@page{size:${drawing.widthPt}pt ${drawing.heightPt}pt;margin:0}body{margin:0}</style></head><body>${svg}</body></html>`;
}

/** Chromium printing the same label as HTML to PDF (BENCH_CHROMIUM=1); `close` ends the browser. */
async function chromiumBaseline(drawing: Drawing): Promise<{ scenario: Scenario; close: () => Promise<void> } | undefined> {
  if (process.env.BENCH_CHROMIUM !== '1') return undefined;
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  const page = await browser.newPage();
  const html = labelHtml(drawing);
  return {
    scenario: {
      name: 'baseline: Chromium page.pdf() of the same label as HTML',
      fn: async () => {
        await page.setContent(html);
        return page.pdf({ width: `${drawing.widthPt / 72}in`, height: `${drawing.heightPt / 72}in`, printBackground: true });
      },
    },
    close: () => browser.close(),
  };
}

/** The sharp path before issue 4's tuning: grey pixels unpacked one by one, default options, sharp's GIF. */
async function previousSharp(img: Bitmap, format: 'JPEG' | 'TIFF' | 'GIF' | 'WEBP'): Promise<Buffer> {
  const grey = Buffer.alloc(img.width * img.height);
  for (let y = 0, i = 0; y < img.height; y++) {
    const row = y * img.rowBytes;
    for (let x = 0; x < img.width; x++, i++) grey[i] = (img.bits[row + (x >> 3)]! >> (7 - (x & 7))) & 1 ? 255 : 0;
  }
  const base = sharp(grey, { raw: { width: img.width, height: img.height, channels: 1 } }).withDensity(img.dpi);
  switch (format) {
    case 'JPEG': return base.toColourspace('b-w').jpeg({ quality: 90 }).toBuffer();
    case 'TIFF': return base.toColourspace('b-w').tiff({ compression: 'ccittfax4', bitdepth: 1, miniswhite: true, xres: img.dpi / 25.4, yres: img.dpi / 25.4, resolutionUnit: 'inch' }).toBuffer();
    case 'GIF': return base.gif({ colours: 2, dither: 0, effort: 1 }).toBuffer();
    case 'WEBP': return base.webp({ lossless: true, effort: 0 }).toBuffer();
  }
}

/** A command-line converter fed on stdin, its output collected from stdout. */
function pipeThrough(cmd: string, args: string[], input: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`${cmd} exited with ${code}`))));
    child.stdin.end(input);
  });
}

function installed(cmd: string): boolean {
  try {
    execFileSync('which', [cmd], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export async function run(): Promise<string> {
  const drawing = layoutLabel(LABEL);
  const regular = readFileSync(FONT_FILES.regular);
  const bold = readFileSync(FONT_FILES.bold);
  const rasterSvg = drawingToSvg(drawing, { rasterDpi: 203 });

  let n = 0;
  const scenarios: Scenario[] = [
    { name: 'layoutLabel (same label)', fn: () => layoutLabel(LABEL) },
    { name: 'layoutLabel (new recipient every run)', fn: () => layoutLabel({ ...LABEL, to: { ...LABEL.to, name: `Recipient ${n++}`, street1: `${n} Fifth Avenue` } }) },
    { name: 'rasterize 203 dpi (1-bit bitmap, the floor of every raster format)', fn: () => rasterize(drawing, 203) },
    ...SUPPORTED_FORMATS.map((format) => ({ name: `renderDrawing ${format}`, fn: () => renderDrawing(drawing, format) })),
    { name: 'renderDrawing PNG 300 dpi', fn: () => renderDrawing(drawing, 'PNG', { dpi: 300 }) },
    { name: 'renderDrawing ZPL 300 dpi', fn: () => renderDrawing(drawing, 'ZPL', { dpi: 300 }) },
    { name: 'renderLabel PDF (layout + render)', fn: () => renderLabel(LABEL, 'PDF') },
  ];
  const rows = await measureAll(scenarios, RUNS);
  const byFormat = new Map(rows.flatMap((t) => (t.name.startsWith('renderDrawing ') ? [[t.name.slice('renderDrawing '.length), t] as const] : [])));

  // What bwip-js itself takes to draw only this label's barcodes as SVG: the floor for any label SVG.
  const symbols = drawing.primitives.flatMap((p) => (p.kind === 'barcode' ? [p] : []));
  const chromium = await chromiumBaseline(drawing);
  const png = (await renderDrawing(drawing, 'PNG')).body;
  const pdfBody = await renderDrawing(drawing, 'PDF');
  const converters: Scenario[] = [];
  if (installed('convert')) {
    converters.push(
      { name: 'baseline: ImageMagick convert of our PNG to BMP (a process per label)', fn: () => pipeThrough('convert', ['png:-', 'bmp3:-'], png), every: 2 },
      { name: 'baseline: ImageMagick convert of our PNG to PCX (a process per label)', fn: () => pipeThrough('convert', ['png:-', 'pcx:-'], png), every: 2 },
    );
  }
  if (installed('gs')) {
    for (const [device, format] of [['ps2write', 'PS'], ['eps2write', 'EPS']] as const) {
      converters.push({ name: `baseline: Ghostscript ${device} of our PDF to ${format} (a process per label)`, fn: () => pipeThrough('gs', ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', `-sDEVICE=${device}`, '-sOutputFile=-', '-'], pdfBody.body), every: 2 });
    }
  }
  const baselines = await measureAll([
    { name: 'baseline: pdfkit with fonts registered per document', fn: () => pdfkitAsDocumented(drawing, regular, bold) },
    { name: 'baseline: resvg render + its own RGBA PNG (anti-aliased)', fn: () => new Resvg(rasterSvg, { font: { loadSystemFonts: false }, background: '#fff' }).render().asPng() },
    {
      name: 'baseline: bwip-js toSVG() of the label\'s barcodes alone',
      fn: () => symbols.map((b) => bwipjs.toSVG({ bcid: b.symbology, text: b.data, ...(b.symbology === 'maxicode' ? { mode: b.data.includes('\x1d840\x1d') ? 2 : 3 } : {}) })).join(''),
    },
    ...(['JPEG', 'TIFF', 'GIF', 'WEBP'] as const).map((format) => ({ name: `baseline: previous sharp path, ${format}`, fn: () => previousSharp(rasterize(drawing, 203), format) })),
    ...converters,
    ...(chromium ? [chromium.scenario] : []),
  ], Math.min(RUNS, 60));
  await chromium?.close();
  const [pdfBase, pngBase, svgBase] = baselines as [Timing, Timing, Timing];
  const base = (prefix: string) => baselines.find((b) => b.name.startsWith(prefix));
  const chromiumTiming = base('baseline: Chromium');

  const fmtRow = (t: Timing) => [t.name, fmtMs(t.median), fmtMs(t.p90), fmtMs(t.min), fmtMs(t.cpu), t.bytes === undefined ? '–' : `${(t.bytes / 1024).toFixed(1)} KiB`];
  const header = ['scenario', 'median', 'p90', 'min', 'CPU / run', 'output'];
  const pdf = byFormat.get('PDF')!;
  const fmt = (f: string) => byFormat.get(f)!;
  const checks = [
    atMostMs('PDF 4x6, median', pdf.median, 5, pdfBase.median),
    atMostMs('SVG 4x6, median', fmt('SVG').median, 2, svgBase.median),
    atMostMs('PNG 4x6 203 dpi, median', fmt('PNG').median, 15, pngBase.median),
    atMostMs('ZPL 4x6 203 dpi, median', fmt('ZPL').median, 1, svgBase.median),
  ];
  // Issue 4's formats, each against its baseline (when the converter is installed).
  const more: [string, number, string | undefined][] = [
    ['JPEG', 20, 'baseline: previous sharp path, JPEG'],
    ['TIFF', 20, 'baseline: previous sharp path, TIFF'],
    ['GIF', 20, 'baseline: previous sharp path, GIF'],
    ['WEBP', 40, 'baseline: previous sharp path, WEBP'],
    ['BMP', 20, 'baseline: ImageMagick convert of our PNG to BMP'],
    ['PCX', 20, 'baseline: ImageMagick convert of our PNG to PCX'],
    ['PS', 5, 'baseline: Ghostscript ps2write'],
    ['EPS', 5, 'baseline: Ghostscript eps2write'],
    ['EMF', 20, undefined],
  ];
  const moreChecks = more.map(([f, goal, prefix]) => {
    // EMF has no other writer to compare with: its baseline is our PNG of the same raster.
    const b = prefix ? base(prefix) : fmt('PNG');
    return { ...atMostMs(`${f} 4x6${f === 'PS' || f === 'EPS' ? '' : ' 203 dpi'}, median`, fmt(f).median, goal, b?.median ?? NaN), baseline: prefix ? (b ? prefix.slice('baseline: '.length) : 'not installed') : 'our PNG' };
  });
  return [
    '## render',
    '',
    `The UPS 4x6 label of \`bench/render.ts\` (German sender, Greek recipient name, MaxiCode, two Code 128), rendered in-process on one core. Scenarios run interleaved, one call each per round, ${RUNS} rounds after a warm-up (BENCH_RENDER_RUNS), with a full GC every ten rounds; baselines likewise, ${Math.min(RUNS, 60)} rounds (ImageMagick and Ghostscript every second round). CPU / run counts this process only (Chromium's, ImageMagick's and Ghostscript's own processes are not in it).`,
    '',
    table(header, rows.map(fmtRow)),
    '',
    'Baselines, same run:',
    '',
    table(header, baselines.map(fmtRow)),
    '',
    `PDF ÷ pdfkit-as-documented: ${(pdf.median / pdfBase.median).toFixed(2)}; PNG ÷ resvg's own PNG: ${(byFormat.get('PNG')!.median / pngBase.median).toFixed(2)}` +
      (chromiumTiming ? `; PDF ÷ Chromium page.pdf(): ${(pdf.median / chromiumTiming.median).toFixed(3)} (Chromium ${(chromiumTiming.median / pdf.median).toFixed(0)} × slower)` : '') + '.',
    '',
    targetTable(checks, 'its baseline (PDF: pdfkit as documented, PNG: resvg PNG, SVG and ZPL: bwip-js SVG of the barcodes)'),
    '',
    table(
      ['target', 'measured', 'target', 'ratio to its baseline', 'baseline', 'met'],
      moreChecks.map((c) => [c.what, c.measured, c.target, Number.isFinite(c.ratio) ? c.ratio.toFixed(2) : '–', c.baseline, c.met ? 'yes' : '**no**']),
    ),
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await run());
}

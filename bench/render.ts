// The label renderer in-process, one core: the same UPS 4x6 label in every supported format, median
// of many runs, beside baselines measured in the same run: pdfkit used as documented (DejaVu Sans
// registered from its TTF for each document, which re-parses and re-subsets the font), resvg's own
// full-colour PNG of the same SVG, Chromium printing the same label as HTML to PDF (whenever
// /usr/bin/chromium, or CHROMIUM_PATH, exists; BENCH_CHROMIUM=0 skips it), and bwip-js drawing only
// the barcodes as SVG; for the other formats the
// previous sharp path (per-pixel grey expansion, default options, sharp's GIF), ImageMagick and
// Ghostscript converting our PNG / PDF (what one would shell out to otherwise), and PNG for EMF.
// Targets: PDF ≤ 5 ms, SVG ≤ 2 ms, PNG ≤ 15 ms, ZPL ≤ 1 ms; JPEG, GIF, BMP, PCX, TIFF ≤ 20 ms;
// WEBP ≤ 40 ms; PS, EPS ≤ 5 ms; EMF ≤ 20 ms; PDF ≥ 20× faster than Chromium. Then, in a fresh
// process, 10,000 labels of varying data in every format (BENCH_MEMORY_LABELS), with the peak
// resident memory against its target of 300 MB.
import { execFileSync, fork, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import sharp from 'sharp';
import PDFDocument from 'pdfkit';
import { Resvg } from '@resvg/resvg-js';
import bwipjs from 'bwip-js';
import { FONT_FILES } from '../src/render/fonts.ts';
import { barcodeShapes } from '../src/render/geometry.ts';
import { LABEL_FORMATS, LABEL_SIZES, layoutLabel, renderDrawing, renderLabel } from '../src/render/index.ts';
import { CARRIERS, SERVICES, trackingNumberFor } from '../src/carriers/index.ts';
import type { Drawing, LabelData } from '../src/render/index.ts';
import { drawingToSvg } from '../src/render/svg.ts';
import { rasterize } from '../src/render/raster.ts';
import type { Bitmap } from '../src/render/raster.ts';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { atMostMs, fmtMs, fmtRate, progress, table, targetTable, type TargetCheck } from './lib.ts';

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
      } else if (p.kind === 'barcode') {
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

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Chromium printing the same label as HTML to PDF (unless BENCH_CHROMIUM=0 or no Chromium); `close` ends the browser. */
async function chromiumBaseline(drawing: Drawing): Promise<{ scenario: Scenario; close: () => Promise<void> } | undefined> {
  if (process.env.BENCH_CHROMIUM === '0' || !existsSync(CHROMIUM_PATH)) return undefined;
  const { chromium } = await import('playwright-core');
  progress(`launching ${CHROMIUM_PATH} for the HTML → PDF baseline`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
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

/** The sharp path before its tuning (docs/rendering.md): grey pixels unpacked one by one, default options, sharp's GIF. */
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
    // A converter that exits without reading its input (EPIPE) has failed; 'close' says so too.
    child.stdin.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`${cmd} exited with ${code}`))));
    child.stdin.end(input);
  });
}

/**
 * Whether `cmd` does this conversion here: a baseline whose converter is missing, or is a stand-in
 * that only pretends to be it, is left out (its target stays, being absolute) instead of failing the
 * run. `.ci/run` installs the real ones.
 */
async function converts(cmd: string, args: string[], input: Buffer): Promise<boolean> {
  if (!installed(cmd)) {
    progress(`${cmd} is not installed: its baseline is left out`);
    return false;
  }
  try {
    return (await pipeThrough(cmd, args, input)).length > 0;
  } catch (err) {
    progress(`${cmd} ${args.join(' ')} does not work here (${(err as Error).message}): its baseline is left out`);
    return false;
  }
}

function installed(cmd: string): boolean {
  try {
    execFileSync('which', [cmd], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Labels rendered by the memory run (BENCH_MEMORY_LABELS), in a process of their own. */
const MEMORY_LABELS = Number(process.env.BENCH_MEMORY_LABELS ?? 10_000);
const MEMORY_TARGET_MB = 300;
/**
 * The memory run's process gets the settings `npm start` uses (package.json), as docs/benchmarks.md recommends for
 * production: an 8 MB young-generation semi-space (Node 24 sizes it from the heap limit, up to 64 MB
 * each), one glibc malloc arena, an early trim, and a fixed mmap threshold so large raster buffers go back to the
 * system when freed instead of fragmenting the heap.
 */
// The same settings as `npm start` (package.json) by default; BENCH_MEMORY_TUNED=0 for Node's defaults.
const MEMORY_TUNED = process.env.BENCH_MEMORY_TUNED !== '0';
const TUNED_EXEC_ARGV = ['--max-semi-space-size=8'];
const TUNED_ENV = { MALLOC_ARENA_MAX: '1', MALLOC_MMAP_THRESHOLD_: '65536', MALLOC_TRIM_THRESHOLD_: '131072' };

const NAMES = ['Ελένη Παπαδοπούλου', 'Jürgen Müller', 'Дмитрий Иванов', 'Ada Lovelace', 'Zoë Ångström', 'Grace Hopper', 'Łukasz Żółć', 'Søren Kierkegaard'];
const STREETS = ['Fifth Avenue', 'Main Street', 'Market Street', 'Ocean Drive', 'Elm Street', 'Broadway'];
const CITIES: [string, string, string][] = [['New York', 'NY', '10118'], ['San Francisco', 'CA', '94105'], ['Chicago', 'IL', '60601'], ['Austin', 'TX', '73301'], ['Seattle', 'WA', '98101']];

/** The i-th label of the memory run: carrier, service, size, addresses, parcel and reference all vary. */
export function variedLabel(i: number): LabelData {
  const carrier = CARRIERS[i % CARRIERS.length]!;
  const services = SERVICES[carrier];
  const service = services[Math.floor(i / CARRIERS.length) % services.length]!;
  const [city, state, zip] = CITIES[i % CITIES.length]!;
  return {
    labelId: `lbl_mem_${i}`,
    carrier,
    serviceCode: service.code,
    serviceName: service.name,
    trackingNumber: trackingNumberFor(carrier, BigInt(1000 + i), service.code),
    size: LABEL_SIZES[Math.floor(i / 7) % LABEL_SIZES.length]!,
    shipDate: new Date(Date.UTC(2025, 0, 1) + i * 60_000).toISOString(),
    from: i % 2 ? LABEL.from : { name: 'Warehouse 3', company: 'Acme Fulfilment', street1: '100 Industrial Way', city: 'Reno', state: 'NV', postalCode: '89502', country: 'US' },
    to: { name: `${NAMES[i % NAMES.length]} ${i}`, street1: `${(i * 37) % 9999 + 1} ${STREETS[i % STREETS.length]}`, ...(i % 3 ? { street2: `Apt ${i % 500}` } : {}), city, state, postalCode: zip, country: 'US' },
    parcel: { weight: { value: 0.1 + (i % 300) / 10, unit: i % 2 ? 'kg' : 'lb' }, length: 10 + (i % 50), width: 10 + (i % 30), height: 5 + (i % 20), dimensionUnit: i % 2 ? 'cm' : 'in' },
    reference: `order-${i}`,
  };
}

interface MemoryResult {
  labels: number;
  formats: number;
  seconds: number;
  bytesOut: number;
  /** MB, resident: after loading the renderer, peak (sampled after every label), at the end. */
  rssStart: number;
  rssPeak: number;
  rssEnd: number;
  heapPeak: number;
  externalPeak: number;
}

/** In the child process: render MEMORY_LABELS labels, every format in turn, sampling resident memory after each. */
async function memoryChild(): Promise<MemoryResult> {
  const mb = (n: number) => n / 2 ** 20;
  await renderLabel(variedLabel(0), 'PDF');
  const rssStart = mb(process.memoryUsage.rss());
  let rssPeak = rssStart;
  let heapPeak = 0;
  let externalPeak = 0;
  let bytesOut = 0;
  const t0 = performance.now();
  for (let i = 0; i < MEMORY_LABELS; i++) {
    const format = LABEL_FORMATS[i % LABEL_FORMATS.length]!;
    const doc = await renderLabel(variedLabel(i), format, { dpi: i % 10 === 9 ? 300 : 203 });
    bytesOut += doc.body.length;
    rssPeak = Math.max(rssPeak, mb(process.memoryUsage.rss()));
    if (i % 100 === 0) {
      const m = process.memoryUsage();
      heapPeak = Math.max(heapPeak, mb(m.heapUsed));
      externalPeak = Math.max(externalPeak, mb(m.external + m.arrayBuffers));
      if (i % 1000 === 0) process.stderr.write(`  · memory run: ${i} labels, rss ${mb(m.rss).toFixed(0)} MB (peak ${rssPeak.toFixed(0)} MB)\n`);
    }
  }
  return { labels: MEMORY_LABELS, formats: LABEL_FORMATS.length, seconds: (performance.now() - t0) / 1000, bytesOut, rssStart, rssPeak, rssEnd: mb(process.memoryUsage.rss()), heapPeak, externalPeak };
}

/** Runs memoryChild in a fresh process (this file, BENCH_RENDER_MEMORY_CHILD=1), so its memory is the renderer's alone. */
function memoryRun(): Promise<MemoryResult> {
  progress(`memory: ${fmtRate(MEMORY_LABELS)} labels of varying data, all ${LABEL_FORMATS.length} formats in turn, in a fresh process${MEMORY_TUNED ? ' (tuned)' : ''}`);
  return new Promise((resolve, reject) => {
    const child = fork(new URL(import.meta.url).pathname, [], {
      env: { ...process.env, BENCH_RENDER_MEMORY_CHILD: '1', ...(MEMORY_TUNED ? TUNED_ENV : {}) },
      execArgv: ['--disable-warning=ExperimentalWarning', ...(MEMORY_TUNED ? TUNED_EXEC_ARGV : [])],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: MemoryResult | undefined;
    child.on('message', (m: MemoryResult) => (result = m));
    child.on('exit', (code) => (result && code === 0 ? resolve(result) : reject(new Error(`memory run failed (exit code ${code})`))));
  });
}

export async function run(): Promise<string> {
  const drawing = layoutLabel(LABEL);
  const regular = readFileSync(FONT_FILES.r);
  const bold = readFileSync(FONT_FILES.b);
  const rasterSvg = drawingToSvg(drawing, { rasterDpi: 203 });

  let n = 0;
  const scenarios: Scenario[] = [
    { name: 'layoutLabel (same label)', fn: () => layoutLabel(LABEL) },
    { name: 'layoutLabel (new recipient every run)', fn: () => layoutLabel({ ...LABEL, to: { ...LABEL.to, name: `Recipient ${n++}`, street1: `${n} Fifth Avenue` } }) },
    { name: 'rasterize 203 dpi (1-bit bitmap, the floor of every raster format)', fn: () => rasterize(drawing, 203) },
    ...LABEL_FORMATS.map((format) => ({ name: `renderDrawing ${format}`, fn: () => renderDrawing(drawing, format) })),
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
  for (const format of ['BMP', 'PCX'] as const) {
    const args = ['png:-', format === 'BMP' ? 'bmp3:-' : 'pcx:-'];
    if (await converts('convert', args, png)) {
      converters.push({ name: `baseline: ImageMagick convert of our PNG to ${format} (a process per label)`, fn: () => pipeThrough('convert', args, png), every: 2 });
    }
  }
  for (const [device, format] of [['ps2write', 'PS'], ['eps2write', 'EPS']] as const) {
    const args = ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', `-sDEVICE=${device}`, '-sOutputFile=-', '-'];
    if (await converts('gs', args, pdfBody.body)) {
      converters.push({ name: `baseline: Ghostscript ${device} of our PDF to ${format} (a process per label)`, fn: () => pipeThrough('gs', args, pdfBody.body), every: 2 });
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
  // The formats beyond PDF, PNG, ZPL and SVG, each against its baseline (when the converter is installed).
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
    return { ...atMostMs(`${f} 4x6${f === 'PS' || f === 'EPS' ? '' : ' 203 dpi'}, median`, fmt(f).median, goal, b?.median ?? NaN), baseline: prefix ? (b ? prefix.slice('baseline: '.length) : 'not available here') : 'our PNG' };
  });
  // Chromium and the memory run: a speed-up and a ceiling, not "at most N ms".
  const special: (TargetCheck & { baseline: string })[] = [];
  if (chromiumTiming) {
    const speedup = chromiumTiming.median / pdf.median;
    special.push({ what: 'PDF 4x6 vs HTML → PDF in headless Chromium, median', measured: `${speedup.toFixed(1)} × faster (${fmtMs(pdf.median)} vs ${fmtMs(chromiumTiming.median)})`, target: '≥ 20 × faster', ratio: pdf.median / chromiumTiming.median, met: speedup >= 20, baseline: 'Chromium page.pdf()' });
  } else {
    special.push({ what: 'PDF 4x6 vs HTML → PDF in headless Chromium, median', measured: 'not measured', target: '≥ 20 × faster', ratio: NaN, met: false, baseline: `no Chromium at ${CHROMIUM_PATH} (or BENCH_CHROMIUM=0)` });
  }
  const memory = await memoryRun();
  special.push({
    what: `${fmtRate(memory.labels)} labels in one process, peak resident memory${MEMORY_TUNED ? ` (${[...TUNED_EXEC_ARGV, ...Object.entries(TUNED_ENV).map(([k, v]) => `${k}=${v}`)].join(' ')})` : ' (Node defaults)'}`,
    measured: `${memory.rssPeak.toFixed(0)} MB`,
    target: `< ${MEMORY_TARGET_MB} MB`,
    ratio: memory.rssPeak / memory.rssStart,
    met: memory.rssPeak < MEMORY_TARGET_MB,
    baseline: `resident memory after the first label (${memory.rssStart.toFixed(0)} MB)`,
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
      [...moreChecks, ...special].map((c) => [c.what, c.measured, c.target, Number.isFinite(c.ratio) ? c.ratio.toFixed(2) : '–', c.baseline, c.met ? 'yes' : '**no**']),
    ),
    '',
    `Memory run: ${fmtRate(memory.labels)} labels rendered one after another in a fresh process (\`variedLabel(i)\`: the four carriers with all their services, the four sizes, a different recipient, street, city, parcel and reference each time), ` +
      `the ${memory.formats} formats in turn, every tenth at 300 dpi; ${memory.seconds.toFixed(1)} s, ${(memory.bytesOut / 2 ** 20).toFixed(0)} MiB of documents produced. ` +
      `Resident memory sampled after every label: ${memory.rssStart.toFixed(0)} MB after the first label, peak ${memory.rssPeak.toFixed(0)} MB, ${memory.rssEnd.toFixed(0)} MB at the end ` +
      `(JS heap used at most ${memory.heapPeak.toFixed(0)} MB, external and array buffers at most ${memory.externalPeak.toFixed(0)} MB, sampled every 100 labels).`,
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.env.BENCH_RENDER_MEMORY_CHILD === '1') {
    const result = await memoryChild();
    // Run directly (no IPC channel) it prints the result, for quick experiments.
    if (process.send) await new Promise<void>((resolve) => process.send!(result, () => resolve()));
    else console.log(JSON.stringify(result));
  } else {
    console.log(await run());
  }
}

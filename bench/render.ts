// The label renderer in-process, one core: the same UPS 4x6 label in every supported format, median
// of many runs, beside baselines measured in the same run: pdfkit used as documented (DejaVu Sans
// registered from its TTF for each document, which re-parses and re-subsets the font), resvg's own
// full-colour PNG of the same SVG, and optionally Chromium printing the same label as HTML to PDF
// (BENCH_CHROMIUM=1). Targets: PDF ≤ 5 ms, SVG ≤ 2 ms, PNG ≤ 15 ms, ZPL ≤ 1 ms.
import { readFileSync } from 'node:fs';
import PDFDocument from 'pdfkit';
import { Resvg } from '@resvg/resvg-js';
import { FONT_FILES } from '../src/render/fonts.ts';
import { barcodeShapes } from '../src/render/geometry.ts';
import { SUPPORTED_FORMATS, layoutLabel, renderDrawing } from '../src/render/index.ts';
import type { Drawing, LabelData } from '../src/render/index.ts';
import { drawingToSvg } from '../src/render/svg.ts';
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

async function measure(name: string, fn: () => unknown, runs = RUNS): Promise<Timing> {
  progress(`${name}: ${runs} runs`);
  let bytes: number | undefined;
  for (let i = 0; i < Math.max(10, runs / 10); i++) {
    const out = await fn();
    if (out && typeof out === 'object' && 'body' in out) bytes = (out as { body: Buffer }).body.length;
    else if (Buffer.isBuffer(out)) bytes = out.length;
  }
  const times = new Float64Array(runs);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    times[i] = performance.now() - t;
  }
  const cpu = process.cpuUsage(cpu0);
  times.sort();
  return {
    name,
    median: times[runs >> 1]!,
    p90: times[Math.floor(runs * 0.9)]!,
    min: times[0]!,
    cpu: (cpu.user + cpu.system) / runs / 1000,
    ...(bytes === undefined ? {} : { bytes }),
  };
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

async function chromiumBaseline(drawing: Drawing): Promise<Timing | undefined> {
  if (process.env.BENCH_CHROMIUM !== '1') return undefined;
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage();
    const html = labelHtml(drawing);
    return await measure('baseline: Chromium page.pdf() of the same label as HTML', async () => {
      await page.setContent(html);
      return page.pdf({ width: `${drawing.widthPt / 72}in`, height: `${drawing.heightPt / 72}in`, printBackground: true });
    }, Math.min(RUNS, 50));
  } finally {
    await browser.close();
  }
}

export async function run(): Promise<string> {
  const drawing = layoutLabel(LABEL);
  const regular = readFileSync(FONT_FILES.regular);
  const bold = readFileSync(FONT_FILES.bold);
  const rasterSvg = drawingToSvg(drawing, { rasterDpi: 203 });

  const rows: Timing[] = [];
  const byFormat = new Map<string, Timing>();
  let n = 0;
  rows.push(await measure('layoutLabel (same label)', () => layoutLabel(LABEL)));
  rows.push(await measure('layoutLabel (new recipient every run)', () => layoutLabel({ ...LABEL, to: { ...LABEL.to, name: `Recipient ${n++}`, street1: `${n} Fifth Avenue` } }), Math.min(RUNS, 200)));
  for (const format of SUPPORTED_FORMATS) {
    const t = await measure(`renderDrawing ${format}`, () => renderDrawing(drawing, format), format === 'PNG' ? Math.min(RUNS, 150) : RUNS);
    rows.push(t);
    byFormat.set(format, t);
  }
  rows.push(await measure('renderDrawing PNG 300 dpi', () => renderDrawing(drawing, 'PNG', { dpi: 300 }), Math.min(RUNS, 100)));
  rows.push(await measure('renderDrawing ZPL 300 dpi', () => renderDrawing(drawing, 'ZPL', { dpi: 300 })));
  rows.push(await measure('renderLabel PDF (layout + render)', () => import('../src/render/index.ts').then((m) => m.renderLabel(LABEL, 'PDF'))));

  const pdfBase = await measure('baseline: pdfkit with fonts registered per document', () => pdfkitAsDocumented(drawing, regular, bold), Math.min(RUNS, 100));
  const pngBase = await measure('baseline: resvg render + its own RGBA PNG (anti-aliased)', () => new Resvg(rasterSvg, { font: { loadSystemFonts: false }, background: '#fff' }).render().asPng(), Math.min(RUNS, 100));
  const svgBase = await measure('baseline: JSON.stringify of the drawing', () => JSON.stringify(drawing));
  const chromium = await chromiumBaseline(drawing);
  const baselines = [pdfBase, pngBase, svgBase, ...(chromium ? [chromium] : [])];

  const fmtRow = (t: Timing) => [t.name, fmtMs(t.median), fmtMs(t.p90), fmtMs(t.min), fmtMs(t.cpu), t.bytes === undefined ? '–' : `${(t.bytes / 1024).toFixed(1)} KiB`];
  const header = ['scenario', 'median', 'p90', 'min', 'CPU / run', 'output'];
  const pdf = byFormat.get('PDF')!;
  const checks = [
    atMostMs('PDF 4x6, median', pdf.median, 5, pdfBase.median),
    atMostMs('SVG 4x6, median', byFormat.get('SVG')!.median, 2, svgBase.median),
    atMostMs('PNG 4x6 203 dpi, median', byFormat.get('PNG')!.median, 15, pngBase.median),
    atMostMs('ZPL 4x6 203 dpi, median', byFormat.get('ZPL')!.median, 1, svgBase.median),
  ];
  return [
    '## render',
    '',
    `The UPS 4x6 label of \`bench/render.ts\` (German sender, Greek recipient name, MaxiCode, two Code 128), rendered in-process on one core; ${RUNS} runs per scenario after a warm-up (BENCH_RENDER_RUNS).`,
    '',
    table(header, rows.map(fmtRow)),
    '',
    'Baselines, same run:',
    '',
    table(header, baselines.map(fmtRow)),
    '',
    `PDF ÷ pdfkit-as-documented: ${(pdf.median / pdfBase.median).toFixed(2)}; PNG ÷ resvg's own PNG: ${(byFormat.get('PNG')!.median / pngBase.median).toFixed(2)}` +
      (chromium ? `; PDF ÷ Chromium page.pdf(): ${(pdf.median / chromium.median).toFixed(3)} (Chromium ${(chromium.median / pdf.median).toFixed(0)} × slower)` : '') + '.',
    '',
    targetTable(checks, 'its baseline (PDF: pdfkit as documented, PNG: resvg PNG, SVG/ZPL: JSON.stringify)'),
    '',
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(await run());
}

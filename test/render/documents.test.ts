// §5: formats and media types, label sizes, deterministic rendering, what each carrier prints.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import sharp from 'sharp';
import {
  LABEL_FORMATS, LABEL_SIZES, groupTrackingNumber, layoutLabel, mediaTypeOf, renderDrawing,
  renderLabel, routingCodeFor,
} from '../../src/render/index.ts';
import type { Drawing, LabelData } from '../../src/render/index.ts';
import { ALL_CARRIERS, DHL_LABEL, FEDEX_LABEL, UPS_INTERNATIONAL, UPS_LABEL, USPS_LABEL } from './fixtures.ts';

const run = promisify(execFile);

describe('formats', () => {
  it('the 13 retrieval formats with their media types', () => {
    assert.deepEqual([...LABEL_FORMATS], ['PDF', 'PNG', 'ZPL', 'JPEG', 'TIFF', 'SVG', 'EPS', 'BMP', 'GIF', 'WEBP', 'PCX', 'EMF', 'PS']);
    const expected: Record<string, string> = {
      PDF: 'application/pdf', PNG: 'image/png', ZPL: 'application/zpl', SVG: 'image/svg+xml', JPEG: 'image/jpeg',
      TIFF: 'image/tiff', EPS: 'application/postscript', PS: 'application/postscript', BMP: 'image/bmp',
      GIF: 'image/gif', WEBP: 'image/webp', PCX: 'image/vnd.zbrush.pcx', EMF: 'image/emf',
    };
    for (const f of LABEL_FORMATS) assert.equal(mediaTypeOf(f), expected[f], f);
  });

  it('every format has a backend; each document is what it says', async () => {
    const magic: Record<string, (b: Buffer) => boolean> = {
      PDF: (b) => b.subarray(0, 5).toString() === '%PDF-',
      PNG: (b) => b.subarray(1, 4).toString() === 'PNG',
      ZPL: (b) => b.subarray(0, 3).toString() === '^XA',
      SVG: (b) => b.toString('utf8', 0, 200).includes('<svg'),
      JPEG: (b) => b[0] === 0xff && b[1] === 0xd8,
      TIFF: (b) => b.toString('latin1', 0, 2) === 'II' || b.toString('latin1', 0, 2) === 'MM',
      GIF: (b) => b.toString('latin1', 0, 4) === 'GIF8',
      WEBP: (b) => b.toString('latin1', 8, 12) === 'WEBP',
      BMP: (b) => b.toString('latin1', 0, 2) === 'BM',
      PCX: (b) => b[0] === 0x0a,
      PS: (b) => b.toString('latin1', 0, 4) === '%!PS',
      EPS: (b) => b.toString('latin1', 0, 4) === '%!PS',
      EMF: (b) => b.readUInt32LE(0) === 1 && b.readUInt32LE(40) === 0x464d4520,
    };
    for (const f of LABEL_FORMATS) {
      const doc = await renderLabel(UPS_LABEL, f);
      assert.equal(doc.mediaType, mediaTypeOf(f));
      assert.match(doc.extension, /^[a-z]{2,4}$/);
      assert.ok(magic[f]?.(doc.body), `${f} body`);
    }
  });
});

async function pdfPageSize(pdf: Buffer): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'render-size-'));
  try {
    await writeFile(join(dir, 'l.pdf'), pdf);
    const info = (await run('pdfinfo', [join(dir, 'l.pdf')])).stdout;
    return /Page size:\s+([\d.]+ x [\d.]+) pts/.exec(info)![1]!;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('sizes', () => {
  const expected = { '4x6': [288, 432], '4x8': [288, 576], '6x4': [432, 288], '8.5x11': [612, 792] } as const;
  for (const size of LABEL_SIZES) {
    it(`${size}: PDF page, PNG pixels at 203 and 300 dpi, SVG viewBox`, async () => {
      const data = { ...UPS_LABEL, size };
      const [w, h] = expected[size];
      assert.equal(await pdfPageSize((await renderLabel(data, 'PDF')).body), `${w} x ${h}`);
      for (const dpi of [203, 300] as const) {
        const meta = await sharp((await renderLabel(data, 'PNG', { dpi })).body).metadata();
        assert.deepEqual([meta.width, meta.height], [Math.round((w * dpi) / 72), Math.round((h * dpi) / 72)], `${dpi} dpi`);
        assert.equal(Math.round(meta.density!), dpi, 'resolution recorded in the PNG');
      }
      assert.ok((await renderLabel(data, 'SVG')).body.toString().includes(`viewBox="0 0 ${w} ${h}"`));
    });
  }

  it('renderDrawing takes any drawing, not only a label', async () => {
    const stamp: Drawing = {
      widthPt: 144,
      heightPt: 72,
      primitives: [
        { kind: 'box', x: 2, y: 2, w: 140, h: 68, stroke: 1 },
        { kind: 'text', x: 72, y: 40, size: 12, text: 'PAID – Ελλάδα', bold: true, anchor: 'middle' },
        { kind: 'line', x1: 10, y1: 50, x2: 134, y2: 50, width: 0.5 },
      ],
    };
    for (const f of LABEL_FORMATS) assert.ok((await renderDrawing(stamp, f)).body.length > 50, f);
    const meta = await sharp((await renderDrawing(stamp, 'PNG')).body).metadata();
    assert.deepEqual([meta.width, meta.height], [406, 203]);
  });
});

function sha(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

describe('determinism', () => {
  it('the same label and format give byte-identical documents, also in a fresh process', async () => {
    const here: Record<string, string> = {};
    for (const f of LABEL_FORMATS) {
      const a = await renderLabel(DHL_LABEL, f);
      const b = await renderLabel(structuredClone(DHL_LABEL), f);
      assert.ok(a.body.equals(b.body), `${f} differs between two renders`);
      here[f] = sha(a.body);
    }
    const indexUrl = new URL('../../src/render/index.ts', import.meta.url).href;
    const fixturesUrl = new URL('./fixtures.ts', import.meta.url).href;
    const script = `
      const { renderLabel, LABEL_FORMATS } = await import(${JSON.stringify(indexUrl)});
      const { DHL_LABEL } = await import(${JSON.stringify(fixturesUrl)});
      const { createHash } = await import('node:crypto');
      const out = {};
      for (const f of LABEL_FORMATS) out[f] = createHash('sha256').update((await renderLabel(DHL_LABEL, f)).body).digest('hex');
      console.log(JSON.stringify(out));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: fileURLToPath(new URL('../..', import.meta.url)) });
    assert.deepEqual(JSON.parse(stdout), here);
  });

  it('the PDF carries the ship date, not the time of rendering', async () => {
    const pdf = (await renderLabel(UPS_LABEL, 'PDF')).body.toString('latin1');
    assert.ok(pdf.includes('(D:20250314103000Z)'), 'creation date from shipDate');
    assert.match(pdf, /\/ID \[<[0-9a-f]{32}> <[0-9a-f]{32}>\]/);
  });
});

describe('what each carrier prints', () => {
  const texts = (d: LabelData): string[] => layoutLabel(d).primitives.flatMap((p) => (p.kind === 'text' ? [p.text] : []));

  it('tracking numbers in the carriers\' groups', () => {
    assert.equal(groupTrackingNumber('UPS', '1Z5R89390357567127'), '1Z 5R8 939 03 5756 712 7');
    assert.equal(groupTrackingNumber('USPS', '9400111206206406260787'), '9400 1112 0620 6406 2607 87');
    assert.equal(groupTrackingNumber('FedEx', '986578788855'), '9865 7878 8855');
    assert.equal(groupTrackingNumber('DHL', '3318810025'), '33 1881 0025');
    for (const d of ALL_CARRIERS) {
      assert.ok(texts(d).includes(groupTrackingNumber(d.carrier, d.trackingNumber)), `${d.carrier} human-readable tracking number`);
    }
  });

  it('routing code: deterministic, from destination state and postal code', () => {
    const code = routingCodeFor(UPS_LABEL);
    assert.match(code, /^NY 101 [1-9]-\d{2}$/);
    assert.equal(routingCodeFor(structuredClone(UPS_LABEL)), code);
    assert.match(routingCodeFor(UPS_INTERNATIONAL), /^RU 125 [1-9]-\d{2}$/);
    for (const d of ALL_CARRIERS) assert.ok(texts(d).includes(routingCodeFor(d)), `${d.carrier} prints its routing code`);
  });

  it('addresses, banner, package details on every label', () => {
    for (const d of [UPS_LABEL, USPS_LABEL, FEDEX_LABEL, DHL_LABEL]) {
      const t = texts(d);
      for (const s of [d.serviceName, d.from.name, d.to.name, d.to.street1, 'REF: ORDER-4711', 'SHIP DATE: 2025-03-14', '5.2 LBS']) {
        assert.ok(t.some((x) => x.includes(s)), `${d.carrier}: ${s}`);
      }
      assert.ok(t.some((x) => x.includes('12 x 10 x 8 IN')), `${d.carrier}: dimensions`);
      assert.ok(t.some((x) => x.includes(d.to.postalCode!)), `${d.carrier}: destination postal code`);
    }
    assert.ok(texts(DHL_LABEL).includes('GREECE'), 'country name on international labels');
  });

  it('2D symbol per carrier: UPS MaxiCode, FedEx PDF417, DHL and USPS DataMatrix', () => {
    const symbologies = (d: LabelData) => layoutLabel(d).primitives.flatMap((p) => (p.kind === 'barcode' ? [p.symbology] : []));
    assert.deepEqual(symbologies(UPS_LABEL).sort(), ['code128', 'gs1-128', 'maxicode']);
    assert.deepEqual(symbologies(USPS_LABEL).sort(), ['gs1-128', 'gs1datamatrix']);
    assert.deepEqual(symbologies(FEDEX_LABEL).sort(), ['code128', 'pdf417']);
    assert.deepEqual(symbologies(DHL_LABEL).sort(), ['code128', 'code128', 'datamatrix']);
  });

  it('linear barcodes have whole-dot modules at 203 dpi and room for their quiet zones', () => {
    for (const size of LABEL_SIZES) {
      for (const d of ALL_CARRIERS) {
        const drawing = layoutLabel({ ...d, size });
        for (const p of drawing.primitives) {
          if (p.kind !== 'barcode' || p.modules.shape !== 'bars') continue;
          const dots = (p.module * 203) / 72;
          assert.ok(Math.abs(dots - Math.round(dots)) < 1e-9 && dots >= 1, `${p.symbology} module ${dots} dots`);
          const quiet = 10 * p.module;
          assert.ok(p.x - quiet >= -1e-9 && p.x + p.w + quiet <= drawing.widthPt + 1e-9, `${d.carrier} ${size} quiet zones`);
        }
      }
    }
  });
});

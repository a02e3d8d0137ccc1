// The service's renderer (src/render/renderer.ts): documents drawn on a pool of threads, kept in
// memory and in a store shared by processes, and named by a key that holds the renderer's version.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { renderDocument, type DocumentSource } from '../../src/render/index.ts';
import { documentKey, etagOf, Renderer, type DocumentStore } from '../../src/render/renderer.ts';
import { RENDERER_VERSION, rendererVersion, SHARED } from '../../src/render/version.ts';
import { PRINT_CREDIT_BYTES } from '../../src/render/render-thread.ts';
import { renderDuration } from '../../src/metrics.ts';
import { DHL_LABEL, UPS_LABEL } from './fixtures.ts';
import { eventually } from '../webhooks/receiver.ts';

const UPS: DocumentSource = { layout: 'label', data: UPS_LABEL };
const DHL: DocumentSource = { layout: 'label', data: DHL_LABEL };
const STAMP: DocumentSource = { layout: 'stamp', data: { serial: 'ST-0001-000001', carrier: 'USPS', originPostalCode: '78701', issuedAt: '2026-01-02T03:04:05.000Z', indicium: 'eyJhbGciOiJFUzI1NiJ9.e30.c2ln' } };

/** A store in memory, as a database would keep documents for every process. */
function memoryStore(): DocumentStore & { documents: Map<string, Uint8Array> } {
  const documents = new Map<string, Uint8Array>();
  return {
    documents,
    async get(key) {
      return documents.get(key);
    },
    async put(key, body) {
      documents.set(key, body);
    },
  };
}

describe('Renderer', () => {
  const renderers: Renderer[] = [];
  const renderer = (options: Partial<ConstructorParameters<typeof Renderer>[0]> = {}) => {
    const r = new Renderer({ threads: 1, memoryBytes: 8 * 1024 * 1024, ...options });
    renderers.push(r);
    return r;
  };
  after(async () => Promise.all(renderers.map((r) => r.close())));

  it('draws on a thread of its pool the very bytes this thread would draw, for labels and stamps', async () => {
    const r = renderer();
    for (const [source, format] of [[UPS, 'PDF'], [UPS, 'PNG'], [DHL, 'ZPL'], [STAMP, 'PNG']] as const) {
      const doc = await r.render(source, format);
      assert.deepEqual(doc.body, (await renderDocument(source, format)).body, `${source.layout} ${format}`);
      assert.equal(doc.key, documentKey(source, format, 203));
    }
    assert.equal(r.stats.rendered, 4);
    assert.equal(r.stats.threads, 1);
  });

  it('draws a document once: later requests, also concurrent ones, get the kept bytes', async () => {
    const r = renderer();
    const [a, b] = await Promise.all([r.render(UPS, 'PNG'), r.render(UPS, 'PNG')]);
    const c = await r.render(UPS, 'PNG');
    assert.equal(r.stats.rendered, 1);
    assert.deepEqual(a.body, b.body);
    assert.deepEqual(a.body, c.body);
    assert.equal(r.stats.memoryDocuments, 1);
    assert.equal(r.stats.memoryBytes, a.body.length);
    await r.render(UPS, 'PNG', 300);
    await r.render(DHL, 'PNG');
    assert.equal(r.stats.rendered, 3, 'another resolution or another label is another document');
  });

  it('keeps no more in memory than it is given, and nothing with 0', async () => {
    const small = renderer({ memoryBytes: 1 });
    await small.render(UPS, 'ZPL');
    await small.render(UPS, 'ZPL');
    assert.equal(small.stats.rendered, 2);
    const none = renderer({ memoryBytes: 0 });
    await none.render(UPS, 'ZPL');
    await none.render(UPS, 'ZPL');
    assert.equal(none.stats.rendered, 2);
    assert.equal(none.stats.memoryDocuments, 0);
  });

  it('stores what it draws, and a second renderer (another process) takes it from the store without drawing', async () => {
    const store = memoryStore();
    const first = renderer({ store });
    const drawn = await first.render(STAMP, 'PDF');
    await first.close();
    assert.deepEqual(store.documents.get(drawn.key), new Uint8Array(drawn.body));
    const second = renderer({ store, memoryBytes: 0 });
    const kept = await second.render(STAMP, 'PDF');
    assert.equal(second.stats.rendered, 0);
    assert.equal(second.stats.threads, 0, 'no thread was even started');
    assert.deepEqual(kept.body, drawn.body);
    assert.equal(kept.mediaType, 'application/pdf');
  });

  /** A print file of `count` pages of about 3.5 KB each, nobody reading it yet. */
  const unreadPrintFile = (r: Renderer, count: number) =>
    r.printFile({ labels: Array.from({ length: count }, (_, i) => ({ ...UPS_LABEL, labelId: `lbl_print_${i}` })), contents: 'labels', layout: 'label', start: 1, copies: 1, title: 'Print file', createdAt: '2026-01-02T03:04:05.000Z' });

  it('holds about a megabyte of a print file for a reader that has stopped reading, and writes the rest as it reads', { timeout: 180_000 }, async () => {
    const print = unreadPrintFile(renderer(), 600);
    await eventually(async () => print.readableLength >= PRINT_CREDIT_BYTES, 90_000, 'a megabyte of the print file');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const held = print.readableLength;
    assert.ok(held < PRINT_CREDIT_BYTES + 512 * 1024, `${held} bytes held`);
    const body = Buffer.concat(await print.toArray());
    assert.ok(body.length > held + 512 * 1024, `${body.length} bytes in all`);
    assert.equal(body.subarray(0, 5).toString(), '%PDF-');
    assert.match(body.subarray(-8).toString(), /%%EOF\s*$/);
  });

  it('counts each label of a PDF print file as one PDF drawn, as a ZPL print file does (shipping_render_duration_seconds)', { timeout: 120_000 }, async () => {
    const pdfs = async () => ((await renderDuration.get()).values.find((v) => v.metricName === 'shipping_render_duration_seconds_count' && v.labels.format === 'PDF')?.value ?? 0);
    const before = await pdfs();
    const body = Buffer.concat(await unreadPrintFile(renderer(), 20).toArray());
    assert.equal(body.subarray(0, 5).toString(), '%PDF-');
    assert.equal(await pdfs(), before + 20);
  });

  it('ends a print file whose reader takes nothing for printStallMs, and its thread lives on', { timeout: 180_000 }, async () => {
    const r = renderer({ printStallMs: 1000 });
    const print = unreadPrintFile(r, 600);
    const failed = await new Promise<Error>((resolve) => print.once('error', resolve));
    assert.match(failed.message, /took nothing of the print file for 1 s/);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(r.stats.printThreads, 1, 'the thread that was writing it is still there');
    const again = Buffer.concat(await unreadPrintFile(r, 2).toArray());
    assert.equal(again.subarray(0, 5).toString(), '%PDF-');
  });

  it('draws a document while a print file waits for a reader that has stopped reading', { timeout: 120_000 }, async () => {
    const r = renderer();
    const print = unreadPrintFile(r, 3000);
    const doc = await r.render(DHL, 'PNG');
    assert.deepEqual(doc.body, (await renderDocument(DHL, 'PNG')).body);
    assert.deepEqual([r.stats.threads, r.stats.printThreads], [1, 1], 'the print file has a thread of its own');
    print.destroy();
  });

  it('answers the document even when the store fails, and reports the failure', async () => {
    const failures: unknown[] = [];
    const r = renderer({ store: { get: async () => undefined, put: async () => Promise.reject(new Error('disk full')) }, onStoreError: (err) => failures.push(err) });
    const doc = await r.render(UPS, 'SVG');
    assert.ok(doc.body.length > 100);
    await r.close();
    assert.equal(failures.length, 1);
  });
});

describe('documentKey and etagOf', () => {
  it('differ for another format, resolution or input, and are stable for the same', () => {
    const key = documentKey(UPS, 'PDF', 203);
    assert.equal(documentKey(structuredClone(UPS), 'PDF', 203), key);
    for (const other of [documentKey(UPS, 'PNG', 203), documentKey(UPS, 'PDF', 300), documentKey(DHL, 'PDF', 203), documentKey({ layout: 'label', data: { ...UPS_LABEL, reference: 'x' } }, 'PDF', 203)]) {
      assert.notEqual(other, key);
    }
    assert.match(etagOf(key), /^"[A-Za-z0-9_-]{32}"$/);
  });

  it("change with the code the renderer draws from outside its folder: every such import is in the version's SHARED", () => {
    // Imports that change nothing drawn: caches, metrics, traces, and types (erased).
    const drawsNothing = new Set(['../cache.ts', '../metrics.ts', '../tracing.ts']);
    const root = new URL('../../src/render/', import.meta.url);
    const outside = new Set<string>();
    for (const entry of readdirSync(root, { recursive: true, encoding: 'utf8' })) {
      if (!entry.endsWith('.ts')) continue;
      for (const [, names, from] of readFileSync(new URL(entry, root), 'utf8').matchAll(/^import (type )?[^;]*? from '(\.[^']+)';/gm)) {
        if (names) continue;
        const target = new URL(from!, new URL(entry, root)).href;
        if (!target.startsWith(root.href)) outside.add(`../${target.slice(new URL('../../src/', import.meta.url).href.length)}`);
      }
    }
    assert.ok(outside.has('../countries.ts'), [...outside].join(', '));
    assert.deepEqual([...outside].filter((f) => !drawsNothing.has(f) && !SHARED.includes(f)), [], 'imported from outside src/render but not in SHARED');
  });

  it('change with the renderer: any change to the render code gives a new version', () => {
    const dir = mkdtempSync(join(tmpdir(), 'renderer-version-'));
    try {
      cpSync(new URL('../../src/render/', import.meta.url), dir, { recursive: true });
      const copy = pathToFileURL(`${dir}/`);
      assert.equal(rendererVersion(copy), RENDERER_VERSION, 'the same code, the same version');
      const file = join(dir, 'layouts', 'label.ts');
      writeFileSync(file, `${readFileSync(file, 'utf8')}\n// a change\n`);
      assert.notEqual(rendererVersion(copy), RENDERER_VERSION);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

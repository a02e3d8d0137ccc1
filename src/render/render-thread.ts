// A thread of the Renderer's pools (piscina): on the render pool it lays a document out, renders it
// and hands the bytes back; on the print pool it writes a print file's PDF through a message port as
// it goes, as fast as the reader takes it, or counts a print file's pages (src/render/renderer.ts).
import type { MessagePort } from 'node:worker_threads';
import { move, workerData } from 'piscina';
import { setCachesEnabled } from '../cache.ts';
import { renderDocument, type DocumentSource, type LabelData, type LabelFormat } from './index.ts';
import { customsPages } from './layouts/customs.ts';
import { printPages, type PrintContents, type PrintLayout } from './layouts/sheet.ts';
import type { Drawing } from './model.ts';
import { RENDER_TIME_BYTES } from './model.ts';
import { pagesToPdf } from './pdf.ts';

setCachesEnabled((workerData as { caches?: boolean } | undefined)?.caches ?? true);

export interface RenderTask {
  source: DocumentSource;
  format: LabelFormat;
  dpi: 203 | 300;
}

/** What a print file is drawn from: its labels in order, and how they are printed. */
export interface PrintJob {
  labels: LabelData[];
  contents: PrintContents;
  /** For `labels`: how they sit on the pages, and the first one's position. */
  layout: PrintLayout;
  start: number;
  /** For `customs`: each parcel's papers this many times. */
  copies: number;
  title: string;
  createdAt: string;
}

/** A print file's PDF, written to `port` in chunks while the reader keeps up (see Renderer.printFile). */
export interface PrintTask {
  print: PrintJob;
  port: MessagePort;
}

/** How many pages these labels' customs papers take, one set each: laid out (not drawn) here, off the event loop. */
export interface CountTask {
  customsPagesOf: LabelData[];
}

/** A print file's pages, one at a time. */
function pagesOf(print: PrintJob): Generator<Drawing> {
  return print.contents === 'customs' ? customsPages(print.labels, print.copies) : printPages(print.labels, print.layout, print.start);
}

/** Bytes a print file may have on its way to the reader before its thread waits. */
export const PRINT_CREDIT_BYTES = 1 << 20;

/** A chunk of the file, or its end with the seconds spent drawing it (waits for the reader left out). */
export type PortMessage = { chunk: Uint8Array } | { done: true; seconds: number };
export type ReaderMessage = { credit: number } | { cancel: true };

export default async function render(task: RenderTask | PrintTask | CountTask): Promise<Uint8Array | number | null> {
  if ('print' in task) {
    await printFile(task);
    return null;
  }
  if ('customsPagesOf' in task) {
    let pages = 0;
    for (const _ of customsPages(task.customsPagesOf)) pages++;
    return pages;
  }
  const started = performance.now();
  const { body } = await renderDocument(task.source, task.format, { dpi: task.dpi });
  // Copied into memory of its own first: a Buffer may be a view into Node's shared pool or memory
  // that native code (sharp) allocated, neither of which can be transferred. The last 8 bytes carry
  // the seconds the thread took (a float64), measured here, where the rendering runs: one buffer
  // moves to the caller without a copy, an object around it would be cloned.
  const out = new Uint8Array(body.byteLength + RENDER_TIME_BYTES);
  out.set(body);
  new DataView(out.buffer).setFloat64(body.byteLength, (performance.now() - started) / 1000, true);
  return move(out) as Uint8Array;
}

async function printFile({ print, port }: PrintTask): Promise<void> {
  let credit = PRINT_CREDIT_BYTES;
  let cancelled = false;
  // pdfkit hands out a page in several chunks at once, so several writes may be waiting: all wake.
  let waiting: (() => void)[] = [];
  port.on('message', (m: ReaderMessage) => {
    if ('cancel' in m) cancelled = true;
    else credit += m.credit;
    const woken = waiting;
    waiting = [];
    for (const wake of woken) wake();
  });
  const started = performance.now();
  let waited = 0;
  try {
    await pagesToPdf(pagesOf(print), { title: print.title, createdAt: print.createdAt }, async (chunk) => {
      if (cancelled) throw new Error('the reader went away');
      const copy = new Uint8Array(chunk);
      // Counted before the transfer, which leaves `copy` empty here.
      credit -= copy.byteLength;
      port.postMessage({ chunk: copy } satisfies PortMessage, [copy.buffer]);
      const before = performance.now();
      while (credit <= 0 && !cancelled) await new Promise<void>((resolve) => waiting.push(resolve));
      waited += performance.now() - before;
    });
    port.postMessage({ done: true, seconds: (performance.now() - started - waited) / 1000 } satisfies PortMessage);
  } finally {
    port.close();
  }
}

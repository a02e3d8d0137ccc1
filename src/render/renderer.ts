// The service's renderer: documents are drawn on a pool of worker threads (piscina), never on the
// event loop that answers requests, and a document once drawn is kept. Rendering is deterministic,
// so a document is named by what it is drawn from (its key); the key holds the renderer's version,
// so a new renderer never serves an old drawing. Kept twice: the most used in memory, and every one
// in a DocumentStore that all processes on one database share. Print files are written on threads
// of their own, so one streamed to a slow reader never holds up another download.
import { createHash } from 'node:crypto';
import { Piscina } from 'piscina';
import { cachesEnabled, createCache, type Cache } from '../cache.ts';
import { effectiveDpi, extensionOf, mediaTypeOf, LABEL_FORMATS, type DocumentSource, type LabelData, type LabelFormat, type RenderedDocument } from './index.ts';
import { MessageChannel } from 'node:worker_threads';
import { Readable } from 'node:stream';
import type { CountTask, PortMessage, PrintJob, PrintTask, ReaderMessage, RenderTask } from './render-thread.ts';
import { RENDER_TIME_BYTES } from './model.ts';
import { renderDuration } from '../metrics.ts';
import { inSpan } from '../tracing.ts';
import { RENDERER_VERSION } from './version.ts';

/** Where rendered documents are kept beyond this process's memory (src/documents/service.ts). */
export interface DocumentStore {
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, body: Uint8Array): Promise<void>;
}

export interface RendererOptions {
  /** Render threads. */
  threads: number;
  /** Bytes of documents kept in memory; 0 keeps none. */
  memoryBytes: number;
  store?: DocumentStore;
  /** Told about a document that could not be stored (the download itself has succeeded). */
  onStoreError?: (err: unknown) => void;
  /** A print file whose reader takes nothing for this long is ended, freeing its thread (default 60 s). */
  printStallMs?: number;
}

const PRINT_STALL_MS = 60_000;

export interface Document extends RenderedDocument {
  /** Names the document: a strong ETag is made from it. */
  key: string;
}

/** The key of the document `source` gives in `format` at `dpi`, under this renderer's version. */
export function documentKey(source: DocumentSource, format: LabelFormat, dpi: 203 | 300): string {
  return createHash('sha256').update(`${RENDERER_VERSION}\n${source.layout}\n${format}\n${dpi}\n${JSON.stringify(source.data)}`).digest('base64url');
}

export class Renderer {
  readonly #options: RendererOptions;
  #pool: Piscina<RenderTask, Uint8Array> | undefined;
  /** Print files' threads: one waits while its reader is behind, and must not hold up a document. */
  #printPool: Piscina<PrintTask | CountTask, null | number> | undefined;
  readonly #memory: Cache<string, Uint8Array> | undefined;
  /** Documents being drawn or fetched now: a second request for one waits for the first. */
  readonly #inFlight = new Map<string, Promise<Uint8Array>>();
  readonly #storing = new Set<Promise<void>>();
  #rendered = 0;

  constructor(options: RendererOptions) {
    if (!(options.threads >= 1)) throw new Error('a renderer needs at least one thread');
    this.#options = options;
    this.#memory = options.memoryBytes > 0 ? createCache({ max: 100_000, maxSize: options.memoryBytes, sizeOf: (body) => Math.max(1, body.byteLength) }) : undefined;
  }

  /** The document, kept or newly drawn on a render thread. */
  async render(source: DocumentSource, format: LabelFormat, dpi: 203 | 300 = 203): Promise<Document> {
    return this.prepare(source, format, dpi).render();
  }

  /**
   * A document's strong ETag, known before it is drawn, and the document itself on demand: what a
   * download needs to answer `If-None-Match` with 304 without drawing (src/http/downloads.ts).
   */
  prepare(source: DocumentSource, format: LabelFormat, dpi: 203 | 300 = 203): { etag: string; render(): Promise<Document> } {
    if (!(LABEL_FORMATS as readonly string[]).includes(format)) throw new Error(`unknown format ${format}`);
    // A vector format's document is the same at 300 dpi: one key, one ETag, drawn and kept once.
    const resolution = effectiveDpi(format, dpi);
    const key = documentKey(source, format, resolution);
    return { etag: etagOf(key), render: () => this.#render(key, source, format, resolution) };
  }

  async #render(key: string, source: DocumentSource, format: LabelFormat, dpi: 203 | 300): Promise<Document> {
    let body = this.#memory?.get(key);
    if (!body) {
      let pending = this.#inFlight.get(key);
      if (!pending) {
        pending = inSpan(`render ${format}`, { 'shipping.document.layout': source.layout, 'shipping.document.format': format }, () => this.#fetchOrDraw(key, { source, format, dpi }));
        this.#inFlight.set(key, pending);
        pending.finally(() => this.#inFlight.delete(key)).catch(() => {});
      }
      body = await pending;
    }
    return { key, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength), mediaType: mediaTypeOf(format), extension: extensionOf(format) };
  }

  async #fetchOrDraw(key: string, task: RenderTask): Promise<Uint8Array> {
    const store = this.#options.store;
    let body = store ? await store.get(key) : undefined;
    if (!body) {
      body = await this.#draw(task);
      if (store) this.#keep(store.put(key, body));
    }
    this.#memory?.set(key, body);
    return body;
  }

  #draw(task: RenderTask): Promise<Uint8Array> {
    this.#pool ??= this.#newPool(this.#options.threads);
    return this.#pool.run(task).then((result) => {
      this.#rendered++;
      const end = result.byteLength - RENDER_TIME_BYTES;
      renderDuration.observe({ format: task.format }, new DataView(result.buffer, result.byteOffset).getFloat64(end, true));
      return result.subarray(0, end);
    });
  }

  /**
   * A print file's PDF, drawn on a print thread and handed out as it is written: the thread waits
   * while more than a megabyte is on its way to a slow reader, so neither side holds the document.
   * Print threads are a pool of their own (as many as render threads, started when needed), so a
   * reader that stops reading holds up only other print files, never a label's download, and only
   * for `printStallMs`: a reader that takes nothing for that long loses the file (the stream errors).
   */
  printFile(print: PrintJob): Readable {
    const { port1, port2 } = new MessageChannel();
    let owed = 0;
    let finished = false;
    // Runs while the thread waits for a reader that takes nothing: such a reader holds a print thread.
    let stall: NodeJS.Timeout | undefined;
    const stallMs = this.#options.printStallMs ?? PRINT_STALL_MS;
    const watchForStall = () => {
      const held = out.readableLength;
      stall = setTimeout(() => {
        // A slow reader that took some of what is held is still reading.
        if (out.readableLength < held) watchForStall();
        else out.destroy(new Error(`the reader took nothing of the print file for ${stallMs / 1000} s`));
      }, stallMs).unref();
    };
    const out = new Readable({
      read() {
        clearTimeout(stall);
        stall = undefined;
        if (owed > 0) {
          port1.postMessage({ credit: owed } satisfies ReaderMessage);
          owed = 0;
        }
      },
      destroy(err, callback) {
        clearTimeout(stall);
        if (!finished) port1.postMessage({ cancel: true } satisfies ReaderMessage);
        port1.close();
        callback(err);
      },
    });
    port1.on('message', (m: PortMessage) => {
      if ('done' in m) {
        finished = true;
        // Each label counted as one document drawn, as a ZPL print file's are, at the mean time a
        // label took: the histogram (and its alert) stays a measure of one document's drawing.
        const labels = Math.max(1, print.labels.length);
        for (let i = 0; i < labels; i++) renderDuration.observe({ format: 'PDF' }, m.seconds / labels);
        clearTimeout(stall); // the thread is free: what is left waits for the reader as long as it likes
        out.push(null);
        port1.close();
        return;
      }
      const chunk = Buffer.from(m.chunk.buffer, m.chunk.byteOffset, m.chunk.byteLength);
      if (out.push(chunk)) port1.postMessage({ credit: chunk.byteLength } satisfies ReaderMessage);
      else {
        owed += chunk.byteLength;
        if (!stall) watchForStall();
      }
    });
    this.#printPool ??= this.#newPool<PrintTask | CountTask, null | number>(0);
    this.#printPool
      .run({ print, port: port2 }, { transferList: [port2] })
      .then(() => {
        this.#rendered++;
      })
      .catch((err: unknown) => {
        finished = true;
        out.destroy(err as Error);
      });
    return out;
  }

  /**
   * How many pages the labels' customs papers take, one set each (they run as long as their items),
   * laid out on a print thread: a thousand parcels' papers take seconds, which must not hold up a
   * label's download.
   */
  async customsPageCount(labels: LabelData[]): Promise<number> {
    this.#printPool ??= this.#newPool<PrintTask | CountTask, null | number>(0);
    return (await this.#printPool.run({ customsPagesOf: labels })) as number;
  }

  /** Made at the first use: a process that never renders starts no thread. */
  #newPool<Task, Result>(minThreads: number): Piscina<Task, Result> {
    return new Piscina<Task, Result>({
      filename: new URL('./render-thread.ts', import.meta.url).href,
      minThreads,
      maxThreads: this.#options.threads,
      idleTimeout: 60_000,
      resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 },
      // The threads' own caches (barcode encodings, glyphs) follow this thread's CACHES setting.
      workerData: { caches: cachesEnabled() },
    });
  }

  /** Stored after the answer has gone: a failure costs a later render, never a download. */
  #keep(storing: Promise<void>): void {
    const tracked = storing.catch((err: unknown) => this.#options.onStoreError?.(err)).finally(() => this.#storing.delete(tracked));
    this.#storing.add(tracked);
  }

  /** Documents and print files drawn so far, the threads running now, and the documents kept in memory with their bytes. */
  get stats(): { rendered: number; threads: number; printThreads: number; memoryDocuments: number; memoryBytes: number } {
    return {
      rendered: this.#rendered,
      threads: this.#pool?.threads.length ?? 0,
      printThreads: this.#printPool?.threads.length ?? 0,
      memoryDocuments: this.#memory?.size ?? 0,
      memoryBytes: this.#memory?.calculatedSize ?? 0,
    };
  }

  /** Waits for documents being stored, then stops the render and print threads. */
  async close(): Promise<void> {
    await Promise.all(this.#storing);
    const pools = [this.#pool, this.#printPool];
    this.#pool = undefined;
    this.#printPool = undefined;
    await Promise.all(pools.map((pool) => pool?.destroy()));
  }
}

/** The strong ETag of a document: its key, which changes with anything that changes its bytes. */
export function etagOf(key: string): string {
  return `"${key.slice(0, 32)}"`;
}

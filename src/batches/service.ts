// Batches (§11): many labels asked for at once. Every item is checked up front (400 naming its
// index, nothing created); the worker then does the items in order, one transaction each, that
// transaction also moving the batch past the item: a crash at any moment redoes at most the item
// whose transaction did not commit, so no item is ever done twice. Print files put labels in order
// into one PDF or ZPL document behind a signed link.
import { labelsCreated } from '../metrics.ts';
import { Readable } from 'node:stream';
import type { AppContext } from '../context.ts';
import { isUniqueViolation, type Tx } from '../db/index.ts';
import { recordDomainEvent } from '../db/events.ts';
import { firstIdAt, isoNow, uuidv7 } from '../db/ids.ts';
import type { Page } from '../db/page.ts';
import { AppError, Gone, InvalidInput, NotFound, type FieldProblem } from '../errors.ts';
import type { Download } from '../http/downloads.ts';
import { cacheableUntil, linkDeadline, signedLink, verifiedLinkExpiry } from '../http/signed-links.ts';
import { DOWNLOAD_VALIDITY_MS, insertLabelFor, labelsForPrint } from '../labels/service.ts';
import type { LabelData, LabelFormat, LabelSize } from '../render/index.ts';
import { documentsFor } from '../render/layouts/customs.ts';
import { pageCount, positionsOf, type PrintContents, type PrintLayout } from '../render/layouts/sheet.ts';
import type { PrintJob } from '../render/render-thread.ts';
import { checkShipment, getShipment, insertShipment, type NewShipment } from '../shipments/service.ts';
import * as store from './store.ts';

export const MAX_BATCH_ITEMS = 1000;
/** The longest name of a batch. */
export const BATCH_NAME_MAX = 200;
/** Items one run of the worker job does before it lets the other jobs have a turn. */
const ITEMS_PER_RUN = 25;
/** Batches a run looks at, in turn, when workers hold the first ones. */
const CANDIDATE_BATCHES = 8;

export type BatchItemRequest = { shipmentId: string } | { shipment: NewShipment };

export interface NewBatch {
  items: BatchItemRequest[];
  format?: LabelFormat;
  size?: LabelSize;
  name?: string;
}

export interface Batch {
  id: string;
  name: string | null;
  status: 'processing' | 'completed';
  format: LabelFormat;
  size: LabelSize;
  counts: { total: number; succeeded: number; failed: number };
  createdAt: string;
  completedAt: string | null;
}

export interface BatchItem {
  index: number;
  shipmentId: string | null;
  labelId: string | null;
  trackingNumber: string | null;
  error: { code: string; message: string } | null;
}

function toBatch(row: store.BatchRow): Batch {
  return {
    id: row.id,
    name: row.name,
    status: row.status as Batch['status'],
    format: row.format as LabelFormat,
    size: row.size as LabelSize,
    counts: { total: Number(row.total), succeeded: Number(row.succeeded), failed: Number(row.failed) },
    createdAt: row.created_at,
    completedAt: row.completed_at,
  };
}

function toItem(row: store.BatchItemRow): BatchItem {
  return {
    index: Number(row.idx),
    shipmentId: row.shipment_id,
    labelId: row.label_id,
    trackingNumber: row.tracking_number,
    error: row.error === null ? null : (JSON.parse(row.error) as BatchItem['error']),
  };
}

/** `POST /v1/batches`: every item checked (400 naming each bad index, nothing created), then stored for the worker. */
export async function createBatch(ctx: AppContext, accountId: string, input: NewBatch): Promise<Batch> {
  const problems: FieldProblem[] = [];
  input.items.forEach((item, i) => {
    if (!('shipment' in item)) return;
    try {
      checkShipment(item.shipment, `items[${i}].shipment.`);
    } catch (err) {
      if (!(err instanceof InvalidInput)) throw err;
      problems.push(...(err.details ?? [{ field: `items[${i}].shipment`, message: err.message }]));
    }
  });
  if (problems.length) throw new InvalidInput(`${problems[0]!.field}: ${problems[0]!.message}`, problems);
  const now = isoNow();
  const row: store.BatchRow = {
    id: uuidv7(),
    account_id: accountId,
    status: 'processing',
    format: input.format ?? 'PDF',
    size: input.size ?? '4x6',
    total: input.items.length,
    succeeded: 0,
    failed: 0,
    next_index: 0,
    created_at: now,
    completed_at: null,
    name: input.name?.trim() || null,
  };
  const items = input.items.map((item, idx) => ({
    batch_id: row.id,
    idx,
    request: JSON.stringify(item),
    shipment_id: 'shipmentId' in item ? item.shipmentId : null,
    label_id: null,
    tracking_number: null,
    error: null,
  }));
  await ctx.db.transaction().execute((tx) => store.insertBatch(tx, row, items));
  return toBatch(row);
}

export async function getBatch(ctx: AppContext, accountId: string, id: string): Promise<Batch & { items: BatchItem[] }> {
  const row = await store.findBatch(ctx.db, accountId, id);
  if (!row) throw new NotFound('batch', id);
  return { ...toBatch(row), items: (await store.batchItems(ctx.db, row.id)).map(toItem) };
}

/**
 * The account's newest batch of this name made in the last `withinMs` that made a label or is still
 * making them (the dashboard asks before a file is uploaded twice; one whose items all failed is
 * uploaded again corrected).
 */
export async function recentBatchNamed(ctx: AppContext, accountId: string, name: string, withinMs: number): Promise<Batch | undefined> {
  const row = await store.findBatchNamed(ctx.db, accountId, name, firstIdAt(Date.now() - withinMs));
  return row ? toBatch(row) : undefined;
}

export async function listBatches(ctx: AppContext, accountId: string, page: Page): Promise<Batch[]> {
  return (await store.listBatches(ctx.db, accountId, page)).map(toBatch);
}

// ---- the worker ----

/** The batch each worker (by its context) served last: the processing batches take turns after it. */
const servedLast = new WeakMap<AppContext, string>();

/**
 * Worker job: up to ITEMS_PER_RUN items of the next processing batch in turn (in the order they
 * were posted, after the one this worker served last), or of the one after it when another worker
 * holds it. So a small batch posted beside large ones waits at most one run per batch ahead of it.
 */
export async function processBatches(ctx: AppContext): Promise<number> {
  for (const next of await store.processingBatches(ctx.db, servedLast.get(ctx) ?? null, CANDIDATE_BATCHES)) {
    servedLast.set(ctx, next.id);
    let done = 0;
    let raced = false;
    while (done < ITEMS_PER_RUN) {
      let item: Awaited<ReturnType<typeof doNextItem>>;
      try {
        item = await ctx.db.transaction().execute((tx) => doNextItem(ctx, tx, next.id));
      } catch (err) {
        // A label made for the item's shipment at the same moment (POST /v1/labels): the unique index
        // rolled the item back. Done again at once, it finds that label and fails alone (CONFLICT).
        if (!isUniqueViolation(err) || raced) throw err;
        raced = true;
        continue;
      }
      raced = false;
      if (!item) break;
      // Counted once the item's transaction has committed.
      if (item.label) labelsCreated.inc(item.label);
      done++;
    }
    if (done > 0) return done;
  }
  return 0;
}

/** Does the batch's next item and moves the batch past it, in the caller's transaction; null when nothing was left or another worker holds the batch. */
async function doNextItem(ctx: AppContext, tx: Tx, batchId: string): Promise<{ label: { carrier: string; format: string } | null } | null> {
  const batch = await store.lockBatch(tx, ctx.storage.dialect, batchId);
  if (batch?.status !== 'processing') return null;
  const idx = Number(batch.next_index);
  const item = await store.findItem(tx, batch.id, idx);
  if (!item) throw new Error(`batch ${batch.id} has no item ${idx}`);
  const outcome = await doItem(ctx, tx, batch, JSON.parse(item.request) as BatchItemRequest);
  await store.finishItem(tx, batch.id, idx, { shipment_id: outcome.shipment_id, label_id: outcome.label_id, tracking_number: outcome.tracking_number, error: outcome.error });
  const completed = idx + 1 >= Number(batch.total);
  const now = isoNow();
  const updated: store.BatchRow = {
    ...batch,
    next_index: idx + 1,
    succeeded: Number(batch.succeeded) + (outcome.error ? 0 : 1),
    failed: Number(batch.failed) + (outcome.error ? 1 : 0),
    status: completed ? 'completed' : 'processing',
    completed_at: completed ? now : null,
  };
  await store.advanceBatch(tx, batch.id, updated);
  if (completed) await recordDomainEvent(tx, { accountId: batch.account_id, type: 'batch.completed', subjectId: batch.id, data: toBatch(updated), at: now });
  return { label: outcome.carrier ? { carrier: outcome.carrier, format: batch.format } : null };
}

/**
 * One item: its shipment (found, or created from the item) and a label. A refusal of its own (404,
 * 409, 400) is the item's error; anything else (the database) rolls the item back to be done again.
 */
async function doItem(ctx: AppContext, tx: Tx, batch: store.BatchRow, request: BatchItemRequest): Promise<Pick<store.BatchItemRow, 'shipment_id' | 'label_id' | 'tracking_number' | 'error'> & { carrier?: string }> {
  let shipmentId = 'shipmentId' in request ? request.shipmentId : null;
  try {
    const shipment = 'shipmentId' in request ? await getShipment(tx, batch.account_id, request.shipmentId) : await insertShipment(tx, batch.account_id, request.shipment);
    shipmentId = shipment.id;
    const label = await insertLabelFor(ctx, tx, batch.account_id, shipment, { format: batch.format as LabelFormat, size: batch.size as LabelSize });
    return { shipment_id: shipment.id, label_id: label.id, tracking_number: label.tracking_number, error: null, carrier: label.carrier };
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    return { shipment_id: shipmentId, label_id: null, tracking_number: null, error: JSON.stringify({ code: err.code, message: err.message }) };
  }
}

// ---- print files ----

export type PrintFileFormat = 'PDF' | 'ZPL';

/** Each parcel's customs papers at most this many times in one print file. */
export const MAX_COPIES = 5;

export interface NewPrintFile {
  batchId?: string;
  labelIds?: string[];
  contents?: PrintContents;
  format?: PrintFileFormat;
  layout?: PrintLayout;
  start?: number;
  copies?: number;
}

export interface PrintFile {
  id: string;
  contents: PrintContents;
  format: PrintFileFormat;
  layout: PrintLayout;
  /** The labels printed, or whose customs papers are. */
  labelCount: number;
  /** Pages of the PDF (ZPL: one label format per label). */
  pageCount: number;
  copies: number;
  url: string;
  expiresAt: string;
}

function toPrintFile(ctx: AppContext, row: store.PrintFileRow, pageCount: number): PrintFile {
  return {
    id: row.id,
    contents: row.contents as PrintContents,
    format: row.format as PrintFileFormat,
    layout: row.layout as PrintLayout,
    labelCount: (JSON.parse(row.label_ids) as string[]).length,
    pageCount,
    copies: Number(row.copies),
    url: signedLink(ctx.urlKey, ctx.config.baseUrl, 'print-files', row.id, row.format, row.expires_at),
    expiresAt: row.expires_at,
  };
}

/** What a print file's fields do not allow together, naming the field; undefined when they go together. */
function printFileRefusal(contents: PrintContents, format: PrintFileFormat, layout: PrintLayout, start: number, copies: number): InvalidInput | undefined {
  if (contents === 'customs') {
    if (format !== 'PDF') return new InvalidInput('customs papers are A4 documents: format must be PDF', [{ field: 'format', message: 'must be PDF for customs papers' }]);
    if (layout !== 'label') return new InvalidInput('customs papers print each document on A4 pages of its own: layout must be label', [{ field: 'layout', message: 'must be label for customs papers' }]);
  } else if (copies !== 1) {
    return new InvalidInput('copies are for customs papers: a label printed twice is two labels for one parcel', [{ field: 'copies', message: 'must be 1 for labels' }]);
  }
  if (format === 'ZPL' && layout !== 'label') return new InvalidInput('a ZPL print file has one label per label format: layout must be label', [{ field: 'layout', message: 'must be label for ZPL' }]);
  const positions = positionsOf(layout);
  if (start > positions) {
    const range = positions === 1 ? `1 for layout ${layout}, which has one label a page` : `1 to ${positions} for layout ${layout}`;
    return new InvalidInput(`start must be ${range}`, [{ field: 'start', message: positions === 1 ? 'must be 1' : `must be at most ${positions}` }]);
  }
  return undefined;
}

/**
 * `POST /v1/print-files`: the labels of a batch (its succeeded ones still active) or of a list, in
 * order; or the customs papers of those among them that have any.
 */
export async function createPrintFile(ctx: AppContext, accountId: string, input: NewPrintFile): Promise<PrintFile> {
  const contents = input.contents ?? 'labels';
  const format = input.format ?? 'PDF';
  const layout = input.layout ?? 'label';
  const start = input.start ?? 1;
  const copies = input.copies ?? 1;
  if ((input.batchId === undefined) === (input.labelIds === undefined)) {
    throw new InvalidInput('send either batchId or labelIds', [{ field: input.batchId === undefined ? 'batchId' : 'labelIds', message: 'exactly one of batchId and labelIds is required' }]);
  }
  const refusal = printFileRefusal(contents, format, layout, start, copies);
  if (refusal) throw refusal;
  let ids: string[];
  let rows: Map<string, { status: string; label_data: string }>;
  if (input.batchId !== undefined) {
    const batch = await getBatch(ctx, accountId, input.batchId);
    // A batch's print file is the whole batch: made while labels are still being made, it would hold
    // some of them, and nothing in the answer would tell a printer so.
    if (batch.status === 'processing') {
      const done = batch.counts.succeeded + batch.counts.failed;
      throw new AppError(409, 'CONFLICT', `batch ${batch.id} is still processing (${done} of ${batch.counts.total} items done): its print file can be made once it is completed; the labels made so far can be printed by their labelIds`, {
        details: [{ field: 'batchId', message: 'is still processing' }],
      });
    }
    const succeeded = batch.items.flatMap((i) => (i.labelId ? [i.labelId] : []));
    rows = new Map((await labelsForPrint(ctx.db, accountId, succeeded)).map((r) => [r.id, r]));
    ids = succeeded.filter((id) => rows.get(id)?.status === 'active');
    if (ids.length === 0) throw new AppError(422, 'NOTHING_TO_PRINT', `batch ${batch.id} has no active label to print`);
  } else {
    ids = input.labelIds!;
    rows = new Map((await labelsForPrint(ctx.db, accountId, ids)).map((r) => [r.id, r]));
    const missing = ids.find((id) => !rows.has(id));
    if (missing) throw new NotFound('label', missing);
    const invalidated = ids.filter((id) => rows.get(id)!.status !== 'active');
    if (invalidated.length) throw new AppError(409, 'CONFLICT', `${invalidated.length === 1 ? `label ${invalidated[0]} is` : `labels ${invalidated.join(', ')} are`} invalidated and cannot be printed`);
  }
  let pages: number;
  if (contents === 'customs') {
    // Only labels whose shipments carry customs have papers (§12): the others are left out, as a mixed day's batch has them.
    // (A snapshot without a declaration is not parsed: it may carry the account's logo, far larger than the rest.)
    const labels = ids.flatMap((id) => {
      const json = rows.get(id)!.label_data;
      const data = json.includes('"customsForm"') ? (JSON.parse(json) as LabelData) : undefined;
      return data && documentsFor(data).length > 0 ? [[id, data] as const] : [];
    });
    if (labels.length === 0) throw new AppError(422, 'NOTHING_TO_PRINT', `${ids.length === 1 ? 'the label has no' : `none of the ${ids.length} labels has`} customs papers (a label has them when its shipment carries customs): there is nothing to print`);
    ids = labels.map(([id]) => id);
    // Every copy of a parcel's set has as many pages: the papers are laid out once.
    pages = (await ctx.renderer.customsPageCount(labels.map(([, d]) => d))) * copies;
  } else {
    pages = format === 'ZPL' ? ids.length : pageCount(layout, ids.length, start);
  }
  const now = Date.now();
  const row: store.PrintFileRow = {
    id: uuidv7(now),
    account_id: accountId,
    format,
    layout,
    start,
    contents,
    copies,
    batch_id: input.batchId ?? null,
    label_ids: JSON.stringify(ids),
    created_at: isoNow(now),
    expires_at: isoNow(now + DOWNLOAD_VALIDITY_MS),
  };
  // A transaction, even for one statement, so that an Idempotency-Key marks this work done with it (src/db/commit-statement.ts).
  await ctx.db.transaction().execute((tx) => store.insertPrintFile(tx, row));
  return toPrintFile(ctx, row, pages);
}

/** What a print thread draws for the print file `row`, from its labels' snapshots. */
function printJob(row: store.PrintFileRow, labels: LabelData[]): PrintJob {
  const contents = row.contents as PrintContents;
  return {
    labels,
    contents,
    layout: row.layout as PrintLayout,
    start: Number(row.start),
    copies: Number(row.copies),
    title: `${contents === 'customs' ? 'Customs papers' : 'Print file'} ${row.id}`,
    createdAt: row.created_at,
  };
}

/** Checks a print file's signed link (403 tampered, 410 expired or a label invalidated since) and prepares its stream. */
export async function openPrintFileDownload(ctx: AppContext, req: { id: string; format: string; expires: string; sig: string }): Promise<Download> {
  const expires = verifiedLinkExpiry(ctx.urlKey, 'print-files', req);
  const row = await store.findPrintFileForDownload(ctx.db, req.id);
  if (!row) throw new NotFound('print file', req.id);
  const now = Date.now();
  const until = linkDeadline(expires, row.expires_at);
  if (now >= until) throw new Gone(`the download link of print file ${row.id} expired at ${row.expires_at}`);
  const ids = JSON.parse(row.label_ids) as string[];
  const labels = new Map((await labelsForPrint(ctx.db, row.account_id, ids)).map((r) => [r.id, r]));
  const invalidated = ids.filter((id) => labels.get(id)?.status !== 'active');
  if (invalidated.length) throw new Gone(`print file ${row.id} holds labels invalidated since it was made (${invalidated.slice(0, 5).join(', ')}); make a new one`);
  const data = ids.map((id) => JSON.parse(labels.get(id)!.label_data) as LabelData);
  const format = row.format as PrintFileFormat;
  return {
    etag: `"${row.id}"`,
    cacheControl: cacheableUntil(until, now),
    filename: `${row.contents === 'customs' ? 'customs-papers' : 'print-file'}-${row.id}`,
    render: async () => ({
      body: format === 'PDF'
        ? ctx.renderer.printFile(printJob(row, data))
        : zplStream(ctx, data),
      mediaType: format === 'PDF' ? 'application/pdf' : 'application/zpl',
      extension: format === 'PDF' ? 'pdf' : 'zpl',
    }),
  };
}

/** The labels' ZPL one after another, each drawn (or found) by the renderer while the previous ones go out. */
function zplStream(ctx: AppContext, labels: LabelData[]): Readable {
  const ahead = 4;
  async function* documents(): AsyncGenerator<Buffer> {
    const render = (d: LabelData) => {
      const p = ctx.renderer.render({ layout: 'label', data: d }, 'ZPL');
      p.catch(() => {}); // awaited in turn below; a failure must not go unhandled before then
      return p;
    };
    const queue = labels.slice(0, ahead).map(render);
    for (let i = 0; i < labels.length; i++) {
      const next = labels[i + ahead];
      if (next) queue.push(render(next));
      yield (await queue.shift()!).body;
    }
  }
  return Readable.from(documents(), { objectMode: false });
}

// The dashboard's batches (§11, §15): a CSV file of shipments uploaded as one batch (the file's format
// is csv.ts), its progress while the worker labels it, and print files of its labels and of their
// customs papers. Every row is checked before anything is created, and every problem is listed by
// row and column.
import { createHash } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BATCH_NAME_MAX, createBatch, createPrintFile, getBatch, listBatches, MAX_BATCH_ITEMS, MAX_COPIES, recentBatchNamed, type Batch, type BatchItem, type PrintFileFormat } from '../batches/service.ts';
import { UUID_PATTERN } from '../db/ids.ts';
import { AppError, Conflict, InvalidInput, NotFound, type FieldProblem } from '../errors.ts';
import { LABEL_FORMATS, LABEL_SIZES, type LabelFormat, type LabelSize } from '../render/index.ts';
import { PRINT_LAYOUTS, positionsOf, type PrintLayout } from '../render/layouts/sheet.ts';
import { csrfField, errorSummary, field, fieldErrors, formKeyField, formKeyOf, Html, html, olderLink, table, time, words } from './html.ts';
import { onceForForm, type FormSending } from '../http/idempotency.ts';
import { accountShipmentsByIds } from '../shipments/service.ts';
import { customsDocumentsOf, type LabelDocument } from '../labels/service.ts';
import { pageOf } from '../http/pagination.ts';
import { fieldsSentBefore, MAX_UPLOAD_BYTES, PAGE, sentAgain, UPLOAD, type Dashboard } from './routes.ts';
import { batchProblems, CSV_COLUMNS, exampleCsv, MAX_CSV_ITEMS, parseShipmentsCsv, problemText, type CsvProblem } from './csv.ts';

// ---- the pages ----

const PER_PAGE = 25;
const PRINT_FORMATS: readonly PrintFileFormat[] = ['PDF', 'ZPL'];
const LAYOUT_NAMES: Record<PrintLayout, string> = {
  label: 'One label per page, at the label’s size (label)',
  'letter-2up': 'Two 4x6 labels per US Letter sheet (letter-2up)',
  'a4-4up': 'Four A6 labels per A4 sheet (a4-4up)',
};
const SHOWN_PROBLEMS = 200;

function batchId(id: string): string {
  if (!new RegExp(UUID_PATTERN).test(id)) throw new NotFound('batch', id);
  return id;
}

function progressText(b: Batch): string {
  const done = b.counts.succeeded + b.counts.failed;
  return `${done} of ${b.counts.total} done, ${b.counts.failed} failed`;
}


/**
 * An uploaded file's own name: without a folder (which old browsers sent), control characters, or
 * invisible formatting ones (a right-to-left override would show `csv.exe` as `exe.csv`).
 */
export function fileName(sent: string): string {
  return (sent.split(/[\\/]/).at(-1) ?? '').replace(/[\p{Cc}\p{Cf}]/gu, '');
}
export function batchPages(app: FastifyInstance, d: Dashboard): void {
  const { ctx, base } = d;

  const columnsTable = () =>
    table(
      'Columns of the CSV file',
      ['Column', 'API field', 'Required', 'Takes'],
      CSV_COLUMNS.map((c) => [
        html`<code>${c.name}</code>`,
        html`<code>${c.path}</code>`,
        new Html(c.required === 'yes' ? 'yes' : c.required === 'abroad' ? 'when the parcel crosses a customs border' : 'no'),
        html`${c.kind === 'text' ? '' : c.kind === 'integer' ? 'a whole number. ' : 'a number (decimal point). '}${c.note}`,
      ]),
      '',
    );

  /** What the error summaries call each field: its label on the form. */
  const BATCH_LABELS = new Map([['file', 'CSV file'], ['format', 'Format'], ['size', 'Label size'], ['layout', 'Layout'], ['start', 'Start position'], ['copies', 'Copies of each parcel’s papers']]);

  /**
   * The batches list with the upload form; a refused upload comes back here with its problems.
   * `again`: the file was uploaded before; the form offers to make its labels again. The label's
   * format and size come before the file in the form, so that a browser sends them first and they
   * are read even when the file is refused for its size (tooLargePage).
   */
  const listPage = async (request: FastifyRequest, reply: FastifyReply, o: { status?: number; problems?: CsvProblem[]; format?: string; size?: string; formErrors?: FieldProblem[]; formKey?: string; again?: boolean } = {}) => {
    // The upload form's key: new each time the page is shown, kept while it comes back refused (onceForForm).
    const formKey = formKeyOf(o.formKey);
    const { accountId } = d.user(request);
    const cursor = (request.query as { cursor?: string }).cursor;
    const page = pageOf({ limit: PER_PAGE, ...(cursor ? { cursor } : {}) });
    const rows = await listBatches(ctx, accountId, page);
    const batches = rows.slice(0, PER_PAGE);
    const problems = o.problems ?? [];
    const errors = fieldErrors(o.formErrors);
    if (problems.length && !errors.has('file')) errors.set('file', problems.length === 1 ? 'The file was refused; see above.' : `The file has ${problems.length} problems; see above.`);
    return d.send(request, reply, {
      title: problems.length || o.formErrors?.length ? 'Batches: the upload was refused' : 'Batches',
      section: 'batches',
      status: o.status ?? 200,
      body: (token) => html`<h1>Batches</h1>
${problems.length ? html`<div class="error-summary" role="alert" tabindex="-1" id="error-summary"><h2>The file was refused; no batch was created</h2>
<p>${problems.length === 1 ? 'Correct this and upload the file again:' : `Correct these ${problems.length} problems and upload the file again:`}</p>
<ul>${problems.slice(0, SHOWN_PROBLEMS).map((p) => html`<li><a href="#f-file">${problemText(p)}</a></li>`)}</ul>
${problems.length > SHOWN_PROBLEMS ? html`<p>… and ${problems.length - SHOWN_PROBLEMS} more.</p>` : ''}</div>` : errorSummary(o.formErrors, undefined, BATCH_LABELS)}
<section aria-labelledby="upload-heading">
<h2 id="upload-heading">Upload a CSV file</h2>
<p>One shipment per row, up to ${MAX_BATCH_ITEMS.toLocaleString('en-US')} rows and ${MAX_UPLOAD_BYTES / 1024 / 1024} MiB, with a header row naming the columns. Every row is checked first: if any is wrong, nothing is created and every problem is listed by its row. <a href="${base}/batches/example.csv" download>Download an example CSV file</a>.</p>
<form method="post" action="${base}/batches" enctype="multipart/form-data">
${csrfField(token)}
${formKeyField(formKey)}
<div class="grid">
${field({ label: 'Label format', name: 'format', value: o.format ?? 'PDF', options: LABEL_FORMATS.map((f) => [f, f] as const), required: true, errors })}
${field({ label: 'Label size', name: 'size', value: o.size ?? '4x6', options: LABEL_SIZES.map((s) => [s, `${s} in`] as const), required: true, errors })}
</div>
<div class="field${errors.has('file') ? ' invalid' : ''}"><label for="f-file">CSV file</label><input type="file" id="f-file" name="file" accept=".csv,text/csv" required aria-describedby="f-file-hint${errors.has('file') ? ' f-file-error' : ''}"${errors.has('file') ? new Html(' aria-invalid="true"') : ''}><p class="hint" id="f-file-hint">UTF-8, comma separated; the columns are listed below.</p>${errors.has('file') ? html`<p class="error" id="f-file-error">${errors.get('file')}</p>` : ''}</div>
${o.again ? html`<div class="field checks"><label for="f-again"><input type="checkbox" id="f-again" name="again" value="yes"> Upload it again: a second batch, and a second label for each of its parcels</label></div>` : ''}
<button type="submit">Upload and create the labels</button>
</form>
<details><summary>The columns</summary>
<p>Column names are matched without regard to case; empty cells are “not given”. Numbers are written with a decimal point (<code>1.5</code>). For a second customs item use <code>item2_description</code>, <code>item2_quantity</code> and so on, up to <code>item${MAX_CSV_ITEMS}_…</code>. Rows are numbered as a spreadsheet numbers them: the header is row 1.</p>
${columnsTable()}
</details>
</section>
<section aria-labelledby="list-heading">
<h2 id="list-heading">Your batches</h2>
${table(
  'Batches, newest first',
  ['File', 'Created', 'Status', 'Labels', 'Progress', 'Failed'],
  batches.map((b) => [
    html`<a href="${base}/batches/${b.id}">${b.name ?? 'Batch'}</a>`,
    time(b.createdAt),
    html`<span class="status">${b.status}</span>`,
    html`${b.format}, ${b.size}`,
    html`${b.counts.succeeded + b.counts.failed} of ${b.counts.total} done`,
    html`${b.counts.failed}`,
  ]),
  cursor ? 'No older batches.' : 'No batches yet: upload a CSV file above.',
)}
${olderLink(`${base}/batches`, {}, page, rows, 'Older batches')}${cursor ? html`<p><a href="${base}/batches">Newest batches</a></p>` : ''}
</section>`,
    });
  };

  /**
   * One batch: progress (refreshed while processing), its items, and the print-file form: disabled
   * while the labels are made (so the page does not move when it can be used), then for its labels.
   */
  const batchPage = async (request: FastifyRequest, reply: FastifyReply, id: string, o: { status?: number; formErrors?: FieldProblem[]; message?: string; values?: Record<string, string> } = {}) => {
    const batch = await getBatch(ctx, d.user(request).accountId, batchId(id));
    const processing = batch.status === 'processing';
    const done = batch.counts.succeeded + batch.counts.failed;
    const errors = fieldErrors(o.formErrors);
    const values = o.values ?? {};
    const defaultFormat = batch.format === 'ZPL' ? 'ZPL' : 'PDF';
    // What a picker knows a parcel by: its reference and its recipient (once the item's shipment exists).
    // (An item sent as another account's shipment id keeps that id, failed: only this account's are read.)
    const shipments = new Map((await accountShipmentsByIds(ctx.db, d.user(request).accountId, batch.items.flatMap((i) => (i.shipmentId ? [i.shipmentId] : [])))).map((s) => [s.id, s]));
    // Parcels that cross a customs border travel with their papers: linked once the batch is done.
    const documents = processing ? new Map<string, LabelDocument[]>() : await customsDocumentsOf(ctx, d.user(request).accountId, batch.items.flatMap((i) => (i.labelId ? [i.labelId] : [])));
    const papers = (i: BatchItem): Html => {
      const docs = i.labelId ? documents.get(i.labelId) : undefined;
      if (docs?.length) return html`${docs.map((doc, k) => html`${k ? ', ' : ''}<a href="${doc.url}">${words(doc.type)}</a>`)}`;
      // Past the label's 24 hours its links would answer 410; its papers still print in the customs papers' file.
      return docs ? html`links expired: in the customs papers’ print file` : html`—`;
    };
    const itemRow = (i: BatchItem): Html[] => {
      const s = i.shipmentId ? shipments.get(i.shipmentId) : undefined;
      return [
        html`${i.index + 1}`,
        s?.reference ? html`${s.reference}` : html`—`,
        s ? html`${s.to.name}, ${s.to.city} ${s.to.country}` : html`—`,
        i.trackingNumber ? (i.shipmentId ? html`<a href="${base}/shipments/${i.shipmentId}">${i.trackingNumber}</a>` : html`${i.trackingNumber}`) : html`—`,
        i.error ? html`<span class="error">${i.error.code}</span>: ${i.error.message}` : i.labelId ? html`labelled` : html`waiting`,
        ...(documents.size ? [papers(i)] : []),
      ];
    };
    return d.send(request, reply, {
      title: batch.name ? `${batch.name} (batch of ${batch.counts.total})` : `Batch of ${batch.counts.total}`,
      section: 'batches',
      status: o.status ?? 200,
      body: (token) => html`<h1>${batch.name ? `${batch.name}: batch` : 'Batch'} of ${batch.counts.total} ${batch.counts.total === 1 ? 'shipment' : 'shipments'}</h1>
${o.message ? errorSummary(undefined, o.message) : errorSummary(o.formErrors, undefined, BATCH_LABELS)}
<dl>
${batch.name ? html`<dt>File</dt><dd>${batch.name}</dd>` : ''}
<dt>Created</dt><dd>${time(batch.createdAt)}</dd>
<dt>Labels</dt><dd>${batch.format}, ${batch.size}</dd>
<dt>Batch id</dt><dd><code>${batch.id}</code></dd>
</dl>
<div id="batch-live"${processing ? new Html(' data-refresh') : ''}>
<section aria-labelledby="progress-heading">
<h2 id="progress-heading">Progress</h2>
<p><progress id="batch-progress" data-live aria-labelledby="progress-heading" value="${done}" max="${batch.counts.total}">${done} of ${batch.counts.total}</progress></p>
<p id="batch-status" data-live role="status"><span class="status">${batch.status}</span> ${progressText(batch)}${batch.completedAt ? html`; finished ${time(batch.completedAt)}` : ''}.</p>
<p id="batch-note" data-live>${processing ? html`The labels are being made; this part of the page updates itself. <a href="${base}/batches/${batch.id}">Refresh</a>` : ''}</p>
</section>
<div id="batch-print" data-live>${processing || batch.counts.succeeded > 0 ? html`<section aria-labelledby="print-heading">
<h2 id="print-heading">Print file</h2>
<p>${processing ? 'The print file of the whole batch can be made once every label is made.' : 'All of the batch’s labels that are still active, in order, in one document to print.'}</p>
<form method="post" action="${base}/batches/${batch.id}/print-file">
${csrfField(token)}
<fieldset class="bare"${processing ? new Html(' disabled') : ''}>
${field({ label: 'Layout', name: 'layout', value: values.layout ?? 'label', options: PRINT_LAYOUTS.map((l) => [l, LAYOUT_NAMES[l]] as const), required: true, hint: 'ZPL is always one label per label format (layout label).', errors })}
<div class="grid">
${field({ label: 'Format', name: 'format', value: values.format ?? defaultFormat, options: PRINT_FORMATS.map((f) => [f, f] as const), required: true, errors })}
${field({ label: 'Start position', name: 'start', type: 'number', step: '1', min: 1, max: Math.max(...PRINT_LAYOUTS.map(positionsOf)), value: values.start ?? '1', required: true, hint: 'Where the first label goes on the first sheet: 1–2 on letter-2up, 1–4 on a4-4up, for a sheet whose first labels are used.', errors })}
</div>
<button type="submit">Make the print file</button>
</fieldset>
</form>
</section>` : ''}${!processing && documents.size ? html`<section aria-labelledby="papers-heading">
<h2 id="papers-heading">Customs papers</h2>
<p>The customs declarations and commercial invoices of the batch’s ${documents.size} ${documents.size === 1 ? 'parcel that has' : 'parcels that have'} them, in the order of their labels, on A4 pages of one PDF.</p>
<form method="post" action="${base}/batches/${batch.id}/print-file">
${csrfField(token)}
<input type="hidden" name="contents" value="customs">
<div class="grid">
${field({ label: BATCH_LABELS.get('copies')!, name: 'copies', type: 'number', step: '1', min: 1, max: MAX_COPIES, value: values.copies ?? '1', required: true, hint: `Each parcel’s papers this many times, one set after the other (1 to ${MAX_COPIES}), for a carrier that asks for several copies.`, errors })}
</div>
<button type="submit">Make the customs papers</button>
</form>
</section>` : ''}</div>
<section aria-labelledby="items-heading">
<h2 id="items-heading">Items</h2>
<p class="hint">In the order of the batch: for an uploaded CSV file, item 1 is its first shipment row (row 2, below the header).</p>
<div id="batch-items" data-live>${table(`Items of the batch (${progressText(batch)})`, ['Item', 'Reference', 'Recipient', 'Tracking number', 'Outcome', ...(documents.size ? ['Customs documents (PDF)'] : [])], batch.items.map(itemRow), 'The batch has no items.')}</div>
</section>
</div>
<p><a href="${base}/batches">All batches</a></p>`,
    });
  };

  app.get<{ Querystring: { cursor?: string } }>('/batches', {
    config: PAGE,
    schema: { hide: true, querystring: { type: 'object', properties: { cursor: { type: 'string', maxLength: 200 } } } },
    handler: async (request, reply) => listPage(request, reply),
  });

  app.get('/batches/example.csv', {
    config: PAGE,
    schema: { hide: true },
    handler: async (_request, reply) => reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="batch-example.csv"').send(exampleCsv()),
  });

  /** A file over the upload limit: the upload form again, with the format and size sent before the file. */
  const tooLargePage = async (request: FastifyRequest, reply: FastifyReply) => {
    const form = fieldsSentBefore(request.body);
    // The form's token is checked as on every form (its field comes before the file): without a good
    // one this is the dashboard's 403 page, as for a small file.
    await new Promise<void>((resolve, reject) => {
      request.body = { _csrf: form.one('_csrf') };
      app.csrfProtection(request, reply, (err?: Error) => (err ? reject(err) : resolve()));
    });
    const message = `The file is larger than ${MAX_UPLOAD_BYTES / 1024 / 1024} MiB, the most one upload takes: split it into files of up to ${MAX_BATCH_ITEMS.toLocaleString('en-US')} rows, and check that it is the CSV export of the spreadsheet, not the spreadsheet itself.`;
    return listPage(request, reply, { status: 413, formErrors: [{ field: 'file', message }], format: form.one('format').trim() || 'PDF', size: form.one('size').trim() || '4x6', formKey: form.one('formKey') });
  };

  app.post('/batches', {
    config: UPLOAD,
    schema: { hide: true },
    // The file is read before the handler runs: one over the limit is refused here, anything else as on every page.
    errorHandler: (err: FastifyError, request, reply) => {
      if (err.code !== 'FST_REQ_FILE_TOO_LARGE') throw err;
      return tooLargePage(request, reply);
    },
    handler: async (request, reply) => {
      const form = d.form(request);
      const format = form.one('format').trim() || 'PDF';
      const size = form.one('size').trim() || '4x6';
      const formKey = formKeyOf(form.one('formKey'));
      const formErrors: FieldProblem[] = [];
      if (!(LABEL_FORMATS as readonly string[]).includes(format)) formErrors.push({ field: 'format', message: `must be one of ${LABEL_FORMATS.join(', ')}` });
      if (!(LABEL_SIZES as readonly string[]).includes(size)) formErrors.push({ field: 'size', message: `must be one of ${LABEL_SIZES.join(', ')}` });
      const file = form.file('file');
      if (!file) formErrors.push({ field: 'file', message: 'Choose a CSV file to upload.' });
      if (formErrors.length) return listPage(request, reply, { status: 400, formErrors, format, size, formKey });
      const parsed = parseShipmentsCsv(file!.bytes);
      if (!parsed.ok) return listPage(request, reply, { status: 400, problems: parsed.problems, format, size, formKey });
      // Named after its file, so that a day's batches can be told apart.
      const name = [...fileName(file!.name)].slice(0, BATCH_NAME_MAX).join('').trim();
      // The same upload form sent again (Back and submit, a double click) makes no second batch.
      let batch: Batch | undefined;
      let sending: FormSending;
      try {
        sending = await onceForForm(ctx, d.user(request).accountId, formKey, { file: createHash('sha256').update(file!.bytes).digest('base64url'), name, format, size }, async () => {
          // The same file uploaded again within a day would label every parcel twice: only when asked for.
          const earlier = name && form.one('again') !== 'yes' ? await recentBatchNamed(ctx, d.user(request).accountId, name, 24 * 3600 * 1000) : undefined;
          if (earlier) throw new Conflict(`${name} was uploaded at ${earlier.createdAt.slice(0, 16).replace('T', ' ')} UTC, as a batch of ${earlier.counts.total} (listed below). To make its labels again, tick “Upload it again” and choose the file again.`);
          batch = await createBatch(ctx, d.user(request).accountId, { items: parsed.rows.map((r) => ({ shipment: r.shipment })), format: format as LabelFormat, size: size as LabelSize, ...(name ? { name } : {}) });
          return `/batches/${batch.id}`;
        });
      } catch (err) {
        if (err instanceof Conflict) return listPage(request, reply, { status: 409, formErrors: [{ field: 'file', message: err.message }], format, size, formKey, again: true });
        if (!(err instanceof InvalidInput)) throw err;
        return listPage(request, reply, { status: 400, problems: batchProblems(parsed.rows, err.details ?? [{ field: 'items', message: err.message }]), format, size, formKey });
      }
      if (sending.again) return sentAgain(d, reply, sending, { made: 'batch', list: '/batches' });
      return d.redirect(reply, sending.answer, `The batch of ${batch!.counts.total} ${batch!.counts.total === 1 ? 'shipment' : 'shipments'} was created; its labels are being made.`);
    },
  });

  app.get<{ Params: { id: string } }>('/batches/:id', {
    config: PAGE,
    schema: { hide: true, params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 100 } } } },
    handler: async (request, reply) => batchPage(request, reply, request.params.id),
  });

  app.post<{ Params: { id: string } }>('/batches/:id/print-file', {
    config: PAGE,
    schema: { hide: true, params: { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 100 } } } },
    handler: async (request, reply) => {
      const id = batchId(request.params.id);
      const form = d.form(request);
      const contents = form.one('contents').trim() === 'customs' ? 'customs' : 'labels';
      const values = { format: form.one('format').trim() || 'PDF', layout: form.one('layout').trim() || 'label', start: form.one('start').trim() || '1', copies: form.one('copies').trim() || '1' };
      const formErrors: FieldProblem[] = [];
      if (!(PRINT_FORMATS as readonly string[]).includes(values.format)) formErrors.push({ field: 'format', message: `must be one of ${PRINT_FORMATS.join(', ')}` });
      const layout = (PRINT_LAYOUTS as readonly string[]).includes(values.layout) ? (values.layout as PrintLayout) : undefined;
      if (!layout) formErrors.push({ field: 'layout', message: `must be one of ${PRINT_LAYOUTS.join(', ')}` });
      const start = /^\d{1,2}$/.test(values.start) ? Number(values.start) : Number.NaN;
      if (!(start >= 1 && start <= Math.max(...PRINT_LAYOUTS.map(positionsOf)))) formErrors.push({ field: 'start', message: `must be a whole number from 1 to ${Math.max(...PRINT_LAYOUTS.map(positionsOf))}` });
      const copies = /^\d{1,2}$/.test(values.copies) ? Number(values.copies) : Number.NaN;
      if (!(copies >= 1 && copies <= MAX_COPIES)) formErrors.push({ field: 'copies', message: `must be a whole number from 1 to ${MAX_COPIES}` });
      if (formErrors.length) return batchPage(request, reply, id, { status: 400, formErrors, values });
      try {
        const printFile = await createPrintFile(ctx, d.user(request).accountId, contents === 'customs' ? { batchId: id, contents, copies } : { batchId: id, format: values.format as PrintFileFormat, layout: layout!, start });
        return reply.redirect(printFile.url, 303);
      } catch (err) {
        // A refusal of the service (ZPL on a sheet, nothing to print yet) is shown on the batch's page.
        if (!(err instanceof AppError) || err instanceof NotFound || err.status >= 500) throw err;
        return batchPage(request, reply, id, { status: err.status, formErrors: err.details, message: err.message, values });
      }
    },
  });
}

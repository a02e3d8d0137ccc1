// The dashboard's batches (§11, §15): a CSV file of shipments uploaded as one batch, its progress while
// the worker labels it, and one print file of its labels. A CSV row is the body of POST /v1/shipments
// spread over named columns (docs/batches.md, "Uploading a CSV in the dashboard"); every row is checked
// as the API checks a batch's items, and every problem is listed by row and column, the API's field
// path beside it, before anything is created.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parse } from 'csv-parse/sync';
import { createBatch, createPrintFile, getBatch, listBatches, MAX_BATCH_ITEMS, type Batch, type BatchItem, type PrintFileFormat } from '../batches/service.ts';
import { checkShipment, type NewShipment } from '../shipments/service.ts';
import { CARRIERS, SERVICES } from '../carriers/services.ts';
import { CONTENTS_TYPES } from '../carriers/customs.ts';
import { UUID_PATTERN } from '../db/ids.ts';
import { AppError, InvalidInput, NotFound, type FieldProblem } from '../errors.ts';
import { LABEL_FORMATS, LABEL_SIZES, type LabelFormat, type LabelSize } from '../render/index.ts';
import { PRINT_LAYOUTS, positionsOf, type PrintLayout } from '../render/layouts/sheet.ts';
import { csrfField, errorSummary, field, fieldErrors, Html, html, table, time } from './html.ts';
import { MAX_UPLOAD_BYTES, PAGE, UPLOAD, type Dashboard } from './routes.ts';
import { shipmentBodyProblems } from './validation.ts';

// ---- the CSV format ----

/** One column of the upload: its name in the header row, the API field it fills, and what it takes. */
export interface CsvColumn {
  name: string;
  /** The field of the `POST /v1/shipments` body, as the API's messages name it. */
  path: string;
  kind: 'text' | 'number' | 'integer';
  /** `yes`: every row; `abroad`: rows whose parcel crosses a customs border; otherwise optional. */
  required?: 'yes' | 'abroad';
  note: string;
}

const ADDRESS: readonly [string, string, CsvColumn['required'] | undefined, string][] = [
  ['name', 'name', 'yes', 'person or company, up to 100 characters'],
  ['company', 'company', undefined, ''],
  ['street1', 'street1', 'yes', ''],
  ['street2', 'street2', undefined, ''],
  ['city', 'city', 'yes', ''],
  ['state', 'state', undefined, 'required for US, CA and AU: NY, ON, NSW'],
  ['postal_code', 'postalCode', undefined, "in the country's format; left empty only where a country has none"],
  ['country', 'country', 'yes', 'ISO 3166-1 alpha-2: US, DE'],
  ['phone', 'phone', undefined, ''],
  ['email', 'email', undefined, ''],
];

const ITEM_FIELDS: readonly [string, string, CsvColumn['kind'], string][] = [
  ['description', 'description', 'text', 'up to 60 characters'],
  ['quantity', 'quantity', 'integer', '1 or more'],
  ['weight', 'netWeight.value', 'number', "the whole line's net weight"],
  ['weight_unit', 'netWeight.unit', 'text', 'g, kg, oz or lb; empty: the parcel’s weight_unit'],
  ['value', 'value.amount', 'number', "the whole line's value"],
  ['currency', 'value.currency', 'text', 'ISO 4217: USD, EUR; the same on every item'],
  ['hs_code', 'hsCode', 'text', '6 to 10 digits'],
  ['origin_country', 'originCountry', 'text', 'ISO 3166-1 alpha-2'],
];
/** A row may declare up to this many customs items: `item_…` (or `item1_…`), `item2_…`, … `item50_…`. */
export const MAX_CSV_ITEMS = 50;

const address = (side: 'from' | 'to'): CsvColumn[] =>
  ADDRESS.map(([col, key, required, note]) => ({ name: `${side}_${col}`, path: `${side}.${key}`, kind: 'text', ...(required ? { required } : {}), note }));

/** Every column of the upload, in the order of the example file. */
export const CSV_COLUMNS: readonly CsvColumn[] = [
  { name: 'reference', path: 'reference', kind: 'text', note: 'free text printed on the label, up to 100 characters' },
  { name: 'carrier', path: 'carrier', kind: 'text', required: 'yes', note: CARRIERS.join(', ') },
  { name: 'service', path: 'service', kind: 'text', required: 'yes', note: CARRIERS.map((c) => `${c}: ${SERVICES[c].map((s) => s.code).join(', ')}`).join('; ') },
  ...address('from'),
  ...address('to'),
  { name: 'weight', path: 'parcel.weight.value', kind: 'number', required: 'yes', note: 'more than 0' },
  { name: 'weight_unit', path: 'parcel.weight.unit', kind: 'text', required: 'yes', note: 'g, kg, oz or lb' },
  { name: 'length', path: 'parcel.length', kind: 'number', note: 'length, width, height and dimension_unit together, or none of them' },
  { name: 'width', path: 'parcel.width', kind: 'number', note: '' },
  { name: 'height', path: 'parcel.height', kind: 'number', note: '' },
  { name: 'dimension_unit', path: 'parcel.dimensionUnit', kind: 'text', note: 'cm or in' },
  ...[1, 2, 3].map((n): CsvColumn => ({ name: `message_${n}`, path: 'messages[]', kind: 'text', note: n === 1 ? 'lines printed on the label, up to 35 characters each' : '' })),
  { name: 'customs_contents_type', path: 'customs.contentsType', kind: 'text', required: 'abroad', note: CONTENTS_TYPES.join(', ') },
  { name: 'customs_contents_explanation', path: 'customs.contentsExplanation', kind: 'text', note: 'required when customs_contents_type is other' },
  { name: 'customs_signer', path: 'customs.signer', kind: 'text', required: 'abroad', note: "the declarant's name" },
  { name: 'customs_incoterm', path: 'customs.incoterm', kind: 'text', note: 'DAP (default) or DDP' },
  { name: 'customs_non_delivery', path: 'customs.nonDelivery', kind: 'text', note: 'return (default) or abandon' },
  { name: 'customs_invoice_number', path: 'customs.invoiceNumber', kind: 'text', note: '' },
  { name: 'customs_licence_number', path: 'customs.licenceNumber', kind: 'text', note: '' },
  { name: 'customs_certificate_number', path: 'customs.certificateNumber', kind: 'text', note: '' },
  { name: 'customs_importer_vat', path: 'customs.importerVat', kind: 'text', note: '' },
  { name: 'customs_eori', path: 'customs.eori', kind: 'text', note: '' },
  ...ITEM_FIELDS.map(([col, key, kind, note]): CsvColumn => ({ name: `item_${col}`, path: `customs.items[].${key}`, kind, ...(col === 'weight_unit' ? {} : { required: 'abroad' as const }), note })),
];

const BY_NAME = new Map(CSV_COLUMNS.map((c) => [c.name, c]));
const ITEM_COLUMN = new RegExp(`^item(\\d+)_(${ITEM_FIELDS.map(([c]) => c).join('|')})$`);

/** `item_x`, `item1_x` → item 1; `item7_x` → item 7; anything else: not an item column. */
function itemColumn(name: string): { n: number; field: string } | undefined {
  if (name.startsWith('item_') && BY_NAME.has(name)) return { n: 1, field: name.slice('item_'.length) };
  const m = ITEM_COLUMN.exec(name);
  if (!m) return undefined;
  const n = Number(m[1]);
  return n >= 1 && n <= MAX_CSV_ITEMS && String(n) === m[1] ? { n, field: m[2]! } : undefined;
}

/** The example file the upload page offers: three shipments, the second going abroad with customs. */
export const EXAMPLE_ROWS: readonly Record<string, string>[] = [
  {
    reference: 'Order 1001', carrier: 'USPS', service: 'priority_mail',
    from_name: 'Acme Warehouse', from_street1: '4100 Distribution Dr', from_city: 'Memphis', from_state: 'TN', from_postal_code: '38118', from_country: 'US', from_phone: '+1 901 555 0100',
    to_name: 'Ada Lovelace', to_street1: '350 Fifth Avenue', to_street2: 'Suite 2100', to_city: 'New York', to_state: 'NY', to_postal_code: '10118', to_country: 'US', to_email: 'ada@example.org',
    weight: '1.5', weight_unit: 'lb',
  },
  {
    reference: 'Order 1002', carrier: 'UPS', service: 'ground',
    from_name: 'Acme Warehouse', from_street1: '4100 Distribution Dr', from_city: 'Memphis', from_state: 'TN', from_postal_code: '38118', from_country: 'US',
    to_name: 'Jürgen Müller', to_company: 'Müller GmbH', to_street1: 'Hauptstraße 5', to_city: 'Berlin', to_postal_code: '10115', to_country: 'DE', to_phone: '+49 30 1234567',
    weight: '1.2', weight_unit: 'kg',
    customs_contents_type: 'merchandise', customs_signer: 'Ada Lovelace',
    item_description: 'Ceramic mug', item_quantity: '2', item_weight: '0.8', item_value: '40', item_currency: 'USD', item_hs_code: '691200', item_origin_country: 'US',
  },
  {
    reference: 'Order 1003', carrier: 'FedEx', service: 'ground',
    from_name: 'Acme Warehouse', from_street1: '4100 Distribution Dr', from_city: 'Memphis', from_state: 'TN', from_postal_code: '38118', from_country: 'US',
    to_name: 'Grace Hopper', to_street1: '1 Market St', to_city: 'San Francisco', to_state: 'CA', to_postal_code: '94105', to_country: 'US',
    weight: '3', weight_unit: 'kg', length: '30', width: '20', height: '10', dimension_unit: 'cm', message_1: 'Fragile',
  },
];

function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export function exampleCsv(): string {
  const lines = [CSV_COLUMNS.map((c) => c.name), ...EXAMPLE_ROWS.map((r) => CSV_COLUMNS.map((c) => r[c.name] ?? ''))];
  return `${lines.map((l) => l.map(csvCell).join(',')).join('\r\n')}\r\n`;
}

/** One problem of an upload: the row (as a spreadsheet numbers it, the header being row 1) and the column. */
export interface CsvProblem {
  row?: number;
  column?: string;
  /** The API's field path (`to.postalCode`). */
  path?: string;
  message: string;
}

export function problemText(p: CsvProblem): string {
  const where = [p.row === undefined ? '' : `Row ${p.row}`, p.column ?? ''].filter(Boolean).join(', ');
  const path = p.path && p.path !== p.column ? `(${p.path})` : '';
  const head = [where, path].filter(Boolean).join(' ');
  return head ? `${head}: ${p.message}` : p.message;
}

interface ParsedRow {
  row: number;
  shipment: NewShipment;
  /** The API's field path (without a prefix) → the column that holds it, for this row. */
  columns: Map<string, string>;
}

export type ParsedCsv = { ok: true; rows: ParsedRow[] } | { ok: false; problems: CsvProblem[] };

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

/** `a.b[2].c` set on an object, making the objects and arrays on the way. */
function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.match(/[^.[\]]+/g)!;
  let at: Record<string, unknown> = target;
  keys.forEach((key, i) => {
    if (i === keys.length - 1) {
      at[key] = value;
      return;
    }
    const nextIsIndex = /^\d+$/.test(keys[i + 1]!);
    at[key] ??= nextIsIndex ? [] : {};
    at = at[key] as Record<string, unknown>;
  });
}

/** The column a problem's field path points at (`customs.items[0].netWeight` → `item_weight`), if one does. */
function columnFor(columns: Map<string, string>, path: string): string | undefined {
  const exact = columns.get(path);
  if (exact) return exact;
  // A whole object missing or refused: its value's column (`parcel.weight` → weight).
  for (const suffix of ['.value', '.amount']) {
    const inner = columns.get(`${path}${suffix}`);
    if (inner) return inner;
  }
  return undefined;
}

/** The cells of one row, by column name; the shipment body they make; what was wrong with the cells themselves. */
function rowShipment(cells: Map<string, string>, row: number): { shipment: NewShipment; columns: Map<string, string>; problems: CsvProblem[] } {
  const body: Record<string, unknown> = { from: {}, to: {}, parcel: {} };
  const columns = new Map<string, string>();
  const problems: CsvProblem[] = [];
  const put = (column: string, path: string, kind: CsvColumn['kind'], raw: string) => {
    columns.set(path, column);
    let value: string | number = raw;
    if (kind !== 'text') {
      if ((kind === 'integer' ? INTEGER : NUMBER).test(raw)) value = Number(raw);
      else problems.push({ row, column, path, message: `“${raw}” is not ${kind === 'integer' ? 'a whole number' : 'a number'}${/^\d+,\d+$/.test(raw) ? ` (write decimals with a point: ${raw.replace(',', '.')})` : ''}` });
    }
    setPath(body, path, value);
  };
  let messages = 0;
  for (const column of CSV_COLUMNS) {
    if (column.name.startsWith('item_')) continue;
    const raw = cells.get(column.name);
    if (!raw) {
      // Still named, so that "is required" points at the column.
      if (column.path !== 'messages[]') columns.set(column.path, column.name);
      continue;
    }
    if (column.path === 'messages[]') put(column.name, `messages[${messages++}]`, 'text', raw);
    else put(column.name, column.path, column.kind, raw);
  }
  // Customs items: the groups with any cell given, in their numbers' order.
  const groups = new Map<number, Map<string, string>>();
  for (const [name, raw] of cells) {
    const item = itemColumn(name);
    if (!item || !raw) continue;
    if (!groups.has(item.n)) groups.set(item.n, new Map());
    groups.get(item.n)!.set(item.field, raw);
  }
  const hasCustoms = groups.size > 0 || CSV_COLUMNS.some((c) => c.name.startsWith('customs_') && cells.get(c.name));
  if (hasCustoms) {
    body.customs ??= {};
    (body.customs as Record<string, unknown>).items = [];
    const numbers = [...groups.keys()].sort((a, b) => a - b);
    // The items as a whole: none given, or their net weights more than the parcel's.
    columns.set('customs.items', numbers.length ? numbers.map((n) => `${itemPrefix(n)}weight`).join(', ') : 'item_description');
    numbers.forEach((n, i) => {
      const given = groups.get(n)!;
      if (!given.get('weight_unit') && given.get('weight') && cells.get('weight_unit')) given.set('weight_unit', cells.get('weight_unit')!);
      for (const [col, key, kind] of ITEM_FIELDS) {
        const path = `customs.items[${i}].${key}`;
        const column = `${itemPrefix(n)}${col}`;
        const raw = given.get(col);
        if (raw) put(column, path, kind, raw);
        else columns.set(path, column);
      }
      columns.set(`customs.items[${i}]`, `${itemPrefix(n)}…`);
    });
  } else {
    columns.set('customs', 'customs_contents_type, customs_signer, item_…');
  }
  return { shipment: body as unknown as NewShipment, columns, problems };
}

function itemPrefix(n: number): string {
  return n === 1 ? 'item_' : `item${n}_`;
}

/** Reads an uploaded file: its header, then every row as a shipment, checked as the API checks a batch item. */
export function parseShipmentsCsv(file: Buffer): ParsedCsv {
  const fail = (message: string): ParsedCsv => ({ ok: false, problems: [{ message }] });
  if (file.length === 0) return fail('The file is empty. It needs a header row naming the columns and one row per shipment.');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(file);
  } catch {
    return fail('The file is not a CSV text file in UTF-8. Save it as “CSV UTF-8 (comma delimited)” and upload it again.');
  }
  if (text.includes('\u0000')) return fail('The file is not a CSV text file (it holds binary data). Upload the CSV export of your spreadsheet.');
  let records: string[][];
  try {
    records = parse(text, { bom: true, relax_column_count: true, skip_empty_lines: false, trim: true }) as string[][];
  } catch (err) {
    const e = err as Error & { lines?: number };
    return fail(`The file is not valid CSV${e.lines ? ` (line ${e.lines})` : ''}: ${e.message.replace(/ at line \d+/, '')}.`);
  }
  const header = (records[0] ?? []).map((h) => h.trim().toLowerCase().replace(/^item1_/, 'item_'));
  if (header.every((h) => h === '')) return fail('The file is empty. It needs a header row naming the columns and one row per shipment.');

  const problems: CsvProblem[] = [];
  if (header.length === 1 && /[;\t]/.test(header[0]!)) {
    return fail(`The header row is one column, “${records[0]![0]}”: the columns must be separated by commas (not semicolons or tabs).`);
  }
  const unknown = header.filter((h) => h !== '' && !BY_NAME.has(h) && !itemColumn(h));
  if (unknown.length) problems.push({ message: `The header names columns that are not known: ${unknown.join(', ')}. The known columns are listed under “The columns” on this page (from reference and carrier to item_origin_country, and item2_… to item${MAX_CSV_ITEMS}_… for more customs items).` });
  const repeated = new Set(header.filter((h, i) => h !== '' && header.indexOf(h) !== i));
  if (repeated.size) problems.push({ message: `The header names a column more than once: ${[...repeated].join(', ')}.` });
  const missing = CSV_COLUMNS.filter((c) => c.required === 'yes' && !header.includes(c.name)).map((c) => c.name);
  if (missing.length) problems.push({ message: `The header lacks required columns: ${missing.join(', ')}.` });
  if (problems.length) return { ok: false, problems };

  const rows: ParsedRow[] = [];
  let shipmentRows = 0;
  for (let r = 1; r < records.length; r++) {
    const record = records[r]!;
    if (record.every((c) => c === '')) continue; // a blank row: no shipment
    shipmentRows++;
    const row = r + 1;
    const cells = new Map<string, string>();
    record.forEach((value, i) => {
      const name = header[i];
      if (name) cells.set(name, value);
      else if (value !== '') problems.push({ row, message: `cell ${i + 1} holds “${value.slice(0, 40)}”, but the header has no column name there` });
    });
    if (shipmentRows > MAX_BATCH_ITEMS) continue;
    const { shipment, columns, problems: cellProblems } = rowShipment(cells, row);
    problems.push(...cellProblems);
    const flagged = new Set(cellProblems.map((p) => p.path));
    let rowProblems = shipmentBodyProblems(shipment).filter((p) => !flagged.has(p.field));
    if (rowProblems.length === 0 && cellProblems.length === 0) {
      // The service's own rules (the carrier's services, addresses, dimensions, customs), as createBatch runs them.
      try {
        checkShipment(shipment);
      } catch (err) {
        if (!(err instanceof InvalidInput)) throw err;
        rowProblems = err.details ?? [{ field: 'body', message: err.message }];
      }
    }
    for (const p of rowProblems) problems.push({ row, column: columnFor(columns, p.field), path: p.field, message: p.message });
    rows.push({ row, shipment, columns });
  }
  if (shipmentRows === 0) return fail('The file has a header row but no shipment rows.');
  if (shipmentRows > MAX_BATCH_ITEMS) return fail(`The file has ${shipmentRows} shipment rows; a batch takes at most ${MAX_BATCH_ITEMS.toLocaleString('en-US')}. Split it into several files.`);
  return problems.length ? { ok: false, problems } : { ok: true, rows };
}

/** A refusal of createBatch (`items[3].shipment.to.postalCode`) named by the file's row and column. */
function batchProblems(rows: ParsedRow[], details: FieldProblem[]): CsvProblem[] {
  return details.map((p) => {
    const m = /^items\[(\d+)\]\.shipment\.?(.*)$/.exec(p.field);
    const row = m ? rows[Number(m[1])] : undefined;
    if (!m || !row) return { path: p.field, message: p.message };
    return { row: row.row, column: columnFor(row.columns, m[2]!), path: m[2] || 'shipment', message: p.message };
  });
}

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

  /** The batches list with the upload form; a refused upload comes back here with its problems. */
  const listPage = async (request: FastifyRequest, reply: FastifyReply, o: { status?: number; problems?: CsvProblem[]; format?: string; size?: string; formErrors?: FieldProblem[] } = {}) => {
    const { accountId } = d.user(request);
    const before = (request.query as { before?: string }).before;
    const rows = await listBatches(ctx, accountId, { limit: PER_PAGE, ...(before ? { before } : {}) });
    const batches = rows.slice(0, PER_PAGE);
    const older = rows.length > PER_PAGE ? batches[batches.length - 1]!.id : undefined;
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
${problems.length > SHOWN_PROBLEMS ? html`<p>… and ${problems.length - SHOWN_PROBLEMS} more.</p>` : ''}</div>` : errorSummary(o.formErrors)}
<section aria-labelledby="upload-heading">
<h2 id="upload-heading">Upload a CSV file</h2>
<p>One shipment per row, up to ${MAX_BATCH_ITEMS.toLocaleString('en-US')} rows and ${MAX_UPLOAD_BYTES / 1024 / 1024} MiB, with a header row naming the columns. Every row is checked first: if any is wrong, nothing is created and every problem is listed by its row. <a href="${base}/batches/example.csv" download>Download an example CSV file</a>.</p>
<form method="post" action="${base}/batches" enctype="multipart/form-data">
${csrfField(token)}
<div class="field${errors.has('file') ? ' invalid' : ''}"><label for="f-file">CSV file</label><input type="file" id="f-file" name="file" accept=".csv,text/csv" required aria-describedby="f-file-hint${errors.has('file') ? ' f-file-error' : ''}"${errors.has('file') ? new Html(' aria-invalid="true"') : ''}><p class="hint" id="f-file-hint">UTF-8, comma separated; the columns are listed below.</p>${errors.has('file') ? html`<p class="error" id="f-file-error">${errors.get('file')}</p>` : ''}</div>
<div class="grid">
${field({ label: 'Label format', name: 'format', value: o.format ?? 'PDF', options: LABEL_FORMATS.map((f) => [f, f] as const), required: true, errors })}
${field({ label: 'Label size', name: 'size', value: o.size ?? '4x6', options: LABEL_SIZES.map((s) => [s, `${s} in`] as const), required: true, errors })}
</div>
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
  ['Created', 'Status', 'Labels', 'Progress', 'Failed'],
  batches.map((b) => [
    html`<a href="${base}/batches/${b.id}">${time(b.createdAt)}</a>`,
    html`<span class="status">${b.status}</span>`,
    html`${b.format}, ${b.size}`,
    html`${b.counts.succeeded + b.counts.failed} of ${b.counts.total} done`,
    html`${b.counts.failed}`,
  ]),
  before ? 'No older batches.' : 'No batches yet: upload a CSV file above.',
)}
${older ? html`<p><a href="${base}/batches?before=${older}">Older batches</a></p>` : ''}${before ? html`<p><a href="${base}/batches">Newest batches</a></p>` : ''}
</section>`,
    });
  };

  /** One batch: progress (refreshed while processing), its items, and the print-file form once labels exist. */
  const batchPage = async (request: FastifyRequest, reply: FastifyReply, id: string, o: { status?: number; formErrors?: FieldProblem[]; message?: string; values?: Record<string, string> } = {}) => {
    const batch = await getBatch(ctx, d.user(request).accountId, batchId(id));
    const processing = batch.status === 'processing';
    const done = batch.counts.succeeded + batch.counts.failed;
    const errors = fieldErrors(o.formErrors);
    const values = o.values ?? {};
    const defaultFormat = batch.format === 'ZPL' ? 'ZPL' : 'PDF';
    const itemRow = (i: BatchItem): Html[] => [
      html`${i.index + 1}`,
      i.trackingNumber ? (i.shipmentId ? html`<a href="${base}/shipments/${i.shipmentId}">${i.trackingNumber}</a>` : html`${i.trackingNumber}`) : html`—`,
      i.error ? html`<span class="error">${i.error.code}</span>: ${i.error.message}` : i.labelId ? html`labelled` : html`waiting`,
    ];
    return d.send(request, reply, {
      title: `Batch of ${batch.counts.total}`,
      section: 'batches',
      status: o.status ?? 200,
      body: (token) => html`<h1>Batch of ${batch.counts.total} ${batch.counts.total === 1 ? 'shipment' : 'shipments'}</h1>
${o.message ? errorSummary(undefined, o.message) : errorSummary(o.formErrors)}
<dl>
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
<div id="batch-print" data-live>${batch.counts.succeeded > 0 ? html`<section aria-labelledby="print-heading">
<h2 id="print-heading">Print file</h2>
<p>All of the batch’s labels that are still active, in order, in one document to print.${processing ? ' The labels made so far.' : ''}</p>
<form method="post" action="${base}/batches/${batch.id}/print-file">
${csrfField(token)}
<div class="grid">
${field({ label: 'Format', name: 'format', value: values.format ?? defaultFormat, options: PRINT_FORMATS.map((f) => [f, f] as const), required: true, errors })}
${field({ label: 'Layout', name: 'layout', value: values.layout ?? 'label', options: PRINT_LAYOUTS.map((l) => [l, LAYOUT_NAMES[l]] as const), required: true, hint: 'ZPL is always one label per label format (layout label).', errors })}
${field({ label: 'Start position', name: 'start', type: 'number', step: '1', value: values.start ?? '1', required: true, hint: 'Where the first label goes on the first sheet: 1–2 on letter-2up, 1–4 on a4-4up, for a sheet whose first labels are used.', errors })}
</div>
<button type="submit">Make the print file</button>
</form>
</section>` : ''}</div>
<section aria-labelledby="items-heading">
<h2 id="items-heading">Items</h2>
<p class="hint">In the order of the batch: for an uploaded CSV file, item 1 is its first shipment row (row 2, below the header).</p>
<div id="batch-items" data-live>${table(`Items of the batch (${progressText(batch)})`, ['Item', 'Tracking number', 'Outcome'], batch.items.map(itemRow), 'The batch has no items.')}</div>
</section>
</div>
<p><a href="${base}/batches">All batches</a></p>`,
    });
  };

  app.get<{ Querystring: { before?: string } }>('/batches', {
    config: PAGE,
    schema: { hide: true, querystring: { type: 'object', properties: { before: { type: 'string', pattern: UUID_PATTERN } } } },
    handler: async (request, reply) => listPage(request, reply),
  });

  app.get('/batches/example.csv', {
    config: PAGE,
    schema: { hide: true },
    handler: async (_request, reply) => reply.type('text/csv; charset=utf-8').header('content-disposition', 'attachment; filename="batch-example.csv"').send(exampleCsv()),
  });

  app.post('/batches', {
    config: UPLOAD,
    schema: { hide: true },
    handler: async (request, reply) => {
      const form = d.form(request);
      const format = form.one('format').trim() || 'PDF';
      const size = form.one('size').trim() || '4x6';
      const formErrors: FieldProblem[] = [];
      if (!(LABEL_FORMATS as readonly string[]).includes(format)) formErrors.push({ field: 'format', message: `must be one of ${LABEL_FORMATS.join(', ')}` });
      if (!(LABEL_SIZES as readonly string[]).includes(size)) formErrors.push({ field: 'size', message: `must be one of ${LABEL_SIZES.join(', ')}` });
      const file = form.file('file');
      if (!file) formErrors.push({ field: 'file', message: 'Choose a CSV file to upload.' });
      if (formErrors.length) return listPage(request, reply, { status: 400, formErrors, format, size });
      const parsed = parseShipmentsCsv(file!);
      if (!parsed.ok) return listPage(request, reply, { status: 400, problems: parsed.problems, format, size });
      let batch: Batch;
      try {
        batch = await createBatch(ctx, d.user(request).accountId, { items: parsed.rows.map((r) => ({ shipment: r.shipment })), format: format as LabelFormat, size: size as LabelSize });
      } catch (err) {
        if (!(err instanceof InvalidInput)) throw err;
        return listPage(request, reply, { status: 400, problems: batchProblems(parsed.rows, err.details ?? [{ field: 'items', message: err.message }]), format, size });
      }
      return d.redirect(reply, `/batches/${batch.id}`, `The batch of ${batch.counts.total} ${batch.counts.total === 1 ? 'shipment' : 'shipments'} was created; its labels are being made.`);
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
      const values = { format: form.one('format').trim() || 'PDF', layout: form.one('layout').trim() || 'label', start: form.one('start').trim() || '1' };
      const formErrors: FieldProblem[] = [];
      if (!(PRINT_FORMATS as readonly string[]).includes(values.format)) formErrors.push({ field: 'format', message: `must be one of ${PRINT_FORMATS.join(', ')}` });
      const layout = (PRINT_LAYOUTS as readonly string[]).includes(values.layout) ? (values.layout as PrintLayout) : undefined;
      if (!layout) formErrors.push({ field: 'layout', message: `must be one of ${PRINT_LAYOUTS.join(', ')}` });
      const start = /^\d{1,2}$/.test(values.start) ? Number(values.start) : Number.NaN;
      if (!(start >= 1 && start <= Math.max(...PRINT_LAYOUTS.map(positionsOf)))) formErrors.push({ field: 'start', message: `must be a whole number from 1 to ${Math.max(...PRINT_LAYOUTS.map(positionsOf))}` });
      if (formErrors.length) return batchPage(request, reply, id, { status: 400, formErrors, values });
      try {
        const printFile = await createPrintFile(ctx, d.user(request).accountId, { batchId: id, format: values.format as PrintFileFormat, layout: layout!, start });
        return reply.redirect(printFile.url, 303);
      } catch (err) {
        // A refusal of the service (ZPL on a sheet, nothing to print yet) is shown on the batch's page.
        if (!(err instanceof AppError) || err instanceof NotFound || err.status >= 500) throw err;
        return batchPage(request, reply, id, { status: err.status, formErrors: err.details, message: err.message, values });
      }
    },
  });
}

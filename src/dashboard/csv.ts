// The CSV file of shipments the dashboard's batch upload takes (docs/batches.md): its columns, an
// example file, and the parser that turns each row into the body of `POST /v1/shipments`, checked as
// the API checks it, every problem naming its row, column and field path.
import { parse } from 'csv-parse/sync';
import { MAX_BATCH_ITEMS } from '../batches/service.ts';
import { checkShipment, type NewShipment } from '../shipments/service.ts';
import { CARRIERS, servicesByRoute } from '../carriers/services.ts';
import { CONTENTS_TYPES } from '../carriers/customs.ts';
import { InvalidInput, type FieldProblem } from '../errors.ts';
import { commaHint, setField, shipmentBodyProblems } from './validation.ts';

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
  { name: 'service', path: 'service', kind: 'text', required: 'yes', note: servicesByRoute() },
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
  { name: 'customs_eori', path: 'customs.eori', kind: 'text', note: 'a country code and up to 15 letters or digits' },
  { name: 'customs_ioss', path: 'customs.ioss', kind: 'text', note: 'the seller\'s IOSS number: IM and 10 digits' },
  { name: 'customs_eel_pfc', path: 'customs.eelPfc', kind: 'text', note: 'goods leaving the US: AES and the ITN (over 2,500 USD of one HS code), or an exemption like NOEEI 30.37(a)' },
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
    reference: 'Order 1002', carrier: 'UPS', service: 'worldwide_saver',
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

/** A line break or tab typed inside a cell (Alt+Enter in a spreadsheet), with the spaces around it. */
const LINE_BREAKS = /[ \t\r\n]*[\t\r\n][ \t\r\n]*/g;

/**
 * A cell as the shipment takes it: a line break or tab inside it is one space, as on the new-shipment
 * form (labels print one line per field); other control characters are left for the API to refuse.
 */
function cellText(raw: string): string {
  return raw.replace(LINE_BREAKS, ' ').trim();
}

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

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
      else problems.push({ row, column, path, message: `“${raw}” is not ${kind === 'integer' ? 'a whole number' : 'a number'}${commaHint(raw)}` });
    }
    setField(body, path, value);
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

/**
 * A row whose cells do not line up with the header's columns, said in so many words: its cells' own
 * problems would name the wrong columns. More cells than the header is an unquoted comma splitting a
 * cell, even when the cells past the header are empty (a decimal comma in a row whose last column is
 * empty). Fewer cells is taken when only optional columns are missing at the end: a spreadsheet may
 * leave out a row's trailing empty cells.
 */
function cellCountProblem(record: string[], header: string[], row: number): CsvProblem | undefined {
  const counted = `Row ${row} has ${record.length} ${record.length === 1 ? 'cell' : 'cells'} where the header has ${header.length}`;
  if (record.length > header.length) return { message: `${counted}: a comma inside a cell (a decimal comma such as 1,5, or an address) needs the cell in double quotes` };
  const missing = header.slice(record.length).filter((name) => BY_NAME.get(name)?.required === 'yes');
  if (missing.length === 0) return undefined;
  return { message: `${counted}, so none for ${missing.join(', ')}: a row needs one cell for every column, an empty cell too (two commas in a row); a comma between two cells may be missing` };
}

function itemPrefix(n: number): string {
  return n === 1 ? 'item_' : `item${n}_`;
}

/** How every file is read: a row's cells are counted against the header's (cellCountProblem) rather than by the parser. */
const CSV_OPTIONS = { bom: true, relax_column_count: true, skip_empty_lines: false, trim: true } as const;

/** The header's column names as they are matched: without regard to case, `item1_…` being `item_…`. */
function columnNames(header: string[]): string[] {
  return header.map((h) => h.trim().toLowerCase().replace(/^item1_/, 'item_'));
}

/** Where the parser stopped: `records` read before the faulty one (the header included), and the cell's index in it. */
interface ParserStop {
  code?: string;
  records?: number;
  column?: number;
}

/**
 * The parser's refusal (a quoting mistake) as a problem of a row and column, counted as every other
 * problem is: in rows, not lines, since a quoted line break makes one row of two lines.
 */
function quotingProblem(text: string, err: unknown): CsvProblem {
  const { code, records, column } = err as ParserStop;
  if (records === undefined) return { message: 'The file is not valid CSV. Save it from your spreadsheet as “CSV UTF-8 (comma delimited)” and upload it again.' };
  const where = { row: records + 1, ...(column === undefined ? {} : { column: columnAt(text, records, column) }) };
  switch (code) {
    case 'INVALID_OPENING_QUOTE':
    case 'CSV_INVALID_OPENING_QUOTE': {
      const cell = column === undefined ? undefined : recordsUpTo(text, records + 1, true)?.[records]?.[column];
      return { ...where, message: `a double quote inside a cell needs the whole cell in double quotes and the quote doubled (${quoted(cell)})` };
    }
    case 'CSV_INVALID_CLOSING_QUOTE':
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      return { ...where, message: `the cell begins with a double quote, so it must end with one, right before the next comma; a double quote inside it is doubled (${quoted(undefined)})` };
    case 'CSV_QUOTE_NOT_CLOSED':
      return { ...where, message: 'the double quote that begins this cell is never closed, so the rest of the file was read as this one cell: end the cell with a double quote, or double a quote that belongs in its text ("")' };
    default:
      return { ...where, message: 'this row could not be read as CSV: save the file from your spreadsheet as “CSV UTF-8 (comma delimited)” and upload it again' };
  }
}

/** The name of the header's column at `index` (read from the rows before the faulty one), or its number. */
function columnAt(text: string, records: number, index: number): string {
  const header = recordsUpTo(text, records, false)?.[0];
  return (header && columnNames(header)[index]) || `cell ${index + 1}`;
}

/** The file's first `count` records (quotes read leniently when asked, to show a faulty cell); undefined when they cannot be read. */
function recordsUpTo(text: string, count: number, relaxQuotes: boolean): string[][] | undefined {
  if (count < 1) return undefined;
  try {
    return parse(text, { ...CSV_OPTIONS, relax_quotes: relaxQuotes, to: count }) as string[][];
  } catch {
    return undefined;
  }
}

/** A cell as a CSV file writes it in double quotes (`"Grace ""Amazing"" Hopper"`); a long or unknown one by that example. */
function quoted(cell: string | undefined): string {
  const text = cell && cell.length <= 60 ? cellText(cell) : 'Grace "Amazing" Hopper';
  return `"${text.replace(/"/g, '""')}"`;
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
    // The header as it came, so that a file separated by tabs is told so (below); the rows' cells as the shipment takes them.
    records = (parse(text, CSV_OPTIONS) as string[][]).map((record, r) => (r === 0 ? record : record.map(cellText)));
  } catch (err) {
    return { ok: false, problems: [quotingProblem(text, err)] };
  }
  const header = columnNames(records[0] ?? []);
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
    const misaligned = cellCountProblem(record, header, row);
    if (misaligned) {
      problems.push(misaligned);
      continue;
    }
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
export function batchProblems(rows: ParsedRow[], details: FieldProblem[]): CsvProblem[] {
  return details.map((p) => {
    const m = /^items\[(\d+)\]\.shipment\.?(.*)$/.exec(p.field);
    const row = m ? rows[Number(m[1])] : undefined;
    if (!m || !row) return { path: p.field, message: p.message };
    return { row: row.row, column: columnFor(row.columns, m[2]!), path: m[2] || 'shipment', message: p.message };
  });
}

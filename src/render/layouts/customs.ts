// The customs documents of a label (contract §12): the UPU's CN22 and CN23 declarations and a
// commercial invoice, on A4, laid out in the one drawing model like everything else. Every field is
// text (pdftotext reads it back) and the tracking number is the waybill number, printed and as a
// Code 128 barcode on every page. The items table continues on as many pages as it takes (up to 50
// items), and the totals and the signature follow the last item.
import { WEIGHT_SLACK, currencyDigits, eeiCitation, grams, needsCommercialInvoice, totalValue, type Customs } from '../../carriers/customs.ts';
import type { Address } from '../../carriers/types.ts';
import { countryName } from '../../countries.ts';
import { linearBarcode } from '../barcodes.ts';
import type { LabelData } from '../label.ts';
import type { Drawing } from '../model.ts';
import { asciiText, cleanText, wrapText } from '../text.ts';
import { postalLines } from './address.ts';
import { Sheet } from './label.ts';

export const CUSTOMS_DOCUMENTS = ['cn22', 'cn23', 'commercial_invoice'] as const;
export type CustomsDocument = (typeof CUSTOMS_DOCUMENTS)[number];

/** The customs documents a label's snapshot calls for (§12): its declaration, and an invoice for goods. */
export function documentsFor(label: Pick<LabelData, 'customs' | 'customsForm'>): CustomsDocument[] {
  if (!label.customs || !label.customsForm) return [];
  return [label.customsForm === 'CN22' ? 'cn22' : 'cn23', ...(needsCommercialInvoice(label.customs) ? (['commercial_invoice'] as const) : [])];
}

export interface CustomsDocumentData {
  document: CustomsDocument;
  label: LabelData;
}

const W = 595.28;
const H = 841.89;
const M = 40;
/** The lowest baseline of a page's content; the page number is printed below it. */
const BOTTOM = H - M - 14;
/** A table line: 8 pt text on 10 pt. */
const LEAD = 10;

const CATEGORIES: [Customs['contentsType'], string][] = [
  ['gift', 'Gift'],
  ['documents', 'Documents'],
  ['sample', 'Commercial sample'],
  ['returned_goods', 'Returned goods'],
  ['merchandise', 'Sale of goods'],
  ['other', 'Other'],
];

/** An amount with its currency's own decimals: `19.99 USD`, `500 JPY`, `1.234 KWD`. */
function money(amount: number, currency: string): string {
  return `${amount.toFixed(currencyDigits(currency))} ${currency}`;
}

/**
 * A line's value per unit: in the currency's decimals when that multiplies back to the line's value,
 * else with two more (45.50 USD for 3 is 15.1667, not 15.17, which makes 45.51).
 */
function unitMoney(lineAmount: number, quantity: number, currency: string): string {
  const digits = currencyDigits(currency);
  const unit = lineAmount / quantity;
  const exact = Math.abs(Number(unit.toFixed(digits)) * quantity - lineAmount) < 10 ** -(digits + 3);
  return `${unit.toFixed(exact ? digits : digits + 2)} ${currency}`;
}

type Weight = Customs['items'][number]['netWeight'];

/** A weight in another unit (the same number in its own). */
function inUnit(w: Weight, unit: Weight['unit']): number {
  return w.unit === unit ? w.value : grams(w) / grams({ value: 1, unit });
}

/** The decimals a weight is printed with on its own: three of its unit, or two significant digits when it is lighter than that (never 0 for something). */
function ownDecimals(value: number): number {
  if (value <= 0 || Math.round(value * 1000) !== 0) return 3;
  return Math.min(20, 1 - Math.floor(Math.log10(value)));
}

/** A number to `digits` decimals in plain digits, without trailing zeros: 0.02835, 1.4, 0.0000005, never an exponent. */
function decimal(value: number, digits: number): string {
  const s = value.toFixed(digits);
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/** Decimal numbers added digit for digit, as a reader adds them (0.1 + 0.2 is 0.3). */
function addDecimals(numbers: string[]): string {
  const digits = Math.max(0, ...numbers.map((n) => n.split('.')[1]?.length ?? 0));
  const sum = numbers.reduce((acc, n) => {
    const [whole, fraction = ''] = n.split('.');
    return acc + BigInt(whole! + fraction.padEnd(digits, '0'));
  }, 0n);
  if (!digits) return String(sum);
  const s = sum.toString().padStart(digits + 1, '0');
  return `${s.slice(0, -digits)}.${s.slice(-digits)}`.replace(/\.?0+$/, '');
}

/** More decimals than a line's own it may take to add up: at most two for 50 lines of one unit; a line in another unit may take more. */
const MOST_EXTRA_DECIMALS = 6;

interface NetWeights {
  /** Each item's line: `0.02835 kg`. */
  lines: string[];
  /** Their total as printed, in the total's unit: `1.4175`. */
  total: string;
  unit: Weight['unit'];
  /** The items' true total, in the total's unit. */
  exact: number;
}

/**
 * The items' net weights as printed, each line in `lineUnit`, and their total in `totalUnit`, such
 * that the lines add up to the total and the total is true (docs/customs.md): every line to its own
 * decimals, all with one more, or two, while the lines so printed would add up to something half a
 * unit of the total's own last decimal or more from the true total (50 × 1 oz is 50 × 0.02835 kg,
 * not 50 × 0.028 = 1.4 kg against 1.417). Lines in the total's unit add up to it exactly (it is their
 * sum); lines in another unit add up to it, converted, to its last digit.
 */
function netWeights(items: Customs['items'], lineUnit: (w: Weight) => Weight['unit'], totalUnit: Weight['unit']): NetWeights {
  const shown = items.map((i) => ({ value: inUnit(i.netWeight, lineUnit(i.netWeight)), unit: lineUnit(i.netWeight) }));
  const exact = items.reduce((sum, i) => sum + inUnit(i.netWeight, totalUnit), 0);
  const totalDigits = ownDecimals(exact);
  for (let extra = 0; ; extra++) {
    const printed = shown.map((w) => decimal(w.value, ownDecimals(w.value) + extra));
    const sum = printed.reduce((acc, p, k) => acc + inUnit({ value: Number(p), unit: shown[k]!.unit }, totalUnit), 0);
    if (Math.abs(sum - exact) < 0.5 * 10 ** -totalDigits || extra === MOST_EXTRA_DECIMALS) {
      const total = shown.every((w) => w.unit === totalUnit) ? addDecimals(printed) : decimal(sum, totalDigits);
      return { lines: printed.map((p, k) => `${p} ${shown[k]!.unit}`), total, unit: totalUnit, exact };
    }
  }
}

/**
 * The parcel's (gross) weight in the net total's unit, with at least the decimals of the net total, so that the two
 * compare digit for digit; never less than that total when the items are not heavier than the parcel
 * (weighing all it does, their printed sum may be up to half a gram over the truth, and so over it).
 */
function grossText(gross: Weight, net: NetWeights): string {
  const value = inUnit(gross, net.unit);
  const printed = decimal(value, Math.max(ownDecimals(value), net.total.split('.')[1]?.length ?? 0));
  const notHeavier = net.exact <= value * (1 + WEIGHT_SLACK);
  return `${notHeavier && Number(net.total) > Number(printed) ? net.total : printed} ${net.unit}`;
}

/** Sender and addressee as their posts read them (§16), each with its country: the documents cross a border. */
function addressLines(a: Address): string[] {
  return [...postalLines(a, true), a.phone ? `Tel. ${a.phone}` : '', a.email ?? ''].filter((l) => cleanText(l));
}

/** A document's pages so far, the one being drawn, and the baseline reached on it. */
interface Flow {
  pages: Sheet[];
  s: Sheet;
  y: number;
  /** Starts the next page under the shared header. */
  next(): void;
}

function flow(d: LabelData, title: string, subtitle: string): Flow {
  const f: Flow = {
    pages: [],
    s: new Sheet(),
    y: 0,
    next() {
      f.s = new Sheet();
      f.pages.push(f.s);
      f.y = header(f.s, d, title, f.pages.length === 1 ? subtitle : `${subtitle} (continued)`);
    },
  };
  f.next();
  return f;
}

/** Draws what `draw` lays out from the current baseline, on a new page if it would not fit on this one. */
function keepTogether(f: Flow, draw: (s: Sheet, y: number) => number): void {
  const height = draw(new Sheet(), 0);
  if (f.y + height > BOTTOM) f.next();
  f.y = draw(f.s, f.y);
}

/** The pages as drawings, numbered when there are several. */
function drawings(f: Flow, title: string, createdAt: string): Drawing[] {
  return f.pages.map((s, n) => {
    if (f.pages.length > 1) s.text(W - M, H - M + 6, `Page ${n + 1} of ${f.pages.length}`, 8, { anchor: 'end' });
    return { widthPt: W, heightPt: H, primitives: s.primitives, meta: { title, createdAt } };
  });
}

/** A titled box of lines; returns its bottom. */
function block(s: Sheet, title: string, lines: string[], x: number, y: number, w: number): number {
  s.text(x + 4, y + 10, title, 7, { bold: true, maxWidth: w - 8 });
  let yy = y + 22;
  for (const l of lines) {
    s.text(x + 4, yy, l, 9, { maxWidth: w - 8, minSize: 6 });
    yy += 11;
  }
  const bottom = yy + 2;
  s.box(x, y, w, bottom - y, { stroke: 0.75 });
  return bottom;
}

/** The header every document shares: title, form name, the waybill number and its barcode. */
function header(s: Sheet, d: LabelData, title: string, subtitle: string): number {
  s.text(M, M + 18, title, 15, { bold: true, maxWidth: 260 });
  s.text(M, M + 34, subtitle, 9, { maxWidth: 260 });
  const tn = asciiText(d.trackingNumber);
  s.text(W - M, M + 10, `Waybill / tracking number: ${tn}`, 9, { anchor: 'end', maxWidth: 240 });
  s.barcode(linearBarcode('code128', tn || '0', { x: W - M - 240, y: M + 16, w: 240, h: 34 }, 2));
  s.text(W - M, M + 62, d.serviceName, 8, { anchor: 'end', maxWidth: 240 });
  return M + 72;
}

interface Column {
  title: string;
  w: number;
  align?: 'end';
  /** Broken over up to three lines instead of shrunk and cut (the description). */
  wrap?: true;
  value: (item: Customs['items'][number], i: number) => string;
}

/** The items table, its head repeated on every page it continues on. */
function itemsTable(f: Flow, customs: Customs, columns: Column[]): void {
  const head = () => {
    let x = M;
    f.s.line(M, f.y, W - M, f.y, 0.75);
    for (const c of columns) {
      f.s.text(c.align ? x + c.w - 3 : x + 3, f.y + 11, c.title, 7, { bold: true, anchor: c.align === 'end' ? 'end' : 'start', maxWidth: c.w - 6 });
      x += c.w;
    }
    f.y += 16;
    f.s.line(M, f.y, W - M, f.y, 0.5);
  };
  head();
  customs.items.forEach((item, i) => {
    const cells = columns.map((c) => (c.wrap ? wrapText(cleanText(c.value(item, i)), c.w - 6, 8, 3) : [c.value(item, i)]));
    const height = Math.max(...cells.map((lines) => lines.length)) * LEAD + 3;
    if (f.y + height > BOTTOM) {
      f.s.line(M, f.y + 2, W - M, f.y + 2, 0.75);
      f.next();
      f.y += 4;
      head();
    }
    let x = M;
    columns.forEach((c, k) => {
      for (const [n, line] of cells[k]!.entries()) {
        f.s.text(c.align ? x + c.w - 3 : x + 3, f.y + 10 + n * LEAD, line, 8, { anchor: c.align === 'end' ? 'end' : 'start', maxWidth: c.w - 6, minSize: 5 });
      }
      x += c.w;
    });
    f.y += height;
  });
  f.s.line(M, f.y + 2, W - M, f.y + 2, 0.75);
  f.y += 2;
}

function categories(s: Sheet, c: Customs, y: number): number {
  s.text(M, y + 10, 'Category of item:', 8, { bold: true });
  let x = M + 90;
  for (const [type, name] of CATEGORIES) {
    s.box(x, y + 2, 9, 9, { stroke: 0.75 });
    if (c.contentsType === type) s.text(x + 4.5, y + 10, 'X', 8, { bold: true, anchor: 'middle' });
    s.text(x + 13, y + 10, name, 8, { maxWidth: 90 });
    x += 13 + name.length * 4.6 + 10;
  }
  let yy = y + 24;
  if (c.contentsExplanation) {
    s.text(M, yy, `Explanation: ${c.contentsExplanation}`, 8, { maxWidth: W - 2 * M });
    yy += 12;
  }
  return yy;
}

function references(c: Customs, d: LabelData): string[] {
  return [
    `Incoterm: ${c.incoterm ?? 'DAP'}`,
    `Invoice number: ${c.invoiceNumber ?? d.trackingNumber}`,
    `Licence number: ${c.licenceNumber ?? '-'}`,
    `Certificate number: ${c.certificateNumber ?? '-'}`,
    `Importer's VAT / tax number: ${c.importerVat ?? '-'}`,
    `Sender's EORI number: ${c.eori ?? '-'}`,
    ...(c.ioss ? [`IOSS number: ${c.ioss}`] : []),
    ...(eeiCitation(c, d.from, d.to) ? [`US export, EEI: ${eeiCitation(c, d.from, d.to)}`] : []),
    ...(d.originalExport ? [`Returned goods: exported under waybill ${d.originalExport.trackingNumber} on ${d.originalExport.shipDate.slice(0, 10)}`] : []),
  ];
}

/** The declaration, the date and the signer; returns the bottom. */
function signature(s: Sheet, d: LabelData, c: Customs, y: number, declaration: string): number {
  const lines = wrapText(declaration, W - 2 * M, 8, 4);
  for (const [i, l] of lines.entries()) s.text(M, y + i * 10, l, 8, { maxWidth: W - 2 * M, minSize: 6 });
  const yy = y + lines.length * 10 + 14;
  s.text(M, yy, `Date: ${d.shipDate.slice(0, 10)}`, 9);
  s.text(M + 160, yy, `Signature of the sender: ${c.signer}`, 9, { maxWidth: W - 2 * M - 160 });
  s.line(M + 160, yy + 4, W - M, yy + 4, 0.5);
  return yy + 4;
}

function declarationForm(d: LabelData, c: Customs, form: 'CN 22' | 'CN 23'): Drawing[] {
  const f = flow(d, `CUSTOMS DECLARATION ${form}`, `May be opened officially. Designated operator: ${d.carrier}.`);
  const half = (W - 2 * M - 10) / 2;
  const bottom = Math.max(block(f.s, 'From (sender)', addressLines(d.from), M, f.y, half), block(f.s, 'To (addressee)', addressLines(d.to), M + half + 10, f.y, half));
  f.y = categories(f.s, c, bottom + 8) + 4;
  const total = totalValue(c);
  // Every weight in kilograms, as the UPU's forms ask.
  const net = netWeights(c.items, () => 'kg', 'kg');
  itemsTable(f, c, [
    { title: 'Detailed description of contents', w: 170, wrap: true, value: (i) => i.description },
    { title: 'Quantity', w: 45, align: 'end', value: (i) => String(i.quantity) },
    { title: 'Net weight (kg)', w: 60, align: 'end', value: (_, n) => net.lines[n]! },
    { title: `Value (${total.currency})`, w: 70, align: 'end', value: (i) => money(i.value.amount, i.value.currency) },
    { title: 'HS tariff number', w: 90, value: (i) => i.hsCode },
    { title: 'Country of origin', w: W - 2 * M - 435, value: (i) => `${i.originCountry} ${countryName(i.originCountry)}` },
  ]);
  keepTogether(f, (s, y) => {
    s.text(M, y + 14, `Total net weight: ${net.total} ${net.unit}`, 9, { bold: true });
    s.text(M + 170, y + 14, `Total gross weight: ${grossText(d.parcel.weight, net)}`, 9, { bold: true });
    s.text(W - M, y + 14, `Total value: ${money(total.amount, total.currency)}`, 9, { bold: true, anchor: 'end' });
    s.text(M, y + 28, `Currency: ${total.currency}`, 9);
    y += 44;
    for (const line of references(c, d)) {
      s.text(M, y, line, 8.5, { maxWidth: W - 2 * M });
      y += 11;
    }
    if (form === 'CN 23') {
      s.text(M, y + 4, `Instructions in case of non-delivery: ${(c.nonDelivery ?? 'return') === 'return' ? 'Return to sender' : 'Treat as abandoned'}`, 8.5, { maxWidth: W - 2 * M });
      y += 16;
    }
    return signature(s, d, c, y + 12, 'I, the undersigned, certify that the particulars given in this declaration are correct and that this item does not contain any dangerous article or articles prohibited by legislation or by postal or customs regulations.');
  });
  return drawings(f, `${form} ${cleanText(d.trackingNumber)}`, d.shipDate);
}

function commercialInvoice(d: LabelData, c: Customs): Drawing[] {
  const f = flow(d, 'COMMERCIAL INVOICE', `Invoice number ${c.invoiceNumber ?? d.trackingNumber}, date ${d.shipDate.slice(0, 10)}`);
  const half = (W - 2 * M - 10) / 2;
  const shipper = [...addressLines(d.from), ...(c.eori ? [`EORI: ${c.eori}`] : []), ...(c.ioss ? [`IOSS: ${c.ioss}`] : [])];
  const consignee = [...addressLines(d.to), ...(c.importerVat ? [`VAT / tax number: ${c.importerVat}`] : [])];
  const y = Math.max(block(f.s, 'Shipper / exporter', shipper, M, f.y, half), block(f.s, 'Consignee / importer', consignee, M + half + 10, f.y, half)) + 8;
  const reason = CATEGORIES.find(([t]) => t === c.contentsType)![1];
  f.s.text(M, y + 10, `Reason for export: ${reason}${c.contentsExplanation ? ` (${c.contentsExplanation})` : ''}`, 9, { maxWidth: W - 2 * M });
  f.s.text(M, y + 23, `Terms of delivery (Incoterm): ${c.incoterm ?? 'DAP'}`, 9);
  f.s.text(W - M, y + 23, `Waybill number: ${d.trackingNumber}`, 9, { anchor: 'end' });
  f.y = y + 32;
  // Each line in its own unit, both totals in the parcel's, so that they compare.
  const net = netWeights(c.items, (w) => w.unit, d.parcel.weight.unit);
  itemsTable(f, c, [
    { title: 'Description', w: 150, wrap: true, value: (i) => i.description },
    { title: 'HS code', w: 70, value: (i) => i.hsCode },
    { title: 'Origin', w: 45, value: (i) => i.originCountry },
    { title: 'Quantity', w: 45, align: 'end', value: (i) => String(i.quantity) },
    { title: 'Net weight', w: 55, align: 'end', value: (_, n) => net.lines[n]! },
    { title: 'Unit value', w: 70, align: 'end', value: (i) => unitMoney(i.value.amount, i.quantity, i.value.currency) },
    { title: 'Total value', w: W - 2 * M - 435, align: 'end', value: (i) => money(i.value.amount, i.value.currency) },
  ]);
  const total = totalValue(c);
  keepTogether(f, (s, y) => {
    s.text(W - M, y + 14, `Invoice total: ${money(total.amount, total.currency)}`, 10, { bold: true, anchor: 'end' });
    s.text(M, y + 14, `Currency: ${total.currency}`, 9);
    s.text(M, y + 28, `Total net weight: ${net.total} ${net.unit}   Gross weight: ${grossText(d.parcel.weight, net)}   Packages: 1`, 9);
    y += 44;
    for (const line of references(c, d).slice(2)) {
      s.text(M, y, line, 8.5, { maxWidth: W - 2 * M });
      y += 11;
    }
    return signature(s, d, c, y + 12, 'I declare that the information on this invoice is true and correct and that the contents of this shipment are as stated above.');
  });
  return drawings(f, `Commercial invoice ${cleanText(d.trackingNumber)}`, d.shipDate);
}

/** The document's pages: one, or more when its items do not fit on one. */
export function layoutCustomsDocument(data: CustomsDocumentData): Drawing[] {
  const c = data.label.customs;
  if (!c) throw new Error('the label has no customs declaration');
  switch (data.document) {
    case 'cn22': return declarationForm(data.label, c, 'CN 22');
    case 'cn23': return declarationForm(data.label, c, 'CN 23');
    case 'commercial_invoice': return commercialInvoice(data.label, c);
  }
}

/**
 * The customs papers of a print file (§11, §12): each label's documents in the labels' order, the set
 * of each parcel `copies` times over (declaration, invoice, declaration, invoice), so that a parcel's
 * papers come off the printer together; labels without customs have none.
 */
export function* customsPages(labels: Iterable<LabelData>, copies = 1): Generator<Drawing> {
  for (const label of labels) {
    const documents = documentsFor(label);
    for (let copy = 0; copy < copies; copy++) for (const document of documents) yield* layoutCustomsDocument({ document, label });
  }
}

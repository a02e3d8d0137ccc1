// The customs documents of a label (contract §12): the UPU's CN22 and CN23 declarations and a
// commercial invoice, on A4, laid out in the one drawing model like everything else. Every field is
// text (pdftotext reads it back) and the tracking number is the waybill number, printed and as a
// Code 128 barcode.
import { grams, totalValue, type Customs } from '../../carriers/customs.ts';
import type { Address } from '../../carriers/types.ts';
import { countryName } from '../../countries.ts';
import { linearBarcode } from '../barcodes.ts';
import type { LabelData } from '../label.ts';
import type { Drawing } from '../model.ts';
import { asciiText, cleanText } from '../text.ts';
import { Sheet } from './label.ts';

export const CUSTOMS_DOCUMENTS = ['cn22', 'cn23', 'commercial_invoice'] as const;
export type CustomsDocument = (typeof CUSTOMS_DOCUMENTS)[number];

export interface CustomsDocumentData {
  document: CustomsDocument;
  label: LabelData;
}

const W = 595.28;
const H = 841.89;
const M = 40;

const CATEGORIES: [Customs['contentsType'], string][] = [
  ['gift', 'Gift'],
  ['documents', 'Documents'],
  ['sample', 'Commercial sample'],
  ['returned_goods', 'Returned goods'],
  ['merchandise', 'Sale of goods'],
  ['other', 'Other'],
];

function money(amount: number, currency: string): string {
  return `${amount.toFixed(2)} ${currency}`;
}

function weightText(w: { value: number; unit: string }): string {
  return `${Math.round(w.value * 1000) / 1000} ${w.unit}`;
}

function addressLines(a: Address): string[] {
  return [a.name, a.company ?? '', a.street1, a.street2 ?? '', [a.postalCode, a.city, a.state].filter(Boolean).join(' '), countryName(cleanText(a.country)), a.phone ? `Tel. ${a.phone}` : '', a.email ?? ''].filter((l) => cleanText(l));
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
  s.text(W - M, M + 62, `${d.carrier} ${d.serviceName}`, 8, { anchor: 'end', maxWidth: 240 });
  return M + 72;
}

interface Column {
  title: string;
  w: number;
  align?: 'end';
  value: (item: Customs['items'][number], i: number) => string;
}

/** The items table; returns its bottom. */
function itemsTable(s: Sheet, customs: Customs, columns: Column[], y: number): number {
  const x0 = M;
  let x = x0;
  s.line(M, y, W - M, y, 0.75);
  for (const c of columns) {
    s.text(c.align ? x + c.w - 3 : x + 3, y + 11, c.title, 7, { bold: true, anchor: c.align === 'end' ? 'end' : 'start', maxWidth: c.w - 6 });
    x += c.w;
  }
  let yy = y + 16;
  s.line(M, yy, W - M, yy, 0.5);
  customs.items.forEach((item, i) => {
    x = x0;
    for (const c of columns) {
      s.text(c.align ? x + c.w - 3 : x + 3, yy + 10, c.value(item, i), 8, { anchor: c.align === 'end' ? 'end' : 'start', maxWidth: c.w - 6, minSize: 5 });
      x += c.w;
    }
    yy += 13;
  });
  s.line(M, yy + 2, W - M, yy + 2, 0.75);
  return yy + 2;
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
  ];
}

/** Words on lines of at most `chars` characters. */
function wrap(text: string, chars: number): string[] {
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines[lines.length - 1];
    if (last !== undefined && last.length + 1 + word.length <= chars) lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}

function signature(s: Sheet, d: LabelData, c: Customs, y: number, declaration: string): void {
  const lines = wrap(declaration, 110);
  for (const [i, l] of lines.entries()) s.text(M, y + i * 10, l, 8, { maxWidth: W - 2 * M, minSize: 6 });
  const yy = y + lines.length * 10 + 14;
  s.text(M, yy, `Date: ${d.shipDate.slice(0, 10)}`, 9);
  s.text(M + 160, yy, `Signature of the sender: ${c.signer}`, 9, { maxWidth: W - 2 * M - 160 });
  s.line(M + 160, yy + 4, W - M, yy + 4, 0.5);
}

function declarationForm(d: LabelData, c: Customs, form: 'CN 22' | 'CN 23'): Drawing {
  const s = new Sheet();
  const cn23 = form === 'CN 23';
  let y = header(s, d, `CUSTOMS DECLARATION ${form}`, `May be opened officially. Designated operator: ${d.carrier}.`);
  const half = (W - 2 * M - 10) / 2;
  const bottom = Math.max(block(s, 'From (sender)', addressLines(d.from), M, y, half), block(s, 'To (addressee)', addressLines(d.to), M + half + 10, y, half));
  y = categories(s, c, bottom + 8);
  const currency = totalValue(c).currency;
  y = itemsTable(s, c, [
    { title: 'Detailed description of contents', w: 170, value: (i) => i.description },
    { title: 'Quantity', w: 45, align: 'end', value: (i) => String(i.quantity) },
    { title: 'Net weight', w: 60, align: 'end', value: (i) => weightText(i.netWeight) },
    { title: `Value (${currency})`, w: 70, align: 'end', value: (i) => money(i.value.amount, i.value.currency) },
    { title: 'HS tariff number', w: 90, value: (i) => i.hsCode },
    { title: 'Country of origin', w: W - 2 * M - 435, value: (i) => `${i.originCountry} ${countryName(i.originCountry)}` },
  ], y + 4);
  const total = totalValue(c);
  const net = c.items.reduce((sum, i) => sum + grams(i.netWeight), 0);
  s.text(M, y + 14, `Total net weight: ${Math.round(net)} g`, 9, { bold: true });
  s.text(M + 170, y + 14, `Total gross weight: ${weightText(d.parcel.weight)}`, 9, { bold: true });
  s.text(W - M, y + 14, `Total value: ${money(total.amount, total.currency)}`, 9, { bold: true, anchor: 'end' });
  s.text(M, y + 28, `Currency: ${total.currency}`, 9);
  y += 44;
  for (const line of references(c, d)) {
    s.text(M, y, line, 8.5, { maxWidth: W - 2 * M });
    y += 11;
  }
  if (cn23) {
    s.text(M, y + 4, `Instructions in case of non-delivery: ${(c.nonDelivery ?? 'return') === 'return' ? 'Return to sender' : 'Treat as abandoned'}`, 8.5, { maxWidth: W - 2 * M });
    y += 16;
  }
  signature(s, d, c, y + 12, 'I, the undersigned, certify that the particulars given in this declaration are correct and that this item does not contain any dangerous article or articles prohibited by legislation or by postal or customs regulations.');
  return { widthPt: W, heightPt: H, primitives: s.primitives, meta: { title: `${form} ${cleanText(d.trackingNumber)}`, createdAt: d.shipDate } };
}

function commercialInvoice(d: LabelData, c: Customs): Drawing {
  const s = new Sheet();
  let y = header(s, d, 'COMMERCIAL INVOICE', `Invoice number ${c.invoiceNumber ?? d.trackingNumber}, date ${d.shipDate.slice(0, 10)}`);
  const half = (W - 2 * M - 10) / 2;
  const shipper = [...addressLines(d.from), ...(c.eori ? [`EORI: ${c.eori}`] : [])];
  const consignee = [...addressLines(d.to), ...(c.importerVat ? [`VAT / tax number: ${c.importerVat}`] : [])];
  y = Math.max(block(s, 'Shipper / exporter', shipper, M, y, half), block(s, 'Consignee / importer', consignee, M + half + 10, y, half)) + 8;
  const reason = CATEGORIES.find(([t]) => t === c.contentsType)![1];
  s.text(M, y + 10, `Reason for export: ${reason}${c.contentsExplanation ? ` (${c.contentsExplanation})` : ''}`, 9, { maxWidth: W - 2 * M });
  s.text(M, y + 23, `Terms of delivery (Incoterm): ${c.incoterm ?? 'DAP'}`, 9);
  s.text(W - M, y + 23, `Waybill number: ${d.trackingNumber}`, 9, { anchor: 'end' });
  y = itemsTable(s, c, [
    { title: 'Description', w: 150, value: (i) => i.description },
    { title: 'HS code', w: 70, value: (i) => i.hsCode },
    { title: 'Origin', w: 45, value: (i) => i.originCountry },
    { title: 'Quantity', w: 45, align: 'end', value: (i) => String(i.quantity) },
    { title: 'Net weight', w: 55, align: 'end', value: (i) => weightText(i.netWeight) },
    { title: 'Unit value', w: 70, align: 'end', value: (i) => money(i.value.amount / i.quantity, i.value.currency) },
    { title: 'Total value', w: W - 2 * M - 435, align: 'end', value: (i) => money(i.value.amount, i.value.currency) },
  ], y + 32);
  const total = totalValue(c);
  s.text(W - M, y + 14, `Invoice total: ${money(total.amount, total.currency)}`, 10, { bold: true, anchor: 'end' });
  s.text(M, y + 14, `Currency: ${total.currency}`, 9);
  s.text(M, y + 28, `Gross weight: ${weightText(d.parcel.weight)}   Packages: 1`, 9);
  y += 44;
  for (const line of references(c, d).slice(2)) {
    s.text(M, y, line, 8.5, { maxWidth: W - 2 * M });
    y += 11;
  }
  signature(s, d, c, y + 12, 'I declare that the information on this invoice is true and correct and that the contents of this shipment are as stated above.');
  return { widthPt: W, heightPt: H, primitives: s.primitives, meta: { title: `Commercial invoice ${cleanText(d.trackingNumber)}`, createdAt: d.shipDate } };
}

export function layoutCustomsDocument(data: CustomsDocumentData): Drawing {
  const c = data.label.customs;
  if (!c) throw new Error('the label has no customs declaration');
  switch (data.document) {
    case 'cn22': return declarationForm(data.label, c, 'CN 22');
    case 'cn23': return declarationForm(data.label, c, 'CN 23');
    case 'commercial_invoice': return commercialInvoice(data.label, c);
  }
}

// The end-of-day manifest (contract §14): one document that stands for every parcel handed to the
// carrier. US Letter pages: the shipper, the date, the carrier, a count and weight per service, the
// totals, and the manifest's own number printed and as one Code 128 barcode; then every tracking
// number, on as many pages as it takes. For USPS it carries the content of the SCAN form (PS Form
// 5630, Shipment Confirmation Acceptance Notice).
import type { Address } from '../../carriers/types.ts';
import { linearBarcode } from '../barcodes.ts';
import type { Drawing } from '../model.ts';
import { postalLines } from './address.ts';
import { Sheet } from './label.ts';

export interface ManifestData {
  number: string;
  carrier: string;
  /** RFC 3339. */
  createdAt: string;
  shipper: Address;
  /** Per service, in the order first seen: count and total weight in grams. */
  services: { name: string; count: number; grams: number }[];
  trackingNumbers: string[];
}

const W = 612;
const H = 792;
const M = 40;
const COLUMNS = 3;
const ROW = 12;

function kg(grams: number): string {
  return `${(grams / 1000).toFixed(2)} kg (${(grams / 453.59237).toFixed(2)} lb)`;
}

/** The manifest's pages: a first page with the summary and the first tracking numbers, then lists. */
export function layoutManifest(d: ManifestData): Drawing[] {
  const usps = d.carrier === 'USPS';
  const total = d.services.reduce((a, s) => ({ count: a.count + s.count, grams: a.grams + s.grams }), { count: 0, grams: 0 });
  const pages: Drawing[] = [];
  let s = new Sheet();
  s.text(M, M + 16, usps ? 'USPS SCAN FORM - PS Form 5630' : `${d.carrier} END OF DAY MANIFEST`, 16, { bold: true, maxWidth: 330 });
  s.text(M, M + 32, usps ? 'Shipment Confirmation Acceptance Notice' : 'Shipment manifest: one form for every parcel handed over', 9, { maxWidth: 330 });
  s.barcode(linearBarcode('code128', d.number, { x: W - M - 220, y: M, w: 220, h: 40 }, 2));
  s.text(W - M - 110, M + 52, `Manifest number: ${d.number}`, 9, { bold: true, anchor: 'middle', maxWidth: 220 });
  const date = d.createdAt.slice(0, 10);
  // The carrier takes the parcels in the shipper's own country: its address as that post reads it, no country line.
  const shipper = postalLines(d.shipper, false);
  let y = M + 80;
  s.text(M, y, usps ? 'Mailer name and address' : 'Shipper', 8, { bold: true });
  for (const line of shipper) {
    y += 12;
    s.text(M, y, line, 10, { maxWidth: 300 });
  }
  s.text(W - M - 220, M + 80, `Carrier: ${d.carrier}`, 10, { maxWidth: 220 });
  s.text(W - M - 220, M + 94, `Date: ${date}`, 10, { maxWidth: 220 });
  s.text(W - M - 220, M + 108, `${usps ? 'Total number of packages' : 'Parcels'}: ${total.count}`, 10, { bold: true, maxWidth: 220 });
  s.text(W - M - 220, M + 122, `Total weight: ${kg(total.grams)}`, 10, { maxWidth: 220 });
  y += 24;
  s.line(M, y, W - M, y, 0.75);
  s.text(M, y + 12, 'Service', 8, { bold: true });
  s.text(M + 300, y + 12, 'Parcels', 8, { bold: true, anchor: 'end' });
  s.text(W - M, y + 12, 'Weight', 8, { bold: true, anchor: 'end' });
  y += 16;
  for (const svc of d.services) {
    y += 12;
    s.text(M, y, svc.name, 9, { maxWidth: 250 });
    s.text(M + 300, y, String(svc.count), 9, { anchor: 'end' });
    s.text(W - M, y, kg(svc.grams), 9, { anchor: 'end' });
  }
  s.line(M, y + 4, W - M, y + 4, 0.75);
  y += 12;
  if (usps) {
    const note = 'Postmaster: scan the barcode above for every package listed below: it records the acceptance of each of them, which then need no scan of their own.';
    s.text(M, y + 12, note, 7.5, { maxWidth: W - 2 * M, minSize: 5 });
    s.text(M, y + 24, 'Signature of the receiving employee: ____________________   Date and time of receipt: ____________', 8, { maxWidth: W - 2 * M });
    y += 30;
  }
  s.text(M, y + 18, `Tracking numbers (${d.trackingNumbers.length})`, 9, { bold: true });
  y += 24;
  // Three columns of tracking numbers, continued on further pages.
  let i = 0;
  const colW = (W - 2 * M) / COLUMNS;
  while (i < d.trackingNumbers.length) {
    const rows = Math.floor((H - M - 20 - y) / ROW);
    for (let c = 0; c < COLUMNS && i < d.trackingNumbers.length; c++) {
      for (let r = 0; r < rows && i < d.trackingNumbers.length; r++, i++) {
        s.text(M + c * colW, y + (r + 1) * ROW, `${i + 1}. ${d.trackingNumbers[i]}`, 8.5, { maxWidth: colW - 6 });
      }
    }
    pages.push({ widthPt: W, heightPt: H, primitives: s.primitives });
    if (i < d.trackingNumbers.length) {
      s = new Sheet();
      s.text(M, M + 12, `Manifest ${d.number} (${d.carrier}, ${date}), continued`, 9, { bold: true, maxWidth: W - 2 * M });
      y = M + 20;
    }
  }
  if (pages.length === 0) pages.push({ widthPt: W, heightPt: H, primitives: s.primitives });
  const meta = { title: `${d.carrier} manifest ${d.number}`, createdAt: d.createdAt };
  pages.forEach((p, n) => {
    p.meta = meta;
    p.primitives.push({ kind: 'text', x: W - M, y: H - 24, size: 8, text: `Page ${n + 1} of ${pages.length}`, anchor: 'end' });
  });
  return pages;
}

// What a scanner must read from each carrier's label, written from docs/labels.md, not from the
// renderer's code.
import assert from 'node:assert/strict';
import type { LabelData } from '../../src/render/index.ts';
import type { Scanned } from './scan.ts';

const GS = '\x1d';

function zip5(d: LabelData): string {
  return (d.to.postalCode ?? '').replace(/\D/g, '').slice(0, 5);
}

function postal(d: LabelData): string {
  return (d.to.postalCode ?? '').toUpperCase().replace(/[^A-Z0-9]/g, '');
}

export interface Expected {
  format: string;
  what: string;
  test: (text: string) => boolean;
}

/** The linear barcodes and the 2D symbol (MaxiCode is read separately: it needs a clean crop). */
export function expectedBarcodes(d: LabelData): Expected[] {
  const tn = d.trackingNumber;
  switch (d.carrier) {
    case 'UPS':
      return [
        { format: 'Code128', what: 'tracking number', test: (t) => t === tn },
        { format: 'Code128', what: 'GS1-128 (420) destination ZIP', test: (t) => t === `420${zip5(d)}` },
      ];
    case 'USPS':
      if (!/^\d+$/.test(tn)) {
        return [
          { format: 'Code128', what: 'S10 tracking number', test: (t) => t === tn },
          { format: 'DataMatrix', what: 'DataMatrix of the S10 number', test: (t) => t === tn },
        ];
      }
      return [
        { format: 'Code128', what: 'GS1-128 (420) ZIP + IMpb', test: (t) => t === `420${zip5(d)}${GS}${tn}` },
        { format: 'DataMatrix', what: 'GS1 DataMatrix (420) ZIP + IMpb', test: (t) => t === `420${zip5(d)}${GS}${tn}` },
      ];
    case 'FedEx':
      return [
        { format: 'Code128', what: 'tracking number', test: (t) => t === tn },
        {
          format: 'PDF417',
          what: 'PDF417 with postal code, tracking number',
          test: (t) => t.startsWith(`[)>\x1e01${GS}02${postal(d)}${GS}840${GS}`) && t.includes(`${GS}${tn}${GS}`),
        },
      ];
    case 'DHL':
      return [
        { format: 'Code128', what: 'waybill number', test: (t) => t === tn },
        { format: 'Code128', what: 'routing barcode 2L + country + postal code', test: (t) => t === `2L${d.to.country}${postal(d)}` },
        {
          format: 'DataMatrix',
          what: 'DataMatrix with waybill and routing',
          test: (t) => t.includes(`J${tn}${GS}`) && t.includes(`2L${d.to.country}${postal(d)}`),
        },
      ];
  }
}

/** The UPS MaxiCode: structured carrier message with postal code, country, service class, tracking number. */
export function expectedMaxiCode(d: LabelData): (text: string) => boolean {
  const us = d.to.country === 'US';
  const p = us ? postal(d).padEnd(9, '0') : postal(d).slice(0, 6);
  return (t) => t.startsWith(`[)>\x1e01${GS}96${p}${GS}${us ? '840' : ''}`) && t.includes(`${GS}${d.trackingNumber}${GS}UPSN${GS}`);
}

/** Every expected symbol is among the scanned ones. */
export function assertAllRead(scanned: Scanned[], expected: Expected[], where: string): void {
  for (const e of expected) {
    assert.ok(
      scanned.some((s) => s.format === e.format && e.test(s.text)),
      `${where}: ${e.what} (${e.format}) not read; got ${JSON.stringify(scanned)}`,
    );
  }
}

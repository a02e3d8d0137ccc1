// The stamp laid out once, in points, as a 3 x 2 in drawing: the indicium as a DataMatrix on the
// left; "POSTAGE PAID" (no amount), carrier, issue date, origin postal code and serial beside it.
import { dataMatrix } from '../barcodes.ts';
import type { Drawing, Primitive } from '../model.ts';
import { cleanText, fitText } from '../text.ts';

export const STAMP_SIZE = { widthPt: 216, heightPt: 144 } as const;

export interface StampFace {
  serial: string;
  carrier: string;
  originPostalCode: string;
  /** RFC 3339; the stamp shows its UTC date. */
  issuedAt: string;
  /** The compact JWS carried by the DataMatrix. */
  indicium: string;
}

export function layoutStamp(face: StampFace): Drawing {
  const { widthPt: W, heightPt: H } = STAMP_SIZE;
  const out: Primitive[] = [];
  const text = (x: number, y: number, raw: string, size: number, maxWidth: number, o: { bold?: boolean; anchor?: 'start' | 'end' } = {}) => {
    const fitted = fitText(cleanText(raw), maxWidth, size, o.bold ?? false, size * 0.6);
    if (!fitted.text) return;
    out.push({ kind: 'text', x, y, size: fitted.size, text: fitted.text, ...(o.bold ? { bold: true } : {}), ...(o.anchor === 'end' ? { anchor: 'end' as const } : {}) });
  };

  out.push({ kind: 'box', x: 2, y: 2, w: W - 4, h: H - 4, stroke: 1.5 });
  text(8, 20, 'POSTAGE PAID', 14, 130, { bold: true });
  text(W - 8, 20, face.carrier, 14, 64, { bold: true, anchor: 'end' });
  out.push({ kind: 'line', x1: 2, y1: 26, x2: W - 2, y2: 26, width: 1 });

  // The matrix gets the whole left square below the header; whole-dot modules of up to 3 dots.
  out.push(dataMatrix(face.indicium, false, { x: 4, y: 28, w: 112, h: H - 32 }, 3));

  const x = 122;
  const w = W - 8 - x;
  const field = (y: number, label: string, value: string, size: number) => {
    text(x, y, label, 6, w);
    text(x, y + size + 2, value, size, w, { bold: true });
  };
  field(42, 'ISSUED (UTC)', face.issuedAt.slice(0, 10), 10);
  field(70, 'ORIGIN', face.originPostalCode, 10);
  field(98, 'SERIAL', face.serial, 9);
  text(x, H - 10, 'Scan to verify', 6, w);

  return { widthPt: W, heightPt: H, primitives: out, meta: { title: `Postage stamp ${face.serial}`, subject: 'Postage paid', createdAt: face.issuedAt } };
}

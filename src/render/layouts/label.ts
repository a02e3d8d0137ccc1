// The label laid out once, in points: addresses, banner, routing, barcodes, package details.
// Portrait (4x6, 4x8) and landscape (6x4) have their own arrangement of the same blocks;
// 8.5x11 places the 4x6 label on a letter page.
import { DOT, dataMatrix, linearBarcode, maxiCode, onDots, pdf417 } from '../barcodes.ts';
import type { Area } from '../barcodes.ts';
import {
  dhlDataMatrixMessage, fedexPdf417Message, groupTrackingNumber, maxiCodeMessage, normalPostalCode,
  printedDate, routingCodeFor, uspsImpbElementString,
} from '../content.ts';
import { countryNumeric } from '../../countries.ts';
import { placeOf } from '../../carriers/customs.ts';
import type { Address } from '../../carriers/types.ts';
import type { LabelData, LabelSize, Logo } from '../label.ts';
import type { BarcodePrimitive, Drawing, ImagePrimitive, Primitive } from '../model.ts';
import { asciiText, cleanText, fitText } from '../text.ts';
import { addressParts, crossesPostalBorder, type PartRole } from './address.ts';

const SIZES: Record<LabelSize, { w: number; h: number }> = {
  '4x6': { w: 288, h: 432 },
  '4x8': { w: 288, h: 576 },
  '6x4': { w: 432, h: 288 },
  '8.5x11': { w: 612, h: 792 },
};

interface TextOptions {
  bold?: boolean;
  anchor?: 'start' | 'middle' | 'end';
  /** Defaults to what remains to the page edge (less the margin). */
  maxWidth?: number;
  minSize?: number;
}

/** Collects primitives; every text goes through cleaning and fitting here, and only here. */
export class Sheet {
  readonly primitives: Primitive[] = [];

  text(x: number, y: number, raw: unknown, size: number, o: TextOptions = {}): void {
    const clean = cleanText(raw);
    if (!clean || !(o.maxWidth === undefined || o.maxWidth > 0)) return;
    const maxWidth = o.maxWidth ?? 1e6;
    const fitted = fitText(clean, maxWidth, size, o.bold ?? false, o.minSize);
    if (!fitted.text) return;
    this.primitives.push({ kind: 'text', x, y, size: fitted.size, text: fitted.text, ...(o.bold ? { bold: true } : {}), ...(o.anchor && o.anchor !== 'start' ? { anchor: o.anchor } : {}) });
  }

  line(x1: number, y1: number, x2: number, y2: number, width = 1): void {
    this.primitives.push({ kind: 'line', x1, y1, x2, y2, width });
  }

  box(x: number, y: number, w: number, h: number, style: { fill?: boolean; stroke?: number }): void {
    this.primitives.push({ kind: 'box', x, y, w, h, ...style });
  }

  barcode(b: BarcodePrimitive): BarcodePrimitive {
    this.primitives.push(b);
    return b;
  }

  image(p: ImagePrimitive): void {
    this.primitives.push(p);
  }
}

interface Line {
  text: string;
  size: number;
  bold?: boolean;
  /** Lower numbers are dropped first when the block has no room. */
  keep: number;
}

function addressLines(a: Address, recipient: boolean, showCountry: boolean): Line[] {
  const big = recipient ? 10.5 : 7;
  const look: Record<PartRole, Omit<Line, 'text'>> = {
    name: { size: recipient ? 11 : 7.5, bold: true, keep: 9 },
    company: { size: big, keep: 3 },
    street: { size: big, keep: 8 },
    street2: { size: big, keep: 4 },
    locality: { size: recipient ? 12 : 7.5, bold: true, keep: 9 },
    country: { size: recipient ? 11 : 7, bold: recipient, keep: 7 },
  };
  const lines: Line[] = [
    ...addressParts(a, showCountry).map((p) => ({ text: p.text, ...look[p.role] })),
    { text: a.phone ? `TEL ${a.phone}` : '', size: recipient ? 8 : 7, keep: 1 },
  ];
  return lines.filter((l) => cleanText(l.text));
}

/**
 * Draws address lines from baseline `y` downwards within `area`. Lines that do not fit at their size
 * are all made smaller alike, down to the size the label's other fine print has (`smallest`); only
 * an address that still does not fit loses lines, the least needed first (the phone before anything a
 * carrier delivers by).
 */
function addressBlock(s: Sheet, lines: Line[], area: Area, leading: number): void {
  const rows = lines.slice();
  const smallest = (l: Line): number => Math.min(l.size, 7) * 0.8;
  const height = (ls: Line[]): number => ls.reduce((h, l) => h + l.size * leading, 0);
  const fits = (ls: Line[]): number => Math.min(1, area.h / height(ls));
  while (rows.length > 1 && rows.some((l) => l.size * fits(rows) < smallest(l))) {
    let drop = 0;
    for (let i = 1; i < rows.length; i++) if (rows[i]!.keep < rows[drop]!.keep) drop = i;
    rows.splice(drop, 1);
  }
  const scale = fits(rows);
  let y = area.y;
  for (const l of rows) {
    const size = l.size * scale;
    y += size * leading * (y === area.y ? 0.85 : 1);
    s.text(area.x, y, l.text, size, { bold: l.bold ?? false, maxWidth: area.w, minSize: smallest(l) });
  }
}

function fmt(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '?';
  return String(Math.round(n * 100) / 100);
}

function weightText(d: LabelData): string {
  const unit = { g: 'G', kg: 'KG', oz: 'OZ', lb: 'LBS' }[d.parcel.weight.unit] ?? asciiText(d.parcel.weight.unit).toUpperCase();
  return `${fmt(d.parcel.weight.value)} ${unit}`;
}

function dimsText(d: LabelData): string {
  const { length, width, height } = d.parcel;
  if (length === undefined && width === undefined && height === undefined) return '';
  return `${fmt(length)} x ${fmt(width)} x ${fmt(height)} ${(d.parcel.dimensionUnit ?? 'in').toUpperCase()}`;
}

function international(d: LabelData): boolean {
  return crossesPostalBorder(d.from, d.to, d.carrier);
}

/** The 2D symbol for the carrier, fitted in `area`. */
function twoDimensional(d: LabelData, area: Area): BarcodePrimitive {
  switch (d.carrier) {
    case 'UPS': {
      // Address fields shrink until the message fits the symbol.
      for (let chars = 40; ; chars -= 8) {
        const m = maxiCodeMessage(d, Math.max(0, chars));
        try {
          return maxiCode(m.message, m.mode, area);
        } catch (e) {
          if (chars <= 0) throw e;
        }
      }
    }
    case 'FedEx':
      return pdf417(fedexPdf417Message(d), area);
    case 'DHL':
      return dataMatrix(dhlDataMatrixMessage(d), false, area);
    case 'USPS':
      // An IMpb (GS1) at home; abroad the UPU S10 number, which has no GS1 form.
      return isImpb(d) ? dataMatrix(uspsImpbElementString(d), true, area) : dataMatrix(asciiText(d.trackingNumber) || '0', false, area);
  }
}

/** Width the 2D symbol of this carrier wants next to the routing block. */
function twoDimensionalWidth(d: LabelData, available: number): number {
  return d.carrier === 'FedEx' ? Math.min(available, 150) : 86;
}

/** A USPS number in the IMpb's digits (its international services' S10 numbers have letters). */
function isImpb(d: LabelData): boolean {
  return /^\d{20,34}$/.test(d.trackingNumber);
}

/** The linear tracking barcode: Code 128 of the tracking number (USPS abroad its S10 number), USPS at home the IMpb GS1-128. */
function trackingBarcode(d: LabelData, area: Area): BarcodePrimitive {
  if (d.carrier === 'USPS' && isImpb(d)) {
    return linearBarcode('gs1-128', uspsImpbElementString(d), area);
  }
  return linearBarcode('code128', asciiText(d.trackingNumber) || '0', area);
}

/** Routing block: big routing code, then the carrier's postal/routing barcode or the postal code. */
function routingBlock(s: Sheet, d: LabelData, area: Area): void {
  const code = routingCodeFor(d);
  s.text(area.x, area.y + 20, code, 20, { bold: true, maxWidth: area.w, minSize: 9 });
  const postal = normalPostalCode(d.to.postalCode ?? "");
  const barcodeArea = { x: area.x, y: area.y + 30, w: area.w, h: Math.max(16, area.h - 42) };
  const place = placeOf(d.to);
  if (d.carrier === 'UPS' && postal) {
    const isZip = place === 'US' && /^\d{5}/.test(postal);
    const data = isZip ? `(420)${postal.slice(0, 5)}` : `(421)${countryNumeric(place)}${postal.slice(0, 9)}`;
    const b = s.barcode(linearBarcode('gs1-128', data, barcodeArea, 3));
    s.text(b.x + b.w / 2, b.y + b.h + 9, data.replace(')', ') '), 8, { anchor: 'middle', maxWidth: area.w });
  } else if (d.carrier === 'DHL' && postal) {
    const data = `2L${place}${postal.slice(0, 12)}`;
    const b = s.barcode(linearBarcode('code128', data, barcodeArea, 2));
    s.text(b.x + b.w / 2, b.y + b.h + 9, data, 8, { anchor: 'middle', maxWidth: area.w });
  } else {
    s.text(area.x, area.y + 42, postal ? `POSTAL ${postal}` : '', 12, { bold: true, maxWidth: area.w, minSize: 7 });
    s.text(area.x, area.y + 56, place, 9, { maxWidth: area.w });
  }
}


/**
 * The marks at the right end of a line with its baseline at `y`, right-aligned at `right`: RETURN
 * for a return (§13) and the customs form going with the parcel (CN22, CN23; §12), each boxed.
 * Returns the width they take.
 */
function bannerMarks(s: Sheet, d: LabelData, right: number, y: number): number {
  const marks = [...(d.isReturn ? ['RETURN'] : []), ...(d.customsForm ? [d.customsForm] : [])];
  let x = right;
  for (const mark of marks.reverse()) {
    const w = mark.length * 7.6 + 8;
    s.box(x - w, y - 12, w, 16, { stroke: 1.5 });
    s.text(x - w / 2, y, mark, 11, { bold: true, anchor: 'middle', maxWidth: w - 4 });
    x -= w + 4;
  }
  return right - x;
}

/** Whether the label carries messages or a logo, which take room from the tracking barcode. */
function customised(d: LabelData): boolean {
  return (d.messages?.length ?? 0) > 0 || d.logo !== undefined;
}

/** The logo fitted in `box` (at most 1 x 1 inch), on whole dots where it is at least one dot per pixel. */
function logoImage(s: Sheet, logo: Logo, box: Area): void {
  let cell = Math.min(box.w / logo.columns, box.h / logo.rows, DOT);
  if (cell >= DOT) cell = Math.floor(cell / DOT) * DOT;
  const w = logo.columns * cell;
  const h = logo.rows * cell;
  s.image({ kind: 'image', x: onDots(box.x + (box.w - w) / 2), y: onDots(box.y + (box.h - h) / 2), w, h, columns: logo.columns, rows: logo.rows, bits: logo.bits });
}

/** The shipper's messages, one per line, from baseline `y` down. */
function messageLines(s: Sheet, d: LabelData, x: number, y: number, w: number, size: number): void {
  for (const [i, m] of (d.messages ?? []).entries()) s.text(x, y + i * size * 1.3, m, size, { maxWidth: w, minSize: size * 0.7 });
}

function detailsBlock(s: Sheet, d: LabelData, area: Area, size = 7): void {
  const lead = size * 1.3;
  const half = area.w / 2 - 4;
  let y = area.y + size;
  s.text(area.x, y, d.reference ? `REF: ${d.reference}` : 'REF: -', size, { maxWidth: area.w });
  y += lead;
  const dims = dimsText(d);
  s.text(area.x, y, `WT: ${weightText(d)}${dims ? ` | DIMS: ${dims}` : ''}`, size, { maxWidth: area.w });
  y += lead;
  s.text(area.x, y, `SHIP DATE: ${printedDate(d.shipDate)}`, size, { maxWidth: half });
  s.text(area.x + area.w, y, `LABEL ${d.labelId}`, size - 1, { anchor: 'end', maxWidth: half });
}

/**
 * The bottom of a customised label: the details, the messages under them, and the logo in a square
 * box at the right.
 */
function customBlock(s: Sheet, d: LabelData, area: Area, size: number): void {
  const logoSide = d.logo ? Math.min(area.h, 72) : 0;
  const textW = area.w - (logoSide ? logoSide + 6 : 0);
  detailsBlock(s, d, { ...area, w: textW, h: size * 3.9 }, size);
  messageLines(s, d, area.x, area.y + size + size * 1.3 * 3, textW, size);
  if (d.logo) logoImage(s, d.logo, { x: area.x + area.w - logoSide, y: area.y, w: logoSide, h: logoSide });
}

function layoutPortrait(d: LabelData, W: number, H: number): Sheet {
  const s = new Sheet();
  const M = 8;
  const inner = W - 2 * M;
  const extra = H - 432; // 4x8 has 144 pt more
  const intl = international(d);

  // Sender, and the weight column.
  addressBlock(s, addressLines(d.from, false, intl), { x: M, y: 6, w: 176, h: 62 }, 1.2);
  s.text(W - M, 20, weightText(d), 12, { bold: true, anchor: 'end', maxWidth: 90 });
  s.text(W - M, 32, '1 OF 1', 8, { anchor: 'end', maxWidth: 90 });
  s.text(W - M, 43, printedDate(d.shipDate), 7, { anchor: 'end', maxWidth: 90 });
  const dims = dimsText(d);
  if (dims) s.text(W - M, 53, `DIMS ${dims}`, 6.5, { anchor: 'end', maxWidth: 90 });
  s.line(0, 70, W, 70, 1);

  // Recipient.
  const toTop = 72;
  const toH = 86 + extra * 0.2;
  s.text(M, toTop + 9, 'SHIP TO:', 7, { bold: true });
  addressBlock(s, addressLines(d.to, true, intl), { x: 30, y: toTop + 10, w: W - 30 - M, h: toH - 12 }, 1.12);
  const routeTop = toTop + toH;
  s.line(0, routeTop, W, routeTop, 2);

  // 2D symbol and routing.
  const routeH = 88 + extra * 0.15;
  const symW = twoDimensionalWidth(d, 170);
  s.barcode(twoDimensional(d, { x: M, y: routeTop + 3, w: symW, h: routeH - 6 }));
  routingBlock(s, d, { x: M + symW + 10, y: routeTop + 4, w: inner - symW - 10, h: routeH - 8 });
  const bannerTop = routeTop + routeH;
  s.line(0, bannerTop, W, bannerTop, 2);

  // Service banner (with the RETURN and customs form marks at its right) and tracking number.
  const marks = bannerMarks(s, d, W - M, bannerTop + 20);
  s.text(M, bannerTop + 20, d.serviceName, 16, { bold: true, maxWidth: inner - marks, minSize: 7 });
  s.text(M, bannerTop + 38, `TRACKING #: ${groupTrackingNumber(d.carrier, cleanText(d.trackingNumber))}`, 10, { bold: true, maxWidth: inner, minSize: 7 });
  const barTop = bannerTop + 44;
  s.line(0, barTop, W, barTop, 1);

  // Tracking barcode with its human-readable line; messages and a logo take 20 pt of its height.
  const custom = customised(d) ? 20 : 0;
  const barH = 60 + extra * 0.45 - custom;
  const b = s.barcode(trackingBarcode(d, { x: 0, y: barTop + 8, w: W, h: barH }));
  s.text(W / 2, b.y + b.h + 11, groupTrackingNumber(d.carrier, cleanText(d.trackingNumber)), 9, { anchor: 'middle', maxWidth: inner });
  const detailsTop = H - 44 - custom;
  s.line(0, detailsTop, W, detailsTop, 1);
  if (custom) customBlock(s, d, { x: M, y: detailsTop + 3, w: inner, h: 44 + custom - 6 }, 6.5 + extra / 144);
  else detailsBlock(s, d, { x: M, y: detailsTop + 4, w: inner, h: 36 }, 7 + extra / 144);
  return s;
}

function layoutLandscape(d: LabelData, W: number, _H: number): Sheet {
  const s = new Sheet();
  const M = 8;
  const inner = W - 2 * M;
  const colX = 220;
  const intl = international(d);

  addressBlock(s, addressLines(d.from, false, intl), { x: M, y: 4, w: colX - M - 8, h: 60 }, 1.2);
  s.text(colX, 22, d.serviceName, 14, { bold: true, maxWidth: W - M - colX, minSize: 8 });
  s.text(W - M, 40, weightText(d), 11, { bold: true, anchor: 'end', maxWidth: 100 });
  s.text(colX, 40, '1 OF 1', 8, { maxWidth: 60 });
  s.text(colX, 54, printedDate(d.shipDate), 7, { maxWidth: 80 });
  const dims = dimsText(d);
  if (dims) s.text(W - M, 54, `DIMS ${dims}`, 6.5, { anchor: 'end', maxWidth: W - M - colX - 84 });
  s.line(0, 66, W, 66, 1);

  s.text(M, 77, 'SHIP TO:', 7, { bold: true });
  addressBlock(s, addressLines(d.to, true, intl), { x: M + 8, y: 78, w: colX - M - 16, h: 78 }, 1.12);
  s.line(colX - 6, 66, colX - 6, 158, 1);
  const symW = d.carrier === 'FedEx' ? 112 : 86;
  s.barcode(twoDimensional(d, { x: colX, y: 70, w: symW, h: 84 }));
  routingBlock(s, d, { x: colX + symW + 6, y: 70, w: W - M - colX - symW - 6, h: 84 });
  s.line(0, 158, W, 158, 2);

  const marks = bannerMarks(s, d, W - M, 172);
  s.text(M, 172, `TRACKING #: ${groupTrackingNumber(d.carrier, cleanText(d.trackingNumber))}`, 10, { bold: true, maxWidth: inner - marks, minSize: 7 });
  // Messages and a logo take 14 pt of the tracking barcode's height.
  const custom = customised(d) ? 14 : 0;
  const b = s.barcode(trackingBarcode(d, { x: 0, y: 178, w: W, h: 50 - custom }));
  s.text(W / 2, b.y + b.h + 10, groupTrackingNumber(d.carrier, cleanText(d.trackingNumber)), 8, { anchor: 'middle', maxWidth: inner });
  s.line(0, 246 - custom, W, 246 - custom, 1);
  if (custom) {
    // Details at the left, messages in the middle, the logo at the right.
    const top = 249 - custom;
    const logoSide = d.logo ? 36 + custom : 0;
    const colW = (inner - logoSide - 8) / 2;
    detailsBlock(s, d, { x: M, y: top, w: colW, h: 36 + custom }, 6.5);
    messageLines(s, d, M + colW + 8, top + 6.5, colW, 6.5);
    if (d.logo) logoImage(s, d.logo, { x: W - M - logoSide, y: top, w: logoSide, h: logoSide });
  } else detailsBlock(s, d, { x: M, y: 249, w: inner, h: 36 }, 7);
  return s;
}

/** Moves every primitive by (dx, dy). */
export function translate(primitives: Primitive[], dx: number, dy: number): Primitive[] {
  return primitives.map((p) => {
    switch (p.kind) {
      case 'line': return { ...p, x1: p.x1 + dx, y1: p.y1 + dy, x2: p.x2 + dx, y2: p.y2 + dy };
      default: return { ...p, x: p.x + dx, y: p.y + dy };
    }
  });
}

/** A portrait label laid out on a page of `w` x `h` points (the positions of a print file's sheets). */
export function layoutLabelAt(data: LabelData, w: number, h: number): Drawing {
  return { widthPt: w, heightPt: h, primitives: layoutPortrait(data, w, h).primitives };
}

export function layoutLabel(data: LabelData): Drawing {
  const size: LabelSize = data.size in SIZES ? data.size : '4x6';
  const { w, h } = SIZES[size];
  const meta = { title: `${cleanText(data.carrier)} label ${cleanText(data.trackingNumber)}`, subject: cleanText(data.serviceName), createdAt: data.shipDate };
  if (size === '8.5x11') {
    // The 4x6 label centred at the top of a letter page, framed so it can be cut out; moved by whole
    // printer dots, so its barcodes keep their bars on the dot grid (§10).
    const label = layoutPortrait(data, 288, 432);
    const dx = onDots((w - 288) / 2);
    const dy = onDots(36);
    const primitives = translate(label.primitives, dx, dy);
    primitives.push({ kind: 'box', x: dx - 4, y: dy - 4, w: 296, h: 440, stroke: 0.5 });
    const s = new Sheet();
    s.text(w / 2, dy + 462, 'Cut along the frame or fold the page, and attach the label to the largest side of the package.', 9, { anchor: 'middle', maxWidth: w - 72 });
    s.text(w / 2, dy + 476, `${data.serviceName} - ${data.trackingNumber}`, 8, { anchor: 'middle', maxWidth: w - 72 });
    return { widthPt: w, heightPt: h, primitives: [...primitives, ...s.primitives], meta };
  }
  const sheet = w > h ? layoutLandscape(data, w, h) : layoutPortrait(data, w, h);
  return { widthPt: w, heightPt: h, primitives: sheet.primitives, meta };
}

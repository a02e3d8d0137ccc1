// ZPL II backend: positions in printer dots, barcodes with the printer's own encoders (^BC, ^B7,
// ^BX, ^BD) from the primitive's data, module widths in whole dots. Text in printable ASCII and
// Latin-1 uses the printer's scalable font 0 with ^CI28 (UTF-8); any other text (Cyrillic, Greek,
// Arabic, …) is rendered with DejaVu Sans and sent as a ^GF bitmap, so every printer shows it.
import { placeText } from './fonts.ts';
import type { BarcodePrimitive, Drawing, ImagePrimitive, TextPrimitive } from './model.ts';
import { packBits, rasterize } from './raster.ts';
import type { Bitmap } from './bitmap.ts';
import { PDF417_EC_LEVEL } from './barcodes.ts';

export interface ZplOptions {
  /** 203 (8 dots/mm, default) or 300 (12 dots/mm). */
  dpi: number;
}

/** ^FH escapes (with `_` as the hex indicator): ZPL's command characters and controls. */
function fieldHex(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f^~_\\]/g, (c) => `_${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
}

/**
 * GS1-128 data for ^BC mode N: start in subset C (FNC1 is `>8`), and once a letter or an odd digit
 * needs subset B (`>6`), stay in B: switching back to C (`>5`) is not read the same way by every
 * ZPL interpreter, and staying in B only costs width.
 */
export function gs1Code128Data(tokens: (string | 'FNC1')[]): string {
  const isDigit = (t: string | undefined): boolean => t !== undefined && t.length === 1 && t >= '0' && t <= '9';
  const pairAt = (i: number): boolean => isDigit(tokens[i]) && isDigit(tokens[i + 1]);
  let firstData = 0;
  while (tokens[firstData] === 'FNC1') firstData++;
  let set: 'B' | 'C' = pairAt(firstData) ? 'C' : 'B';
  let out = set === 'C' ? '>;' : '>:';
  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i]!;
    if (t === 'FNC1') {
      out += '>8';
      i++;
    } else if (set === 'C' && pairAt(i)) {
      out += t + tokens[i + 1];
      i += 2;
    } else {
      if (set === 'C') {
        out += '>6';
        set = 'B';
      }
      out += t === '>' ? '><' : t;
      i++;
    }
  }
  return out;
}

/** `(420)10001(94)00…` → FNC1, 4,2,0,1,… with FNC1 between element strings. */
function gs1Tokens(elementString: string): (string | 'FNC1')[] {
  const tokens: (string | 'FNC1')[] = [];
  const parts = [...elementString.matchAll(/\((\d{2,4})\)([^(]*)/g)];
  parts.forEach((m, i) => {
    if (i === 0) tokens.push('FNC1');
    for (const ch of m[1]! + m[2]!) tokens.push(ch);
    if (i < parts.length - 1) tokens.push('FNC1');
  });
  return tokens;
}

/** GS1 Data Matrix data with `_` as the ^BX escape character: `_1` is FNC1 (start and separators). */
function gs1DataMatrixData(elementString: string): string {
  const parts = [...elementString.matchAll(/\((\d{2,4})\)([^(]*)/g)];
  return parts.map((m) => `_1${(m[1]! + m[2]!).replace(/[^\x21-\x7e]|[_^~]/g, '')}`).join('');
}

/** ^BD data: class, country, postal code (high-priority message), then the rest after `[)>RS01GS96`. */
function maxiCodeData(b: BarcodePrimitive): { mode: number; data: string } {
  const m = /^\[\)>\x1e01\x1d96([^\x1d]*)\x1d([^\x1d]*)\x1d([^\x1d]*)\x1d([\s\S]*)$/.exec(b.data);
  if (!m) return { mode: 4, data: fieldHex(b.data) };
  const [, postal, country, service, rest] = m as unknown as [string, string, string, string, string];
  // Mode 2 is the US numeric postal code; everything else is mode 3 (as the layout chose).
  const mode = country === '840' && /^\d+$/.test(postal) ? 2 : 3;
  const hpm = `${service}${country}${mode === 2 ? postal.padEnd(9, '0') : postal.padEnd(6, ' ')}`;
  return { mode, data: fieldHex(`${hpm}[)>\x1e01\x1d96${rest}`) };
}

function barcodeZpl(b: BarcodePrimitive, k: number): string {
  const x = Math.round(b.x * k);
  const y = Math.round(b.y * k);
  const mod = Math.max(1, Math.round(b.module * k));
  const h = Math.max(1, Math.round(b.h * k));
  switch (b.symbology) {
    case 'code128':
      // Mode A: the printer picks the code sets, as bwip-js did, so the symbol has the same width.
      return `^FO${x},${y}^BY${mod}^BCN,${h},N,N,N,A^FH^FD${fieldHex(b.data)}^FS`;
    case 'gs1-128':
      return `^FO${x},${y}^BY${mod}^BCN,${h},N,N,N,N^FD${gs1Code128Data(gs1Tokens(b.data))}^FS`;
    case 'pdf417': {
      const m = b.modules;
      const columns = m.shape === 'matrix' ? Math.round((m.columns - 69) / 17) : 0;
      const rowH = m.shape === 'matrix' ? Math.max(1, Math.round(m.rowHeight * mod)) : 3 * mod;
      return `^FO${x},${y}^BY${mod}^B7N,${rowH},${PDF417_EC_LEVEL},${columns},,N^FH^FD${fieldHex(b.data)}^FS`;
    }
    case 'gs1datamatrix':
      return `^FO${x},${y}^BXN,${mod},200,0,0,6,_^FD${gs1DataMatrixData(b.data)}^FS`;
    case 'datamatrix':
      return `^FO${x},${y}^BXN,${mod},200,0,0,6^FH^FD${fieldHex(b.data)}^FS`;
    case 'maxicode': {
      const { mode, data } = maxiCodeData(b);
      return `^FO${x},${y}^BD${mode},1,1^FH^FD${data}^FS`;
    }
  }
}

/** Latin-1 text the resident font draws; anything else goes as a bitmap. */
function residentFontCan(text: string): boolean {
  return /^[\x20-\x7e\u00a0-\u00ff]*$/.test(text);
}

function textZpl(t: TextPrimitive, k: number, dpi: number): string {
  const { width, left } = placeText(t);
  if (residentFontCan(t.text)) {
    const h = Math.max(10, Math.round(t.size * k));
    // Font 0 is narrower than DejaVu Sans; middle and end anchors use a one-line field block.
    if (t.anchor === 'middle' || t.anchor === 'end') {
      const blockW = Math.round(width * k);
      return `^FT${Math.round(left * k)},${Math.round(t.y * k)}^A0N,${h},${h}^FB${blockW},1,0,${t.anchor === 'middle' ? 'C' : 'R'},0^FH^FD${fieldHex(t.text)}^FS`;
    }
    return `^FT${Math.round(left * k)},${Math.round(t.y * k)}^A0N,${h},${h}^FH^FD${fieldHex(t.text)}^FS`;
  }
  // The text rendered on its own at the printer's resolution, as a ^GF graphic field.
  const ascent = t.size * 0.95;
  const descent = t.size * 0.3;
  const img = rasterize({ widthPt: width + 1, heightPt: ascent + descent, primitives: [{ ...t, x: 0, y: ascent, anchor: 'start' }] }, dpi);
  return graphicField(img, Math.round(left * k), Math.round((t.y - ascent) * k));
}

/** A bitmap as a graphic field (`^GFA`) with its top-left corner at dot (x, y). */
function graphicField(img: Bitmap, x: number, y: number): string {
  const { rowBytes, data } = packBits(img);
  // ^GF wants 1 = black (packBits pads rows with white, which stays white).
  for (let i = 0; i < data.length; i++) data[i] = data[i]! ^ 0xff;
  return `^FO${x},${y}^GFA,${data.length},${data.length},${rowBytes},${data.toString('hex').toUpperCase()}^FS`;
}

/** A 1-bit image as the drawing's own rasteriser makes it at the printer's dots. */
function imageZpl(p: ImagePrimitive, k: number, dpi: number): string {
  const img = rasterize({ widthPt: p.w, heightPt: p.h, primitives: [{ ...p, x: 0, y: 0 }] }, dpi);
  return graphicField(img, Math.round(p.x * k), Math.round(p.y * k));
}

export function drawingToZpl(drawing: Drawing, opts: ZplOptions): string {
  const dpi = opts.dpi;
  const k = dpi / 72;
  const out: string[] = [
    '^XA',
    '^CI28',
    `^PW${Math.round(drawing.widthPt * k)}`,
    `^LL${Math.round(drawing.heightPt * k)}`,
    '^LH0,0',
    '^PON',
  ];
  for (const p of drawing.primitives) {
    switch (p.kind) {
      case 'text':
        out.push(textZpl(p, k, dpi));
        break;
      case 'line': {
        const t = Math.max(1, Math.round(p.width * k));
        const x1 = Math.round(Math.min(p.x1, p.x2) * k);
        const x2 = Math.round(Math.max(p.x1, p.x2) * k);
        const y1 = Math.round(Math.min(p.y1, p.y2) * k);
        const y2 = Math.round(Math.max(p.y1, p.y2) * k);
        if (y1 === y2) out.push(`^FO${x1},${Math.round(y1 - t / 2)}^GB${Math.max(t, x2 - x1)},${t},${t}^FS`);
        else if (x1 === x2) out.push(`^FO${Math.round(x1 - t / 2)},${y1}^GB${t},${Math.max(t, y2 - y1)},${t}^FS`);
        else out.push(`^FO${x1},${y1}^GD${x2 - x1},${y2 - y1},${t},B,${(p.x2 - p.x1) * (p.y2 - p.y1) > 0 ? 'L' : 'R'}^FS`);
        break;
      }
      case 'box': {
        const w = Math.max(1, Math.round(p.w * k));
        const h = Math.max(1, Math.round(p.h * k));
        const t = p.fill ? Math.min(w, h) : Math.max(1, Math.round((p.stroke ?? 1) * k));
        out.push(`^FO${Math.round(p.x * k)},${Math.round(p.y * k)}^GB${w},${h},${t}^FS`);
        break;
      }
      case 'barcode':
        out.push(barcodeZpl(p, k));
        break;
      case 'image':
        out.push(imageZpl(p, k, dpi));
        break;
    }
  }
  out.push('^PQ1', '^XZ');
  return `${out.join('\n')}\n`;
}

// Barcodes are encoded once, at layout time, with bwip-js `raw()`: the modules land in the drawing
// and every backend draws exactly those modules (ZPL uses the printer's own encoder on `data`).
import bwipjs from 'bwip-js';
import { createCache } from '../cache.ts';
import type { BarcodePrimitive, Symbology } from './model.ts';

/** One printer dot at 203 dpi, in points: module widths are whole dots so thermal prints are sharp. */
export const DOT = 72 / 203;

/** The nearest point on the 203 dpi dot grid (from the page's top-left corner). */
export function onDots(v: number): number {
  return Math.round(v / DOT) * DOT;
}

export interface Area {
  x: number;
  y: number;
  w: number;
  h: number;
}

type RawLinear = { sbs: number[] };
type RawMatrix = { pixs: ArrayLike<number>; pixx: number; pixy: number };

const RAW_CACHE_LIMIT = 1000;
const rawCache = createCache<string, unknown[]>({ max: RAW_CACHE_LIMIT });

/**
 * bwip-js encoding, cached: a stored label is laid out again for every format it is fetched in,
 * and encoding (Reed-Solomon for the 2D symbols) is most of a layout's time. Callers copy what
 * they keep, so cached results are never modified. A 2D symbol's modules are kept as a typed array
 * (one or two bytes each instead of a JavaScript array's eight): a full cache of PDF417 symbols as
 * plain arrays held tens of megabytes.
 */
function raw(bcid: string, text: string, opts: Record<string, unknown> = {}): unknown[] {
  const key = `${bcid}\u0000${JSON.stringify(opts)}\u0000${text}`;
  let out = rawCache.get(key);
  if (!out) {
    out = (bwipjs.raw({ bcid, text, ...opts } as Parameters<typeof bwipjs.raw>[0]) as Record<string, unknown>[]).map(compactModules);
    rawCache.set(key, out);
  }
  return out;
}

function compactModules(symbol: Record<string, unknown>): Record<string, unknown> {
  const pixs = symbol.pixs;
  if (!Array.isArray(pixs)) return symbol;
  const max = pixs.reduce((m: number, v: number) => Math.max(m, v), 0);
  return { ...symbol, pixs: max < 256 ? Uint8Array.from(pixs) : Uint16Array.from(pixs) };
}

/**
 * A Code 128 or GS1-128 symbol centred in `area` (which must include room for the 10-module quiet
 * zones), with the widest whole-dot module (at most `maxDots`) that fits.
 */
export function linearBarcode(symbology: 'code128' | 'gs1-128', data: string, area: Area, maxDots = 3): BarcodePrimitive {
  const sbs = (raw(symbology, data)[0] as RawLinear).sbs;
  const widths = sbs.slice();
  const modules = widths.reduce((a, b) => a + b, 0);
  let dots = maxDots;
  while (dots > 1 && (modules + 20) * dots * DOT > area.w) dots--;
  let module = dots * DOT;
  if ((modules + 20) * module > area.w) module = area.w / (modules + 20); // last resort: thinner than a dot
  const w = modules * module;
  return {
    kind: 'barcode',
    // On the 203 dpi dot grid, so every bar edge of a whole-dot module falls between two dots.
    x: onDots(area.x + (area.w - w) / 2),
    y: onDots(area.y),
    w,
    h: area.h,
    symbology,
    data,
    module,
    modules: { shape: 'bars', widths },
  };
}

/** A matrix symbol's rows (`pixs` holds one entry per module; a PDF417 row is several `pixy` tall). */
function matrixRows(m: RawMatrix): number {
  return m.pixs.length / m.pixx;
}

function matrixPrimitive(symbology: Symbology, data: string, m: RawMatrix, area: Area, module: number, align: 'center' | 'start'): BarcodePrimitive {
  const rows = matrixRows(m);
  const rowHeight = m.pixy / rows;
  const w = m.pixx * module;
  const h = rows * rowHeight * module;
  return {
    kind: 'barcode',
    x: onDots(align === 'center' ? area.x + (area.w - w) / 2 : area.x),
    y: onDots(area.y + (area.h - h) / 2),
    w,
    h,
    symbology,
    data,
    module,
    modules: { shape: 'matrix', columns: m.pixx, rows, rowHeight, dark: Array.from(m.pixs) },
  };
}

/** A square ECC 200 Data Matrix, as large as `area` allows with whole-dot modules (2 to `maxDots`). */
export function dataMatrix(data: string, gs1: boolean, area: Area, maxDots = 6, align: 'center' | 'start' = 'center'): BarcodePrimitive {
  const symbology = gs1 ? 'gs1datamatrix' : 'datamatrix';
  const m = raw(symbology, data)[0] as RawMatrix;
  let dots = maxDots;
  // One module of quiet zone on every side.
  while (dots > 2 && (m.pixx + 2) * dots * DOT > Math.min(area.w, area.h)) dots--;
  return matrixPrimitive(symbology, data, m, area, dots * DOT, align);
}

/** PDF417 error correction level, the same for bwip-js and the ZPL printer's encoder. */
export const PDF417_EC_LEVEL = 4;

/** PDF417's limits: rows per symbol, and data columns. */
const PDF417_MIN_ROWS = 3;
const PDF417_MAX_ROWS = 90;
const PDF417_MAX_COLUMNS = 30;

/**
 * A PDF417 symbol (rows three modules tall) filling `area` as well as possible: of module widths of 3
 * and 2 dots and every column count, the largest symbol that fits with its quiet zones. A symbol of
 * c columns has max(3, ⌈n / c⌉) rows for the message's n codewords, whatever c is; so each encoding
 * narrows down n, and most column counts' rows follow from what is known without encoding them.
 * (An encoding takes about 1 ms; encoding every column count took a dozen per FedEx label.)
 */
export function pdf417(data: string, area: Area, align: 'center' | 'start' = 'center'): BarcodePrimitive {
  const encode = (columns: number) => raw('pdf417', data, { columns, eclevel: PDF417_EC_LEVEL })[0] as RawMatrix;
  // n lies in [least, most].
  let least = 1;
  let most = Number.POSITIVE_INFINITY;
  /** The rows of a symbol of `columns` columns, if it can have at most `maxRows` (else Infinity). */
  const rowsOf = (columns: number, maxRows = PDF417_MAX_ROWS): number => {
    const low = Math.max(PDF417_MIN_ROWS, Math.ceil(least / columns));
    if (low > Math.min(maxRows, PDF417_MAX_ROWS)) return Number.POSITIVE_INFINITY;
    if (low === Math.max(PDF417_MIN_ROWS, Math.ceil(most / columns))) return low;
    try {
      const rows = matrixRows(encode(columns));
      most = Math.min(most, rows * columns);
      if (rows > PDF417_MIN_ROWS) least = Math.max(least, (rows - 1) * columns + 1);
      return rows;
    } catch {
      least = Math.max(least, PDF417_MAX_ROWS * columns + 1); // too many rows for this column count
      return Number.POSITIVE_INFINITY;
    }
  };
  const columnsThatFit = (module: number) => Math.min(PDF417_MAX_COLUMNS, Math.floor((area.w / module - 69 - 4) / 17));
  // Two columns first: their rows tell n to within 2, so the search below rarely encodes again and
  // the chosen symbol is the second encoding (a FedEx label took four). A message too long for two
  // columns (n > 180) is bounded by the most columns instead, the ones most likely to encode.
  rowsOf(2);
  if (!Number.isFinite(most)) rowsOf(Math.max(1, columnsThatFit(2 * DOT)));
  for (const dots of [3, 2]) {
    const module = dots * DOT;
    let best: { columns: number; size: number } | undefined;
    for (let columns = 1; columns <= columnsThatFit(module); columns++) {
      const rows = rowsOf(columns, Math.floor((area.h / module - 4) / 3));
      if (!Number.isFinite(rows) || (3 * rows + 4) * module > area.h) continue;
      const size = (17 * columns + 69) * 3 * rows;
      if (!best || size > best.size) best = { columns, size };
    }
    if (best) return matrixPrimitive('pdf417', data, encode(best.columns), area, module, align);
  }
  // Does not fit even at 2 dots: the smallest possible module that fits, at six columns or as few
  // more as the message needs (six hold at most 540 codewords).
  let m: RawMatrix | undefined;
  for (let columns = Math.max(6, Math.ceil(least / PDF417_MAX_ROWS)); !m; columns++) {
    try {
      m = encode(columns);
    } catch (e) {
      if (columns >= PDF417_MAX_COLUMNS) throw e;
    }
  }
  const module = Math.min(area.w / (m.pixx + 4), area.h / (m.pixy + 4));
  return matrixPrimitive('pdf417', data, m, area, module, align);
}

/** MaxiCode's hexagon pitch: 0.927 mm, which makes the nominal 1.11 x 1.054 in symbol. */
export const MAXICODE_PITCH = (0.927 / 25.4) * 72;
/** Width and height of a MaxiCode symbol in pitches. */
export const MAXICODE_WIDTH = 30.5;
export const MAXICODE_HEIGHT = 32 * (Math.sqrt(3) / 2) + 2 / Math.sqrt(3);

/** A MaxiCode (mode 2 or 3 carry the structured carrier message) at its nominal size. */
export function maxiCode(message: string, mode: 2 | 3 | 4, area: Area, align: 'center' | 'start' = 'center'): BarcodePrimitive {
  const pixs = (raw('maxicode', message, { mode })[0] as { pixs: ArrayLike<number> }).pixs;
  const module = MAXICODE_PITCH;
  const w = MAXICODE_WIDTH * module;
  const h = MAXICODE_HEIGHT * module;
  return {
    kind: 'barcode',
    x: onDots(align === 'center' ? area.x + (area.w - w) / 2 : area.x),
    y: onDots(area.y + (area.h - h) / 2),
    w,
    h,
    symbology: 'maxicode',
    data: message,
    module,
    modules: { shape: 'hexagons', dark: Array.from(pixs).sort((a, b) => a - b) },
  };
}

export interface Hexagon {
  /** Centre, relative to the symbol's top-left corner, in pitches. */
  cx: number;
  cy: number;
}

/** Centre of MaxiCode hexagon `index` (row-major in the 30 x 33 grid); odd rows sit half a pitch right. */
export function hexagonCentre(index: number): Hexagon {
  const row = Math.floor(index / 30);
  const col = index % 30;
  return { cx: col + 0.5 + (row & 1 ? 0.5 : 0), cy: 1 / Math.sqrt(3) + row * (Math.sqrt(3) / 2) };
}

/** The six corners of a MaxiCode hexagon (pointy top), scaled to 0.9 of the pitch to leave a gap. */
export function hexagonCorners(index: number): [number, number][] {
  const { cx, cy } = hexagonCentre(index);
  const r = (0.9 / Math.sqrt(3)); // circumradius of a hexagon 0.9 pitch wide
  const pts: [number, number][] = [];
  for (let k = 0; k < 6; k++) {
    const a = (Math.PI / 3) * k - Math.PI / 2;
    pts.push([cx + r * Math.cos(a), cy + r * Math.sin(a)]);
  }
  return pts;
}

/** Bullseye centre and ring radii (dark between radii[2k] and radii[2k+1]), in pitches. */
export const MAXICODE_BULLSEYE = {
  cx: 14.5,
  cy: 1 / Math.sqrt(3) + 16 * (Math.sqrt(3) / 2),
  radii: [0.5774, 1.3359, 2.1058, 2.8644, 3.6229, 4.3814],
} as const;

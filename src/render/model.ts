// The drawing model: a label (or a stamp) laid out once, in points (1/72 in), origin top-left,
// y growing downwards. Every output format is a backend that draws this list and nothing else.

export type Symbology = 'code128' | 'gs1-128' | 'maxicode' | 'pdf417' | 'datamatrix' | 'gs1datamatrix';

/**
 * The modules of a barcode, computed once at layout time (bwip-js `raw()`), so that every backend
 * draws identical bars.
 */
export type BarcodeModules =
  /** 1D: alternating bar and space widths in modules, starting with a bar (no quiet zones). */
  | { shape: 'bars'; widths: number[] }
  /** 2D matrix: `dark[row * columns + column]` is 1 for a dark module; rows are `rowHeight` modules tall. */
  | { shape: 'matrix'; columns: number; rows: number; rowHeight: number; dark: number[] }
  /** MaxiCode: the dark hexagons of the 30 x 33 grid, index = row * 30 + column; the bullseye is implied. */
  | { shape: 'hexagons'; dark: number[] };

export interface TextPrimitive {
  kind: 'text';
  /** Anchor point; `y` is the baseline. */
  x: number;
  y: number;
  /** Font size in points (DejaVu Sans). */
  size: number;
  /** Already cleaned and fitted by the layout: backends draw it as given. */
  text: string;
  bold?: boolean;
  anchor?: 'start' | 'middle' | 'end';
}

export interface LinePrimitive {
  kind: 'line';
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  width: number;
}

export interface BoxPrimitive {
  kind: 'box';
  x: number;
  y: number;
  w: number;
  h: number;
  /** Filled black. */
  fill?: boolean;
  /** Outline width in points; no outline when absent. */
  stroke?: number;
}

export interface BarcodePrimitive {
  kind: 'barcode';
  /** The symbol's box, quiet zones excluded; the layout leaves the quiet zones free around it. */
  x: number;
  y: number;
  w: number;
  h: number;
  symbology: Symbology;
  /**
   * The encoded message as given to bwip-js: GS1 element strings as `(420)10001(94)…`, other data
   * literally (MaxiCode and PDF417 carry RS/GS/EOT control characters).
   */
  data: string;
  /** The X dimension: width of one module in points (for MaxiCode the hexagon pitch). */
  module: number;
  modules: BarcodeModules;
}

/** A 1-bit picture (an account's logo), stretched over its box. */
export interface ImagePrimitive {
  kind: 'image';
  x: number;
  y: number;
  w: number;
  h: number;
  columns: number;
  rows: number;
  /** Base64 of the rows top to bottom, each padded to whole bytes, most significant bit first; 1 is dark. */
  bits: string;
}

export type Primitive = TextPrimitive | LinePrimitive | BoxPrimitive | BarcodePrimitive | ImagePrimitive;

export interface Drawing {
  widthPt: number;
  heightPt: number;
  primitives: Primitive[];
  /** Document metadata; fixed values keep the output byte-identical for the same drawing. */
  meta?: { title?: string; subject?: string; createdAt?: string };
}

/** Bytes a render thread appends to a document it hands back: its render time in seconds, a float64 (src/render/render-thread.ts). */
export const RENDER_TIME_BYTES = 8;

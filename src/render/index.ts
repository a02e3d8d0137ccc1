// Drawing documents: a layout (label, stamp, customs form, manifest) lays a document out once as
// primitives in points, and `renderDrawing` hands that drawing to the backend of the requested format.
import { layoutLabel } from './layouts/label.ts';
import { layoutStamp, type StampFace } from './layouts/stamp.ts';
import { layoutCustomsDocument, type CustomsDocumentData } from './layouts/customs.ts';
import { layoutManifest, type ManifestData } from './layouts/manifest.ts';
import type { LabelData } from './label.ts';
import type { Drawing } from './model.ts';
import { encodeBmp } from './bmp.ts';
import { encodeEmf } from './emf.ts';
import { encodeGif } from './gif.ts';
import { encodePcx } from './pcx.ts';
import { drawingToPdf, pagesToPdf } from './pdf.ts';
import { drawingToPostScript } from './postscript.ts';
import { encodePng1, encodeWithSharp, rasterize } from './raster.ts';
import { drawingToSvg } from './svg.ts';
import { drawingToZpl } from './zpl.ts';

export type { LabelData, LabelSize, Logo } from './label.ts';
export { LABEL_SIZES } from './label.ts';
export type { BarcodeModules, BarcodePrimitive, Drawing, Primitive, Symbology } from './model.ts';
export { layoutLabel } from './layouts/label.ts';
export { layoutStamp, STAMP_SIZE, type StampFace } from './layouts/stamp.ts';
export { routingCodeFor, groupTrackingNumber } from './content.ts';

export const LABEL_FORMATS = ['PDF', 'PNG', 'ZPL', 'JPEG', 'TIFF', 'SVG', 'EPS', 'BMP', 'GIF', 'WEBP', 'PCX', 'EMF', 'PS'] as const;
export type LabelFormat = (typeof LABEL_FORMATS)[number];

const MEDIA_TYPES: Record<LabelFormat, { mediaType: string; extension: string }> = {
  PDF: { mediaType: 'application/pdf', extension: 'pdf' },
  PNG: { mediaType: 'image/png', extension: 'png' },
  ZPL: { mediaType: 'application/zpl', extension: 'zpl' },
  JPEG: { mediaType: 'image/jpeg', extension: 'jpg' },
  TIFF: { mediaType: 'image/tiff', extension: 'tiff' },
  SVG: { mediaType: 'image/svg+xml', extension: 'svg' },
  EPS: { mediaType: 'application/postscript', extension: 'eps' },
  BMP: { mediaType: 'image/bmp', extension: 'bmp' },
  GIF: { mediaType: 'image/gif', extension: 'gif' },
  WEBP: { mediaType: 'image/webp', extension: 'webp' },
  PCX: { mediaType: 'image/vnd.zbrush.pcx', extension: 'pcx' },
  EMF: { mediaType: 'image/emf', extension: 'emf' },
  PS: { mediaType: 'application/postscript', extension: 'ps' },
};

export function mediaTypeOf(format: LabelFormat): string {
  return MEDIA_TYPES[format].mediaType;
}

/** The file name extension of `format`'s documents. */
export function extensionOf(format: LabelFormat): string {
  return MEDIA_TYPES[format].extension;
}

/** Formats drawn as vectors: the same bytes at every resolution. */
const RESOLUTION_FREE: ReadonlySet<LabelFormat> = new Set(['PDF', 'SVG', 'PS', 'EPS']);

/** The resolution that decides `format`'s bytes: `dpi` for raster formats and ZPL, none (203) for vector ones. */
export function effectiveDpi(format: LabelFormat, dpi: 203 | 300): 203 | 300 {
  return RESOLUTION_FREE.has(format) ? 203 : dpi;
}

export interface RenderOptions {
  /** Resolution of raster formats and ZPL: 203 (default) or 300 dpi. */
  dpi?: 203 | 300;
}

export interface RenderedDocument {
  body: Buffer;
  mediaType: string;
  extension: string;
}

export async function renderDrawing(drawing: Drawing, format: LabelFormat, opts: RenderOptions = {}): Promise<RenderedDocument> {
  const dpi = opts.dpi === 300 ? 300 : 203;
  const { mediaType, extension } = MEDIA_TYPES[format];
  let body: Buffer;
  switch (format) {
    case 'PDF': body = await drawingToPdf(drawing); break;
    case 'SVG': body = Buffer.from(drawingToSvg(drawing), 'utf8'); break;
    case 'PNG': body = encodePng1(rasterize(drawing, dpi)); break;
    case 'ZPL': body = Buffer.from(drawingToZpl(drawing, { dpi }), 'utf8'); break;
    case 'JPEG': case 'TIFF': case 'WEBP': body = await encodeWithSharp(rasterize(drawing, dpi), format); break;
    case 'GIF': body = encodeGif(rasterize(drawing, dpi)); break;
    case 'BMP': body = encodeBmp(rasterize(drawing, dpi)); break;
    case 'PCX': body = encodePcx(rasterize(drawing, dpi)); break;
    case 'EMF': body = encodeEmf(rasterize(drawing, dpi), drawing.meta?.title); break;
    case 'PS': case 'EPS': body = Buffer.from(drawingToPostScript(drawing, format), 'latin1'); break;
  }
  return { body, mediaType, extension };
}

export async function renderLabel(data: LabelData, format: LabelFormat, opts: RenderOptions = {}): Promise<RenderedDocument> {
  return renderDrawing(layoutLabel(data), format, opts);
}

/** What a document is drawn from: a layout's name and its input. Plain data, so it can cross to a render thread. */
export type DocumentSource =
  | { layout: 'label'; data: LabelData }
  | { layout: 'stamp'; data: StampFace }
  | { layout: 'customs'; data: CustomsDocumentData }
  | { layout: 'manifest'; data: ManifestData };

/** The pages of a document: one for a label or a stamp; as many as it takes for a customs form or a manifest. */
export function layoutDocument(source: DocumentSource): Drawing[] {
  switch (source.layout) {
    case 'label': return [layoutLabel(source.data)];
    case 'stamp': return [layoutStamp(source.data)];
    case 'customs': return layoutCustomsDocument(source.data);
    case 'manifest': return layoutManifest(source.data);
  }
}

/** Lays out and renders on this thread; the service renders through a Renderer's pool (src/render/renderer.ts). */
export async function renderDocument(source: DocumentSource, format: LabelFormat, opts: RenderOptions = {}): Promise<RenderedDocument> {
  const pages = layoutDocument(source);
  if (pages.length === 1 || format !== 'PDF') return renderDrawing(pages[0]!, format, opts);
  const chunks: Buffer[] = [];
  await pagesToPdf(pages, pages[0]!.meta ?? {}, (c) => {
    chunks.push(c);
  });
  return { body: Buffer.concat(chunks), ...MEDIA_TYPES.PDF };
}

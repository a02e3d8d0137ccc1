// A render thread of the Renderer's pool (piscina): lays a document out and renders it, and hands
// the bytes back.
import { move, workerData } from 'piscina';
import { setCachesEnabled } from '../cache.ts';
import { renderDocument, type DocumentSource, type LabelFormat } from './index.ts';

setCachesEnabled((workerData as { caches?: boolean } | undefined)?.caches ?? true);

export interface RenderTask {
  source: DocumentSource;
  format: LabelFormat;
  dpi: 203 | 300;
}

export default async function render(task: RenderTask): Promise<Uint8Array> {
  const { body } = await renderDocument(task.source, task.format, { dpi: task.dpi });
  // Copied into memory of its own first: a Buffer may be a view into Node's shared pool or memory
  // that native code (sharp) allocated, neither of which can be transferred.
  return move(new Uint8Array(body)) as Uint8Array;
}

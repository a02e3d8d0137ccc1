// Print files (§11): labels in order on the pages of one document. `label`: each label on a page of
// its own size; `letter-2up`: two 4x6 labels side by side on a US Letter sheet; `a4-4up`: four labels
// on an A4 sheet, each laid out at A6 (105 x 148 mm), the size of its quarter. `start` is the
// position of the first label on the first sheet (for a sheet whose first labels are used).
import { onDots } from '../barcodes.ts';
import type { LabelData } from '../label.ts';
import type { Drawing, Primitive } from '../model.ts';
import { layoutLabel, layoutLabelAt, translate } from './label.ts';

export const PRINT_LAYOUTS = ['label', 'letter-2up', 'a4-4up'] as const;
export type PrintLayout = (typeof PRINT_LAYOUTS)[number];

/** What a print file holds: its labels, or the customs papers of those that cross a border (layouts/customs.ts). */
export const PRINT_CONTENTS = ['labels', 'customs'] as const;
export type PrintContents = (typeof PRINT_CONTENTS)[number];

const MM = 72 / 25.4;

interface Sheet {
  widthPt: number;
  heightPt: number;
  /** Top-left corner of each position, in order. */
  slots: { x: number; y: number }[];
  /** The label's size on the sheet. */
  label: { w: number; h: number };
}

const SHEETS: Record<Exclude<PrintLayout, 'label'>, Sheet> = {
  // 4 x 6 in side by side, centred across, 0.5 in from the top.
  'letter-2up': { widthPt: 612, heightPt: 792, slots: [{ x: 18, y: 36 }, { x: 306, y: 36 }], label: { w: 288, h: 432 } },
  'a4-4up': {
    widthPt: 210 * MM,
    heightPt: 297 * MM,
    slots: [{ x: 0, y: 0 }, { x: 105 * MM, y: 0 }, { x: 0, y: 148.5 * MM }, { x: 105 * MM, y: 148.5 * MM }],
    label: { w: 105 * MM, h: 148 * MM },
  },
};

/** A sheet layout's page size, positions and label size (for readers of print files). */
export function sheetOf(layout: Exclude<PrintLayout, 'label'>): Readonly<Sheet> {
  return SHEETS[layout];
}

/** Positions on one sheet of a layout (1 for `label`). */
export function positionsOf(layout: PrintLayout): number {
  return layout === 'label' ? 1 : SHEETS[layout].slots.length;
}

/** The number of pages `count` labels take from position `start`. */
export function pageCount(layout: PrintLayout, count: number, start = 1): number {
  return Math.ceil((start - 1 + count) / positionsOf(layout));
}

/** The pages of a print file, one at a time, so a long file is never laid out whole. */
export function* printPages(labels: Iterable<LabelData>, layout: PrintLayout, start = 1): Generator<Drawing> {
  if (layout === 'label') {
    for (const d of labels) yield layoutLabel(d);
    return;
  }
  const sheet = SHEETS[layout];
  let slot = start - 1;
  let primitives: Primitive[] = [];
  for (const d of labels) {
    // On the dot grid, so the label's barcodes keep their bars on whole printer dots.
    const x = onDots(sheet.slots[slot]!.x);
    const y = onDots(sheet.slots[slot]!.y);
    primitives.push(...translate(layoutLabelAt(d, sheet.label.w, sheet.label.h).primitives, x, y));
    if (++slot === sheet.slots.length) {
      yield { widthPt: sheet.widthPt, heightPt: sheet.heightPt, primitives };
      primitives = [];
      slot = 0;
    }
  }
  if (primitives.length) yield { widthPt: sheet.widthPt, heightPt: sheet.heightPt, primitives };
}

// The recipient's address printed the way the destination's post reads it, read back from the PDF
// (pdftotext) and from the ZPL's fields: a German, a British, a Japanese and a US label; the country
// in English capitals as the last line across a border, no country line at home.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { renderLabel, type LabelData } from '../../src/render/index.ts';
import { UPS_LABEL } from './fixtures.ts';

const run = promisify(execFile);

async function pdfLines(d: LabelData): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'address-lines-'));
  try {
    await writeFile(join(dir, 'l.pdf'), (await renderLabel(d, 'PDF')).body);
    const text = (await run('pdftotext', ['-enc', 'UTF-8', '-raw', join(dir, 'l.pdf'), '-'])).stdout;
    return text.split('\n').map((l) => l.trim()).filter(Boolean);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function zplFields(d: LabelData): Promise<string[]> {
  const zpl = (await renderLabel(d, 'ZPL')).body.toString('utf8');
  return [...zpl.matchAll(/\^FD([^^]*)\^FS/g)].map((m) => m[1]!.trim());
}

const SENDER_DE = { name: 'Versand', street1: 'Hauptstraße 5', city: 'Berlin', postalCode: '10115', country: 'DE' };

const CASES: { name: string; data: LabelData; lines: string[]; absent?: string[] }[] = [
  {
    name: 'Germany, at home: street, then postal code before the town; no country line',
    data: { ...UPS_LABEL, from: SENDER_DE, to: { name: 'Erika Mustermann', street1: 'Königstraße 1', city: 'Stuttgart', postalCode: '70173', country: 'DE' } },
    lines: ['Königstraße 1', '70173 Stuttgart'],
    absent: ['GERMANY'],
  },
  {
    name: 'the United Kingdom, from Germany: the post town in capitals and the postcode on lines of their own, then the country',
    data: { ...UPS_LABEL, from: SENDER_DE, to: { name: 'The Occupant', street1: '10 Downing Street', city: 'London', postalCode: 'SW1A 2AA', country: 'GB' } },
    lines: ['10 Downing Street', 'LONDON', 'SW1A 2AA', 'UNITED KINGDOM'],
  },
  {
    name: 'Japan, from Germany: the town with its postal code, then the country',
    data: { ...UPS_LABEL, from: SENDER_DE, to: { name: 'Taro Yamada', street1: '1-1 Marunouchi', city: 'Chiyoda-ku, Tokyo', postalCode: '100-0005', country: 'JP' } },
    lines: ['1-1 Marunouchi', 'Chiyoda-ku, Tokyo, 100-0005', 'JAPAN'],
  },
  {
    name: 'the United States, at home: the USPS city line',
    data: { ...UPS_LABEL, to: { name: 'The President', street1: '1600 Pennsylvania Ave NW', city: 'Washington', state: 'DC', postalCode: '20500', country: 'US' } },
    lines: ['1600 Pennsylvania Ave NW', 'WASHINGTON DC 20500'],
    absent: ['UNITED STATES'],
  },
];

/** Whether `wanted` appear in `lines` in this order (each a whole line, or a field). */
function inOrder(lines: string[], wanted: string[]): boolean {
  let at = -1;
  for (const w of wanted) {
    const i = lines.findIndex((l, k) => k > at && l === w);
    if (i < 0) return false;
    at = i;
  }
  return true;
}

describe('address lines in the destination\'s order', () => {
  for (const c of CASES) {
    it(`${c.name} (PDF and ZPL)`, async () => {
      const pdf = await pdfLines(c.data);
      assert.ok(inOrder(pdf, c.lines), `PDF lines ${JSON.stringify(pdf)} should hold ${JSON.stringify(c.lines)} in order`);
      const zpl = await zplFields(c.data);
      assert.ok(inOrder(zpl, c.lines), `ZPL fields ${JSON.stringify(zpl)} should hold ${JSON.stringify(c.lines)} in order`);
      for (const a of c.absent ?? []) {
        assert.ok(!pdf.some((l) => l.startsWith(a)), `PDF has no ${a} line`);
        assert.ok(!zpl.some((l) => l.startsWith(a)), `ZPL has no ${a} field`);
      }
    });
  }
});

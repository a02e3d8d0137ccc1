// The net weights on the customs documents add up: the items' lines, as pdftotext reads them, make
// the printed total digit for digit, and the total is the items' true total (docs/customs.md).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { renderDocument, type LabelData } from '../../src/render/index.ts';
import type { CustomsDocument } from '../../src/render/layouts/customs.ts';
import { UPS_LABEL } from './fixtures.ts';

const run = promisify(execFile);

type Weight = { value: number; unit: 'g' | 'kg' | 'oz' | 'lb' };
const GRAMS = { g: 1, kg: 1000, oz: 28.349523125, lb: 453.59237 };

/** A US → GB UPS Worldwide Saver parcel of `count` items of printed matter, each weighing `netWeight`. */
function parcel(count: number, netWeight: Weight, gross: Weight): LabelData {
  return {
    ...UPS_LABEL,
    serviceCode: 'worldwide_saver',
    serviceName: 'UPS WORLDWIDE SAVER',
    to: { name: 'The Occupant', street1: '10 Downing Street', city: 'London', postalCode: 'SW1A 2AA', country: 'GB' },
    parcel: { weight: gross },
    customsForm: 'CN22',
    customs: {
      contentsType: 'merchandise',
      signer: 'Ware House',
      items: Array.from({ length: count }, () => ({ description: 'Printed matter', quantity: 1, netWeight, value: { amount: 1.1, currency: 'USD' }, hsCode: '491199', originCountry: 'US' })),
    },
  };
}

/** The document's text as pdftotext reads it, a line each. */
async function pdfLines(document: CustomsDocument, label: LabelData): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'customs-weights-'));
  try {
    await writeFile(join(dir, 'd.pdf'), (await renderDocument({ layout: 'customs', data: { document, label } }, 'PDF')).body);
    return (await run('pdftotext', ['-enc', 'UTF-8', '-raw', join(dir, 'd.pdf'), '-'])).stdout.split('\n').map((l) => l.trim());
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Decimal numbers added digit for digit, as a reader adds a column (to 12 decimals). */
function add(numbers: string[]): string {
  const sum = numbers.reduce((acc, n) => {
    const [whole, fraction = ''] = n.split('.');
    return acc + BigInt(whole! + fraction.padEnd(12, '0'));
  }, 0n);
  const s = sum.toString().padStart(13, '0');
  return `${s.slice(0, -12)}.${s.slice(-12)}`.replace(/\.?0+$/, '');
}

/** Each item line's net weight as printed (`0.02835 kg`), the printed totals, net and gross. */
async function weights(document: CustomsDocument, label: LabelData): Promise<{ lines: string[]; net: string; gross: string }> {
  const text = await pdfLines(document, label);
  const lines = text.filter((l) => l.startsWith('Printed matter')).map((l) => l.match(/ (\d+(?:\.\d+)? (?:g|kg|oz|lb)) /)?.[1] ?? `no weight in ${l}`);
  const net = text.join('\n').match(/Total net weight: (\S+ \S+)/)?.[1];
  const gross = text.join('\n').match(/(?:Total gross|Gross) weight: (\S+ \S+)/)?.[1];
  assert.ok(net && gross, text.join('\n').slice(-1500));
  assert.equal(lines.length, label.customs!.items.length, 'every item has its line');
  return { lines, net, gross };
}

/**
 * The lines, all in the total's unit, add up to the printed total; the total is the true one to a
 * thousandth of its unit (a gram), or to two significant digits under that; net is not more than gross.
 */
function assertAddsUp(w: { lines: string[]; net: string; gross: string }, items: number, each: Weight): void {
  const [total, unit] = w.net.split(' ') as [string, Weight['unit']];
  assert.ok(w.lines.every((l) => l.endsWith(` ${unit}`)), `${w.lines[0]} is in ${unit}`);
  assert.equal(`${add(w.lines.map((l) => l.split(' ')[0]!))} ${unit}`, w.net, `${items} × ${w.lines[0]} make ${w.net}`);
  const truth = (items * each.value * GRAMS[each.unit]) / GRAMS[unit];
  const precision = truth >= 0.0005 ? 0.001 : 10 ** (Math.floor(Math.log10(truth)) - 1);
  assert.ok(Math.abs(Number(total) - truth) < precision / 2, `${w.net} is the true ${truth} ${unit} to ${precision}`);
  assert.ok(Number(total) <= Number(w.gross.split(' ')[0]), `net ${w.net} ≤ gross ${w.gross}`);
}

describe('the net weights on the CN 22 / CN 23 add up to the total net weight, and it is true', () => {
  it('50 items of 1 oz: each 0.02835 kg, together 1.4175 kg (not 50 × 0.028 kg = 1.4 against a total of 1.417)', async () => {
    const w = await weights('cn22', parcel(50, { value: 1, unit: 'oz' }, { value: 4, unit: 'lb' }));
    assert.ok(w.lines.every((l) => l === '0.02835 kg'), w.lines[0]);
    assert.equal(w.net, '1.4175 kg');
    assertAddsUp(w, 50, { value: 1, unit: 'oz' });
    assert.equal(w.gross, '1.8144 kg', 'the gross weight with as many decimals, so the two compare');
  });

  it('50 items of 0.25 lb: each 0.1134 kg, together 5.67 kg (not 50 × 0.113 kg = 5.65)', async () => {
    const w = await weights('cn23', parcel(50, { value: 0.25, unit: 'lb' }, { value: 14, unit: 'lb' }));
    assert.ok(w.lines.every((l) => l === '0.1134 kg'), w.lines[0]);
    assert.equal(w.net, '5.67 kg');
    assertAddsUp(w, 50, { value: 0.25, unit: 'lb' });
  });

  it('items under a gram: two significant digits, more where they would not add up (3 × 0.0045 oz: 0.000128 kg each, 0.000384 kg)', async () => {
    const w = await weights('cn23', parcel(3, { value: 0.0045, unit: 'oz' }, { value: 100, unit: 'g' }));
    assert.deepEqual(w.lines, ['0.000128 kg', '0.000128 kg', '0.000128 kg']);
    assert.equal(w.net, '0.000384 kg');
    assertAddsUp(w, 3, { value: 0.0045, unit: 'oz' });
    const feathers = await weights('cn23', parcel(50, { value: 0.4, unit: 'g' }, { value: 100, unit: 'g' }));
    assert.ok(feathers.lines.every((l) => l === '0.0004 kg'), feathers.lines[0]);
    assertAddsUp(feathers, 50, { value: 0.4, unit: 'g' });
  });

  it('whole grams stay as they are: 50 × 10 g is 0.01 kg each and 0.5 kg', async () => {
    const w = await weights('cn23', parcel(50, { value: 10, unit: 'g' }, { value: 2, unit: 'kg' }));
    assert.ok(w.lines.every((l) => l === '0.01 kg'), w.lines[0]);
    assert.equal(w.net, '0.5 kg');
    assert.equal(w.gross, '2 kg');
  });

  it('net and gross as printed compare when the items are all the parcel weighs: the gross is not printed lighter than the net', async () => {
    const w = await weights('cn23', parcel(50, { value: 1, unit: 'oz' }, { value: 50, unit: 'oz' }));
    assert.equal(w.net, '1.4175 kg');
    assert.equal(w.gross, '1.4175 kg');
    // 2 × 0.2 oz (5.6699 g each) are 2 × 0.0057 kg = 0.0114 kg, a tenth of a gram over their true 0.01134 kg; the parcel of 0.4 oz is not 0.0113 kg.
    const two = await weights('cn23', parcel(2, { value: 0.2, unit: 'oz' }, { value: 0.4, unit: 'oz' }));
    assert.deepEqual([two.lines, two.net, two.gross], [['0.0057 kg', '0.0057 kg'], '0.0114 kg', '0.0114 kg']);
    assertAddsUp(two, 2, { value: 0.2, unit: 'oz' });
  });
});

describe('the net weights on the commercial invoice: each line in its own unit, the totals in the parcel\'s', () => {
  it('lines in the parcel\'s unit add up to the total exactly: 50 × 0.3333 lb is 16.665 lb (not 50 × 0.333 lb = 16.65)', async () => {
    const w = await weights('commercial_invoice', parcel(50, { value: 0.3333, unit: 'lb' }, { value: 20, unit: 'lb' }));
    assert.ok(w.lines.every((l) => l === '0.3333 lb'), w.lines[0]);
    assert.equal(w.net, '16.665 lb');
    assertAddsUp(w, 50, { value: 0.3333, unit: 'lb' });
    assert.equal(w.gross, '20 lb');
  });

  it('lines in another unit add up to the total once converted, to its last digit (50 × 1 oz: 3.125 lb, 1.417 kg)', async () => {
    const inPounds = await weights('commercial_invoice', parcel(50, { value: 1, unit: 'oz' }, { value: 4, unit: 'lb' }));
    assert.ok(inPounds.lines.every((l) => l === '1 oz'), inPounds.lines[0]);
    assert.equal(inPounds.net, '3.125 lb');
    const inKilograms = await weights('commercial_invoice', parcel(50, { value: 1, unit: 'oz' }, { value: 2, unit: 'kg' }));
    assert.ok(inKilograms.lines.every((l) => l === '1 oz'), inKilograms.lines[0]);
    assert.equal(inKilograms.net, '1.417 kg', '50 × 28.349523125 g = 1417.476 g');
    // Lines in oz whose own three decimals would not add up in grams get more: 3 × 0.0045 oz (0.12757 g each).
    const small = await weights('commercial_invoice', parcel(3, { value: 0.0045, unit: 'oz' }, { value: 100, unit: 'g' }));
    assert.deepEqual(small.lines, ['0.0045 oz', '0.0045 oz', '0.0045 oz']);
    assert.equal(small.net, '0.383 g');
  });
});

// The recipient's address printed the way the destination's post reads it, read back from the PDF
// (pdftotext) and from the ZPL's fields: a German, a British, a Japanese and a US label, territories
// whose template names a parent country, postal codes in their canonical spelling; the country in
// English capitals as the last line across a border, no country line at home. Customs documents and
// manifests print addresses the same way.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { crossesCustomsBorder } from '../../src/carriers/customs.ts';
import type { Address } from '../../src/carriers/types.ts';
import { layoutLabel, renderDocument, renderLabel, type DocumentSource, type LabelData } from '../../src/render/index.ts';
import { countryLine, crossesPostalBorder, localityLines } from '../../src/render/layouts/address.ts';
import { ALL_CARRIERS, DHL_LABEL, UPS_LABEL, USPS_LABEL } from './fixtures.ts';

const run = promisify(execFile);

async function pdfLines(d: LabelData | DocumentSource): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'address-lines-'));
  try {
    await writeFile(join(dir, 'l.pdf'), ('layout' in d ? await renderDocument(d, 'PDF') : await renderLabel(d, 'PDF')).body);
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

/** An address in Guam, written with the territory's own code or as a US state. */
const GUAM = { name: 'Maria Cruz', street1: '1 Marine Corps Dr', city: 'Hagatna', state: 'GU', postalCode: '96910' };

/** Senders in Madrid, Paris and London, for parcels to places inside their own country code. */
const SENDER_ES = { name: 'Remitente', street1: 'Calle Mayor 1', city: 'Madrid', postalCode: '28013', country: 'ES' };
const SENDER_FR = { name: 'Expéditeur', street1: '1 Rue de Rivoli', city: 'Paris', postalCode: '75001', country: 'FR' };
const SENDER_GB = { name: 'Sender', street1: '1 Whitehall', city: 'London', postalCode: 'SW1A 2AA', country: 'GB' };
const BUSINGEN = { name: 'Anna Keller', street1: 'Junkerstraße 86', city: 'Büsingen am Hochrhein', postalCode: '78266', country: 'DE' };
const JERSEY = { name: 'John Le Brocq', street1: '1 King Street', city: 'St Helier', postalCode: 'JE2 3AB', country: 'GB' };

const CASES: { name: string; data: LabelData; lines: string[]; absent?: string[]; once?: string[] }[] = [
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
    lines: ['1-1 Marunouchi', 'CHIYODA-KU, TOKYO 100-0005', 'JAPAN'],
  },
  {
    name: 'the United States, at home: the USPS city line',
    data: { ...UPS_LABEL, to: { name: 'The President', street1: '1600 Pennsylvania Ave NW', city: 'Washington', state: 'DC', postalCode: '20500', country: 'US' } },
    lines: ['1600 Pennsylvania Ave NW', 'WASHINGTON DC 20500'],
    absent: ['UNITED STATES'],
  },
  {
    name: 'Puerto Rico, at home: the USPS city line and no line for the United States',
    data: { ...UPS_LABEL, from: { ...UPS_LABEL.to, city: 'Ponce', state: 'PR', postalCode: '00716', country: 'PR' }, to: { name: 'Ana Rivera', street1: '1 Calle Fortaleza', city: 'San Juan', state: 'PR', postalCode: '00901', country: 'PR' } },
    lines: ['1 Calle Fortaleza', 'SAN JUAN PR 00901'],
    absent: ['United States', 'UNITED STATES'],
  },
  {
    name: 'Puerto Rico, sent as its own country from the US mainland: domestic mail to USPS, so no country line on either address',
    data: { ...UPS_LABEL, to: { name: 'Ana Rivera', street1: '1 Calle Fortaleza', city: 'San Juan', state: 'PR', postalCode: '00901', country: 'PR' } },
    lines: ['1 Calle Fortaleza', 'SAN JUAN PR 00901'],
    absent: ['PUERTO RICO', 'UNITED STATES'],
  },
  {
    name: 'Guam, sent as its own country from the US mainland by USPS: domestic mail, no country line',
    data: { ...USPS_LABEL, from: UPS_LABEL.from, to: { ...GUAM, country: 'GU' } },
    lines: ['1 Marine Corps Dr', 'HAGATNA GU 96910'],
    absent: ['GUAM', 'UNITED STATES'],
  },
  {
    name: 'Guam, from the US mainland by UPS: abroad for the carrier (a customs border lies between), so the country line',
    data: { ...UPS_LABEL, to: { ...GUAM, country: 'GU' } },
    lines: ['1 Marine Corps Dr', 'HAGATNA GU 96910', 'GUAM'],
  },
  {
    name: 'Guam, written as a US state, from the US mainland by UPS: the same place, so the same country line',
    data: { ...UPS_LABEL, to: { ...GUAM, country: 'US' } },
    lines: ['1 Marine Corps Dr', 'HAGATNA GU 96910', 'GUAM'],
  },
  {
    name: 'Guam, written as a US state, by USPS: domestic mail, no country line',
    data: { ...USPS_LABEL, from: UPS_LABEL.from, to: { ...GUAM, country: 'US' } },
    lines: ['1 Marine Corps Dr', 'HAGATNA GU 96910'],
    absent: ['GUAM', 'UNITED STATES'],
  },
  {
    name: 'Australia, from the US: the locality line in capitals, as Australia Post reads it',
    data: { ...UPS_LABEL, to: { name: 'Jane Citizen', street1: '1 George St', city: 'Sydney', state: 'NSW', postalCode: '2000', country: 'AU' } },
    lines: ['1 George St', 'SYDNEY NSW 2000', 'AUSTRALIA'],
  },
  {
    name: 'La Réunion, from France: postal code before the town, then only its own country line',
    data: { ...UPS_LABEL, from: { name: 'Expéditeur', street1: '1 Rue de Rivoli', city: 'Paris', postalCode: '75001', country: 'FR' }, to: { name: 'Marie Hoarau', street1: '2 Rue de Paris', city: 'Saint-Denis', postalCode: '97400', country: 'RE' } },
    lines: ['2 Rue de Paris', '97400 SAINT-DENIS', 'RÉUNION'],
    absent: ['La Réunion'],
  },
  {
    name: 'a British postcode sent in lower case without its space: printed as the post writes it',
    data: { ...UPS_LABEL, from: SENDER_DE, to: { name: 'The Occupant', street1: '10 Downing Street', city: 'London', postalCode: 'sw1a2aa', country: 'GB' } },
    lines: ['LONDON', 'SW1A 2AA', 'UNITED KINGDOM'],
    absent: ['sw1a2aa'],
  },
  {
    name: 'Brazil without a state: no separator left dangling',
    data: { ...UPS_LABEL, from: SENDER_DE, to: { name: 'João Silva', street1: 'Avenida Paulista 1000', city: 'Sao Paulo', postalCode: '01310-100', country: 'BR' } },
    lines: ['Avenida Paulista 1000', 'SAO PAULO', '01310-100', 'BRAZIL'],
  },
  {
    name: 'Canada, from the US: the municipality, province and postal code on one line in capitals, as Canada Post reads it',
    data: { ...UPS_LABEL, to: { name: 'Jean Tremblay', street1: '111 Wellington St', city: 'Ottawa', state: 'ON', postalCode: 'k1a0b1', country: 'CA' } },
    lines: ['111 Wellington St', 'OTTAWA ON K1A 0B1', 'CANADA'],
    absent: ['Ottawa'],
  },
  {
    name: 'Italy, at home: the province after the town, as Poste Italiane writes it',
    data: { ...UPS_LABEL, from: { ...SENDER_DE, city: 'Milano', postalCode: '20121', country: 'IT' }, to: { name: 'Mario Rossi', street1: 'Via del Corso 12', city: 'Roma', state: 'RM', postalCode: '00186', country: 'IT' } },
    lines: ['Via del Corso 12', '00186 Roma RM'],
  },
  {
    name: 'Italy, from Germany: the locality line in capitals, as the UPU asks of international mail',
    data: { ...UPS_LABEL, from: SENDER_DE, to: { name: 'Mario Rossi', street1: 'Via del Corso 12', city: 'Roma', state: 'RM', postalCode: '00186', country: 'IT' } },
    lines: ['Via del Corso 12', '00186 ROMA RM', 'ITALY'],
  },
  {
    name: 'Italy, a town written in capitals: its province still printed (TO is not found inside TORINO)',
    data: { ...UPS_LABEL, from: SENDER_DE, to: { name: 'Mario Rossi', street1: 'Via Roma 1', city: 'TORINO', state: 'TO', postalCode: '10121', country: 'IT' } },
    lines: ['Via Roma 1', '10121 TORINO TO', 'ITALY'],
  },
  {
    name: 'Germany with a Land sent as state: not printed, the postcode and town stay the last line before the country',
    data: { ...UPS_LABEL, to: { name: 'Erika Mustermann', street1: 'Königstraße 1', city: 'Stuttgart', state: 'BW', postalCode: '70173', country: 'DE' } },
    lines: ['Königstraße 1', '70173 STUTTGART', 'GERMANY'],
    absent: ['BW'],
  },
  {
    name: 'the United Kingdom with a county: the postcode still last before the country',
    data: { ...UPS_LABEL, from: SENDER_DE, to: { name: 'A Resident', street1: '1 High Street', city: 'Guildford', state: 'Surrey', postalCode: 'GU1 3AA', country: 'GB' } },
    lines: ['1 High Street', 'GUILDFORD', 'SURREY', 'GU1 3AA', 'UNITED KINGDOM'],
  },
  {
    name: 'Ireland without an Eircode: the county kept after the town',
    data: { ...UPS_LABEL, from: SENDER_DE, to: { name: 'Mary Murphy', street1: 'Main Street', city: 'Ballina', state: 'Co. Mayo', country: 'IE' } },
    lines: ['Main Street', 'BALLINA', 'CO. MAYO', 'IRELAND'],
    once: ['CO. MAYO'],
  },
  {
    name: 'Ireland without an Eircode, the county written "Co. Clare" (words the town\'s template prints itself): once, after the town',
    data: { ...DHL_LABEL, from: SENDER_DE, to: { name: 'Sean Murphy', street1: '1 Main Street', city: 'Ennis', state: 'Co. Clare', country: 'IE' } },
    lines: ['1 Main Street', 'ENNIS', 'CO. CLARE', 'IRELAND'],
    once: ['CO. CLARE'],
  },
  {
    name: 'Japan without a prefecture: the town and the postal code with no comma left between',
    data: { ...DHL_LABEL, from: SENDER_DE, to: { name: 'Suzuki Hanako', street1: '1-1 Marunouchi', city: 'Chiyoda-ku', postalCode: '1000005', country: 'JP' } },
    lines: ['1-1 Marunouchi', 'CHIYODA-KU 100-0005', 'JAPAN'],
    absent: ['CHIYODA-KU,'],
  },
  {
    name: 'Büsingen, from Berlin: in the Swiss customs territory, so addressed as abroad, with its country\'s line',
    data: { ...DHL_LABEL, from: SENDER_DE, to: BUSINGEN },
    lines: ['Junkerstraße 86', '78266 BÜSINGEN AM HOCHRHEIN', 'GERMANY'],
  },
  {
    name: 'the Canary Islands, from Madrid: outside the EU\'s VAT area, so addressed as abroad',
    data: { ...DHL_LABEL, from: SENDER_ES, to: { name: 'Ana Pérez', street1: 'Calle Triana 1', city: 'Las Palmas de Gran Canaria', postalCode: '35002', country: 'ES' } },
    lines: ['Calle Triana 1', '35002 LAS PALMAS DE GRAN CANARIA', 'SPAIN'],
  },
  {
    name: 'Réunion written as France, from Paris: addressed as abroad, its own country line',
    data: { ...DHL_LABEL, from: SENDER_FR, to: { name: 'Marie Hoarau', street1: '2 Rue de Paris', city: 'Saint-Denis', postalCode: '97400', country: 'FR' } },
    lines: ['2 Rue de Paris', '97400 SAINT-DENIS', 'RÉUNION'],
  },
  {
    name: 'Jersey written as the United Kingdom, from London: addressed as abroad, its own country line',
    data: { ...DHL_LABEL, from: SENDER_GB, to: JERSEY },
    lines: ['1 King Street', 'ST HELIER', 'JE2 3AB', 'JERSEY'],
  },
  {
    name: 'a Japanese postal code sent without its hyphen: printed with it, as Japan Post writes it',
    data: { ...UPS_LABEL, from: SENDER_DE, to: { name: 'Taro Yamada', street1: '1-1 Marunouchi', city: 'Chiyoda-ku, Tokyo', postalCode: '1000005', country: 'JP' } },
    lines: ['CHIYODA-KU, TOKYO 100-0005', 'JAPAN'],
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

describe('a US address whose state is a territory is drawn as one written with the territory\'s code', () => {
  for (const base of ALL_CARRIERS) {
    it(`${base.carrier}: the same ZPL (address lines, country line, routing code, barcodes)`, async () => {
      const asTerritory = (await renderLabel({ ...base, to: { ...GUAM, country: 'GU' } }, 'ZPL')).body.toString();
      const asState = (await renderLabel({ ...base, to: { ...GUAM, country: 'US' } }, 'ZPL')).body.toString();
      assert.equal(asState, asTerritory);
    });
  }
});

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
      for (const o of c.once ?? []) {
        assert.equal(pdf.filter((l) => l === o).length, 1, `PDF lines ${JSON.stringify(pdf)} hold ${o} once`);
        assert.equal(zpl.filter((l) => l === o).length, 1, `ZPL fields ${JSON.stringify(zpl)} hold ${o} once`);
      }
    });
  }
});

// Greek, which a ZPL printer's resident font lacks, is a graphic field there: read back from the PDF and the drawing.
describe('Greek in capitals', () => {
  it('Greece, from Germany: the town in capitals without the tonos, as Greek capitals are written (PDF, and the drawing every format draws)', async () => {
    const data: LabelData = { ...DHL_LABEL, from: SENDER_DE, to: { name: 'Μαρία Παπαδοπούλου', street1: 'Ερμού 10', city: 'Αθήνα', postalCode: '10563', country: 'GR' } };
    const pdf = await pdfLines(data);
    assert.ok(inOrder(pdf, ['Ερμού 10', '105 63 ΑΘΗΝΑ', 'GREECE']), JSON.stringify(pdf));
    const drawn = layoutLabel(data).primitives.flatMap((p) => (p.kind === 'text' ? [p.text] : []));
    assert.ok(inOrder(drawn, ['Ερμού 10', '105 63 ΑΘΗΝΑ', 'GREECE']), JSON.stringify(drawn));
    assert.ok(!drawn.includes('105 63 ΑΘΉΝΑ'), JSON.stringify(drawn));
  });
});

// Chinese, Japanese and Korean text is drawn with Noto Sans (DejaVu has none of it), and is text in
// the PDF; a ZPL printer's resident font has none either, so ZPL carries such a line as a graphic.
// Written in their own script, they are read from the largest place down to the addressee (the
// country in English last, for the posts on the way); Korea puts the postal code last.
describe('addresses in Chinese, Japanese and Korean script', () => {
  const cases: { to: LabelData['to']; lines: string[] }[] = [
    { to: { name: '山田太郎', street1: '千代田1-1', city: '千代田区', state: '東京都', postalCode: '1000001', country: 'JP' }, lines: ['〒100-0001', '東京都千代田区', '千代田1-1', '山田太郎', 'JAPAN'] },
    { to: { name: '王小明', company: '北京饭店', street1: '建国路88号', city: '朝阳区', state: '北京市', postalCode: '100022', country: 'CN' }, lines: ['100022', '北京市朝阳区', '建国路88号', '北京饭店', '王小明', 'CHINA'] },
    { to: { name: '김민수', street1: '세종대로 110', city: '중구', state: '서울특별시', postalCode: '04524', country: 'KR' }, lines: ['서울특별시 중구', '세종대로 110', '김민수', '04524', 'SOUTH KOREA'] },
    // A municipality that is its own province, written as both: once. A town in Latin letters: apart.
    { to: { name: '王小明', street1: '建国路88号', city: '北京市', state: '北京市', postalCode: '100022', country: 'CN' }, lines: ['100022', '北京市', '建国路88号', '王小明', 'CHINA'] },
    { to: { name: '王小明', street1: '建国路88号', city: 'Chaoyang', state: 'Beijing', postalCode: '100022', country: 'CN' }, lines: ['100022', 'Beijing Chaoyang', '建国路88号', '王小明', 'CHINA'] },
  ];
  for (const c of cases) {
    it(`${c.to.country}, ${c.lines.slice(0, 2).join(' ')}: every line in its script (PDF text; ZPL graphic fields)`, async () => {
      const data: LabelData = { ...UPS_LABEL, to: c.to, messages: [c.to.name] };
      const pdf = await pdfLines(data);
      assert.ok(inOrder(pdf, c.lines), `PDF lines ${JSON.stringify(pdf)} should hold ${JSON.stringify(c.lines)} in order`);
      assert.ok(!pdf.some((l) => l.includes('?')), JSON.stringify(pdf));
      assert.ok(pdf.includes(c.to.name), 'the label message too');
      const zpl = (await renderLabel(data, 'ZPL')).body.toString('utf8');
      // (The 2D symbol's message is ASCII, as every barcode's: there the script is `?`.)
      const printed = [...zpl.matchAll(/\^A0N,[^^]*(?:\^FB[^^]*)?\^FH\^FD([^^]*)/g)].map((m) => m[1]!);
      assert.ok(printed.length > 5 && !printed.some((t) => t.includes('?')), JSON.stringify(printed));
      assert.ok((zpl.match(/\^GFA/g) ?? []).length >= 3, 'the CJK lines as graphic fields');
    });
  }
});

// A full address on a small label: its lines are made smaller, never left off (the company and the
// second street line were once dropped from British, Irish and Brazilian labels at 4x6, 6x4 and 8.5x11).
const FULL: { to: LabelData['to']; lines: string[] }[] = [
  {
    to: { name: 'Jane Doe', company: 'Acme UK Ltd', street1: 'Flat 4', street2: '22 Baker Street', city: 'London', postalCode: 'NW1 6XE', country: 'GB', phone: '+44 20 7946 0000' },
    lines: ['Jane Doe', 'Acme UK Ltd', 'Flat 4', '22 Baker Street', 'LONDON', 'NW1 6XE', 'UNITED KINGDOM'],
  },
  {
    to: { name: 'Seán Ó Briain', company: 'Briain Teoranta', street1: 'Unit 2', street2: '1 Grand Canal Quay', city: 'Dublin', postalCode: 'D02 X285', country: 'IE', phone: '+353 1 555 0100' },
    lines: ['Seán Ó Briain', 'Briain Teoranta', 'Unit 2', '1 Grand Canal Quay', 'D02 X285', 'IRELAND'],
  },
  {
    to: { name: 'João Silva', company: 'Silva Ltda', street1: 'Av Paulista 1578', street2: 'Bela Vista', city: 'São Paulo', state: 'SP', postalCode: '01310-200', country: 'BR' },
    lines: ['João Silva', 'Silva Ltda', 'Av Paulista 1578', 'Bela Vista', '01310-200', 'BRAZIL'],
  },
];
const FROM_FULL = { name: 'Ware House', company: 'Ware House Inc', street1: '1100 Congress Ave', street2: 'Suite 200', city: 'Austin', state: 'TX', postalCode: '78701', country: 'US', phone: '+1 512 555 0100' };

describe('a full address on every size and carrier', () => {
  for (const size of ['4x6', '6x4', '4x8', '8.5x11'] as const) {
    it(`${size}: every line of the recipient and of the sender is printed (PDF and ZPL)`, async () => {
      for (const base of ALL_CARRIERS) {
        for (const c of FULL) {
          const data: LabelData = { ...base, size, from: FROM_FULL, to: c.to };
          const sender = ['Ware House', 'Ware House Inc', '1100 Congress Ave', 'Suite 200'];
          for (const [kind, lines] of [['PDF', await pdfLines(data)], ['ZPL', await zplFields(data)]] as const) {
            for (const wanted of [...c.lines, ...sender]) {
              assert.ok(lines.some((l) => l.startsWith(wanted)), `${base.carrier} ${size} ${c.to.country} ${kind}: ${wanted} in ${JSON.stringify(lines)}`);
            }
          }
        }
      }
    });
  }
});

const TO_GB = { name: 'The Occupant', street1: '10 Downing Street', city: 'London', postalCode: 'sw1a2aa', country: 'GB' };
const FROM_US = { name: 'Ware House', street1: '1100 Congress Ave', city: 'Austin', state: 'TX', postalCode: '78701', country: 'US' };
const ITEMS = Array.from({ length: 50 }, (_, i) => ({
  // Every seventh a single word wider than the column: broken inside the word, not cut.
  description: i % 7 === 6 ? `Item${String(i + 1).padStart(2, '0')}-Handgefertigte-Keramiktasse-mit-glasiertem-Rand-XL` : `Item ${String(i + 1).padStart(2, '0')}, a hand-thrown stoneware mug with a glazed rim`,
  quantity: 2,
  netWeight: { value: 10, unit: 'g' as const },
  value: { amount: 1.5, currency: 'EUR' },
  hsCode: '691200',
  originCountry: 'DE',
}));
const CUSTOMS_LABEL: LabelData = {
  ...UPS_LABEL,
  from: SENDER_DE,
  to: TO_GB,
  parcel: { weight: { value: 2, unit: 'kg' } },
  customsForm: 'CN23',
  customs: { contentsType: 'merchandise', items: ITEMS, signer: 'Jürgen Müller' },
};

describe('customs documents and manifests print addresses as the labels do', () => {
  for (const document of ['cn23', 'commercial_invoice'] as const) {
    it(`${document}: sender and addressee in their posts' order, each with its country`, async () => {
      const lines = await pdfLines({ layout: 'customs', data: { document, label: { ...CUSTOMS_LABEL, customs: { ...CUSTOMS_LABEL.customs!, items: ITEMS.slice(0, 1) } } } });
      assert.ok(inOrder(lines, ['Hauptstraße 5', '10115 BERLIN', 'GERMANY']), JSON.stringify(lines));
      assert.ok(inOrder(lines, ['10 Downing Street', 'LONDON', 'SW1A 2AA', 'UNITED KINGDOM']), JSON.stringify(lines));
    });

    it(`${document} to Japan: the addressee and an item's description in Japanese script, as text`, async () => {
      const item = { ...ITEMS[0]!, description: '緑茶 (green tea)' };
      const label: LabelData = { ...CUSTOMS_LABEL, to: { name: '山田太郎', street1: '千代田1-1', city: '千代田区', state: '東京都', postalCode: '100-0001', country: 'JP' }, customs: { ...CUSTOMS_LABEL.customs!, items: [item] } };
      const lines = await pdfLines({ layout: 'customs', data: { document, label } });
      assert.ok(inOrder(lines, ['〒100-0001', '東京都千代田区', '千代田1-1', '山田太郎', 'JAPAN']), JSON.stringify(lines));
      assert.ok(lines.some((l) => l.includes('緑茶 (green tea)')), JSON.stringify(lines));
    });

    it(`${document} with 50 items: every description whole, on as many pages as it takes, then the totals and the signer`, async () => {
      const lines = await pdfLines({ layout: 'customs', data: { document, label: CUSTOMS_LABEL } });
      const text = lines.join('').replace(/\s+/g, '');
      for (const item of ITEMS) assert.ok(text.includes(item.description.replace(/\s+/g, '')), `${item.description} is printed whole`);
      const last = lines.findIndex((l) => l.includes('Item 50'));
      const total = lines.findIndex((l) => l.includes(document === 'cn23' ? 'Total value: 75.00 EUR' : 'Invoice total: 75.00 EUR'));
      // Both totals in the parcel's unit, so that they compare: 50 items of 10 g in a parcel of 2 kg.
      const net = lines.findIndex((l) => l.includes('Total net weight: 0.5 kg'));
      assert.ok(lines.some((l) => /(Total gross|Gross) weight: 2 kg/.test(l)), JSON.stringify(lines.slice(-30)));
      const signer = lines.findIndex((l) => l.includes('Signature of the sender: Jürgen Müller'));
      assert.ok(last >= 0 && total > last && net > last && signer > total, JSON.stringify(lines.slice(-30)));
      const pages = lines.filter((l) => /^Page \d of \d$/.test(l));
      assert.ok(pages.length >= 2 && pages.at(-1) === `Page ${pages.length} of ${pages.length}`, JSON.stringify(pages));
    });
  }

  it('a declaration in pounds: the invoice totals in pounds, net and gross in one unit; the CN 23 in kilograms, as the UPU form asks', async () => {
    const label: LabelData = { ...CUSTOMS_LABEL, parcel: { weight: { value: 5, unit: 'lb' } }, customs: { ...CUSTOMS_LABEL.customs!, items: [{ ...ITEMS[0]!, netWeight: { value: 4, unit: 'lb' } }] } };
    const invoice = (await pdfLines({ layout: 'customs', data: { document: 'commercial_invoice', label } })).join('\n');
    assert.match(invoice, /Total net weight: 4 lb/);
    assert.match(invoice, /Gross weight: 5 lb/i);
    const cn23 = (await pdfLines({ layout: 'customs', data: { document: 'cn23', label } })).join('\n');
    assert.match(cn23, /Total net weight: 1\.814 kg/);
    assert.match(cn23, /Total gross weight: 2\.268 kg/);
  });

  it('the manifest: the shipper as its post reads it, no country line at home', async () => {
    const lines = await pdfLines({ layout: 'manifest', data: { number: 'MNF-1', carrier: 'USPS', createdAt: '2026-11-28T00:00:00.000Z', shipper: FROM_US, services: [{ name: 'Priority Mail', count: 1, grams: 500 }], trackingNumbers: ['9405511899223197428490'] } });
    assert.ok(inOrder(lines, ['Ware House', '1100 Congress Ave', 'AUSTIN TX 78701']), JSON.stringify(lines));
    assert.ok(!lines.some((l) => l.startsWith('UNITED STATES')), JSON.stringify(lines));
  });
});

describe('locality lines: each part once, and no separator left by a part that was not sent', () => {
  const locality = (to: Omit<Address, 'name' | 'street1'>, international = true) => localityLines({ name: 'A', street1: '1 Main Street', ...to }, international);

  it('Ireland: the county after the town once, however it is written, with or without an Eircode', () => {
    for (const state of ['Co. Clare', 'County Clare', 'Clare']) {
      assert.deepEqual(locality({ city: 'Ennis', state, country: 'IE' }), ['ENNIS', state.toUpperCase()], state);
      assert.deepEqual(locality({ city: 'Ennis', state, country: 'IE' }, false), ['Ennis', state], state);
      assert.deepEqual(locality({ city: 'Ennis', state, postalCode: 'v95x2n4', country: 'IE' }), ['ENNIS', state.toUpperCase(), 'V95 X2N4'], state);
    }
  });

  it('a state left out, where the template joins it to the town or the postal code: Japan, and the others whose state is optional', () => {
    const cases: [Omit<Address, 'name' | 'street1'>, string[]][] = [
      [{ city: 'Chiyoda-ku', postalCode: '1000005', country: 'JP' }, ['CHIYODA-KU 100-0005']],
      [{ city: 'Chiyoda-ku', state: 'Tokyo', postalCode: '1000005', country: 'JP' }, ['CHIYODA-KU, TOKYO 100-0005']],
      [{ city: 'Chiyoda-ku, Tokyo', postalCode: '1000005', country: 'JP' }, ['CHIYODA-KU, TOKYO 100-0005']],
      [{ city: 'Sao Paulo', postalCode: '01310100', country: 'BR' }, ['SAO PAULO', '01310-100']],
      [{ city: 'Ciudad de México', postalCode: '06000', country: 'MX' }, ['06000 CIUDAD DE MÉXICO']],
      [{ city: 'Bogotá', postalCode: '110111', country: 'CO' }, ['110111 BOGOTÁ']],
      [{ city: 'Caracas', postalCode: '1010', country: 'VE' }, ['CARACAS 1010']],
      [{ city: 'Makati', postalCode: '1226', country: 'PH' }, ['MAKATI', '1226']],
      [{ city: 'Bangkok', postalCode: '10200', country: 'TH' }, ['BANGKOK', '10200']],
      [{ city: 'Mumbai', postalCode: '400001', country: 'IN' }, ['MUMBAI - 400001']],
      [{ city: 'San José', postalCode: '10101', country: 'CR' }, ['SAN JOSÉ', '10101']],
      [{ city: 'Santo Domingo', postalCode: '10101', country: 'DO' }, ['SANTO DOMINGO', '10101']],
      [{ city: 'Palikir', postalCode: '96941', country: 'FM' }, ['PALIKIR 96941']],
      [{ city: 'Moskva', postalCode: '125009', country: 'RU' }, ['MOSKVA', '125009']],
    ];
    for (const [to, lines] of cases) assert.deepEqual(locality(to), lines, JSON.stringify(to));
  });
});

describe('domestic or international: where the customs rules draw a border', () => {
  const at = (country: string, postalCode: string, city = 'Town'): Address => ({ name: 'A', street1: '1 Main Street', city, postalCode, country });
  const BERLIN = at('DE', '10115', 'Berlin');
  const MADRID = at('ES', '28013', 'Madrid');
  const PARIS = at('FR', '75001', 'Paris');
  const LONDON = at('GB', 'SW1A 2AA', 'London');
  const HELSINKI = at('FI', '00100', 'Helsinki');

  it('a parcel to a place inside its own country code across a customs border is international, with that place\'s country line where ISO 3166 gives it one', () => {
    const cases: [Address, Address, string][] = [
      [BERLIN, BUSINGEN, 'GERMANY'],
      [BERLIN, at('DE', '27498', 'Helgoland'), 'GERMANY'],
      [MADRID, at('ES', '35002', 'Las Palmas de Gran Canaria'), 'SPAIN'],
      [MADRID, at('ES', '51001', 'Ceuta'), 'SPAIN'],
      [PARIS, at('FR', '97400', 'Saint-Denis'), 'RÉUNION'],
      [PARIS, at('FR', '97200', 'Fort-de-France'), 'MARTINIQUE'],
      [LONDON, JERSEY, 'JERSEY'],
      [LONDON, at('GB', 'GY1 1AA', 'St Peter Port'), 'GUERNSEY'],
      [HELSINKI, at('FI', '22100', 'Mariehamn'), 'ÅLAND ISLANDS'],
    ];
    for (const [from, to, country] of cases) {
      for (const carrier of ['UPS', 'FedEx', 'DHL']) assert.equal(crossesPostalBorder(from, to, carrier), true, `${carrier} ${from.postalCode} → ${to.country} ${to.postalCode}`);
      assert.equal(countryLine(to), country, `${to.country} ${to.postalCode}`);
    }
  });

  it('within one place it stays domestic: the same town, Northern Ireland from London, Réunion however its country is written', () => {
    const cases: [Address, Address][] = [
      [BERLIN, at('DE', '70173', 'Stuttgart')],
      [BUSINGEN, BUSINGEN],
      [LONDON, at('GB', 'BT1 1AA', 'Belfast')],
      [at('FR', '97400', 'Saint-Denis'), at('RE', '97410', 'Saint-Pierre')],
      [JERSEY, at('JE', 'JE3 1AB', 'St Brelade')],
    ];
    for (const [from, to] of cases) assert.equal(crossesPostalBorder(from, to, 'DHL'), false, `${from.country} ${from.postalCode} → ${to.country} ${to.postalCode}`);
  });

  it('whenever the customs rules ask for a declaration, the addresses are printed as international (but by USPS within the US\'s mail)', () => {
    const places = [BERLIN, BUSINGEN, at('DE', '27498'), at('CH', '8001'), MADRID, at('ES', '35002'), at('ES', '52001'), PARIS, at('FR', '97400'), at('RE', '97410'), at('MC', '98000'), LONDON, JERSEY, at('GB', 'BT1 1AA'), at('JE', 'JE3 1AB'), at('IM', 'IM1 1AA'), HELSINKI, at('FI', '22100'), at('IT', '23041'), at('GR', '63086'), at('US', '10118'), at('PR', '00901'), { ...at('US', '96910'), state: 'GU' }];
    for (const from of places) {
      for (const to of places) {
        if (!crossesCustomsBorder(from, to)) continue;
        for (const carrier of ['UPS', 'FedEx', 'DHL']) assert.equal(crossesPostalBorder(from, to, carrier), true, `${carrier} ${from.country} ${from.postalCode} → ${to.country} ${to.postalCode}`);
      }
    }
  });
});

describe('customs documents print an address as its label does', () => {
  for (const document of ['cn22', 'commercial_invoice'] as const) {
    it(`${document} from London to Jersey: the addressee's country line JERSEY, the sender's UNITED KINGDOM`, async () => {
      const label: LabelData = { ...CUSTOMS_LABEL, from: SENDER_GB, to: JERSEY, customsForm: 'CN22', customs: { ...CUSTOMS_LABEL.customs!, items: ITEMS.slice(0, 1) } };
      const lines = await pdfLines({ layout: 'customs', data: { document, label } });
      assert.ok(inOrder(lines, ['1 King Street', 'ST HELIER', 'JE2 3AB', 'JERSEY']), JSON.stringify(lines));
      assert.ok(inOrder(lines, ['1 Whitehall', 'LONDON', 'SW1A 2AA', 'UNITED KINGDOM']), JSON.stringify(lines));
      assert.equal(lines.filter((l) => l === 'UNITED KINGDOM').length, 1, JSON.stringify(lines));
    });

    it(`${document} to Ireland without an Eircode: the county once`, async () => {
      const label: LabelData = { ...CUSTOMS_LABEL, to: { name: 'Sean Murphy', street1: '1 Main Street', city: 'Ennis', state: 'Co. Clare', country: 'IE' }, customsForm: 'CN22', customs: { ...CUSTOMS_LABEL.customs!, items: ITEMS.slice(0, 1) } };
      const lines = await pdfLines({ layout: 'customs', data: { document, label } });
      assert.ok(inOrder(lines, ['1 Main Street', 'ENNIS', 'CO. CLARE', 'IRELAND']), JSON.stringify(lines));
      assert.equal(lines.filter((l) => l === 'CO. CLARE').length, 1, JSON.stringify(lines));
    });
  }
});

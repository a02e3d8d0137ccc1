// §11 print files: a batch's labels (or a list) in order in one PDF, in each layout and from a start
// position, or in one ZPL stream; every barcode of every position decoded and matched to its item;
// the link behaves like a label's. The customs papers of the same labels (§12) in one PDF, page by
// page. On both databases.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import type { LabelData } from '../../src/render/index.ts';
import { sheetOf, type PrintLayout } from '../../src/render/layouts/sheet.ts';
import { countRows, forEachDatabase, sampleShipment, US_SENDER, withTestApp, type TestApp } from '../helpers.ts';
import { pdfText } from '../render/pictures.ts';
import { assertAllRead, expectedBarcodes } from '../render/expected.ts';
import { rasterizePdf, scan } from '../render/scan.ts';
import { runBatches } from './batches.test.ts';

const run = promisify(execFile);
const path = (url: string) => url.replace('http://localhost:8080', '');

async function pdfInfo(pdf: Buffer): Promise<{ pages: number; size: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'print-file-'));
  try {
    await writeFile(join(dir, 'f.pdf'), pdf);
    const out = (await run('pdfinfo', [join(dir, 'f.pdf')])).stdout;
    return { pages: Number(/Pages:\s+(\d+)/.exec(out)![1]), size: /Page size:\s+([\d.]+ x [\d.]+)/.exec(out)![1]! };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function labelData(t: TestApp, ids: string[]): Promise<LabelData[]> {
  const rows = await t.ctx.db.selectFrom('labels').select(['id', 'label_data']).where('id', 'in', ids).execute();
  return ids.map((id) => JSON.parse(rows.find((r) => r.id === id)!.label_data) as LabelData);
}

/** Every position of every page: the labels expected there (null for a position left empty), decoded in order. */
async function assertPositions(pdf: Buffer, layout: PrintLayout, start: number, labels: LabelData[]): Promise<void> {
  const dpi = 203;
  if (layout === 'label') {
    for (const [i, d] of labels.entries()) assertAllRead(await scan(await rasterizePdf(pdf, dpi, { page: i + 1 })), expectedBarcodes(d), `page ${i + 1}`);
    return;
  }
  const sheet = sheetOf(layout);
  const k = dpi / 72;
  const slots: (LabelData | null)[] = [...Array<null>(start - 1).fill(null), ...labels];
  for (let page = 0; page * sheet.slots.length < slots.length; page++) {
    const png = await rasterizePdf(pdf, dpi, { page: page + 1 });
    for (const [s, slot] of sheet.slots.entries()) {
      const expected = slots[page * sheet.slots.length + s];
      if (expected === undefined) continue;
      const found = await scan(png, { crop: { left: slot.x * k, top: slot.y * k, width: sheet.label.w * k, height: sheet.label.h * k } });
      if (expected === null) assert.deepEqual(found, [], `page ${page + 1} position ${s + 1} is left empty`);
      else assertAllRead(found, expectedBarcodes(expected), `page ${page + 1} position ${s + 1}`);
    }
  }
}

forEachDatabase((database) => {
  describe('print files', () => {
    const t = withTestApp(database);
    let batch: { id: string; items: { labelId: string | null; trackingNumber: string | null }[] };
    let labelIds: string[];

    async function printFile(body: object): Promise<{ file: Record<string, any>; body: Buffer }> {
      const res = await t.request({ method: 'POST', url: '/v1/print-files', payload: body });
      assert.equal(res.statusCode, 201, res.body);
      const download = await t.app.inject({ method: 'GET', url: path(res.json().url) });
      assert.equal(download.statusCode, 200, download.body.slice(0, 200));
      return { file: res.json(), body: download.rawPayload };
    }

    it('a batch of five: the label layout, one page per label at 4 x 6 in, every barcode in item order', async () => {
      const shipments = [
        sampleShipment,
        { ...sampleShipment, carrier: 'USPS', service: 'priority_mail', from: { name: 'Lager', street1: '4100 Distribution Dr', city: 'Memphis', state: 'TN', postalCode: '38118', country: 'US' } },
        { ...sampleShipment, carrier: 'FedEx', service: 'international_priority' },
        { ...sampleShipment, carrier: 'DHL', service: 'express_worldwide' },
        { ...sampleShipment, reference: 'fifth' },
      ];
      const created = await t.request({ method: 'POST', url: '/v1/batches', payload: { items: [...shipments.map((s) => ({ shipment: s })), { shipmentId: '0195f3a0-7c4e-7d2a-9b1e-3f5a6c7d8e9f' }] } });
      assert.equal(created.statusCode, 202, created.body);
      // Before the batch is completed its print file would hold only some of its labels: refused, and nothing is made.
      const early = await t.request({ method: 'POST', url: '/v1/print-files', payload: { batchId: created.json().id } });
      assert.equal(early.statusCode, 409, early.body);
      assert.equal(early.json().code, 'CONFLICT');
      assert.match(early.json().message, /is still processing \(0 of 6 items done\)/);
      assert.deepEqual(early.json().details, [{ field: 'batchId', message: 'is still processing' }]);
      assert.equal(await countRows(t.ctx, 'print_files'), 0);
      await runBatches(t);
      batch = (await t.request({ method: 'GET', url: `/v1/batches/${created.json().id}` })).json();
      labelIds = batch.items.flatMap((i) => (i.labelId ? [i.labelId] : []));
      assert.equal(labelIds.length, 5);
      const { file, body } = await printFile({ batchId: batch.id });
      assert.deepEqual({ ...file, id: undefined, url: undefined, expiresAt: undefined }, { id: undefined, url: undefined, expiresAt: undefined, contents: 'labels', format: 'PDF', layout: 'label', labelCount: 5, pageCount: 5, copies: 1 });
      assert.deepEqual(await pdfInfo(body), { pages: 5, size: '288 x 432' });
      await assertPositions(body, 'label', 1, await labelData(t, labelIds));
    });

    for (const [layout, start, pages, size] of [['letter-2up', 1, 3, '612 x 792'], ['letter-2up', 2, 3, '612 x 792'], ['a4-4up', 1, 2, '595.276 x 841.89'], ['a4-4up', 4, 2, '595.276 x 841.89']] as const) {
      it(`${layout} from position ${start}: ${pages} pages, each position holding its label`, async () => {
        const { file, body } = await printFile({ batchId: batch.id, layout, start });
        assert.equal(file.pageCount, pages);
        assert.deepEqual(await pdfInfo(body), { pages, size });
        await assertPositions(body, layout, start, await labelData(t, labelIds));
      });
    }

    it('ZPL: one ^XA…^XZ per label in order, nothing that changes the printer\'s mode', async () => {
      const { file, body } = await printFile({ batchId: batch.id, format: 'ZPL' });
      assert.equal(file.pageCount, 5);
      const zpl = body.toString('utf8');
      const formats = zpl.split('^XZ').filter((f) => f.trim());
      assert.equal(formats.length, 5);
      assert.equal(zpl.match(/\^XA/g)?.length, 5);
      const data = await labelData(t, labelIds);
      formats.forEach((f, i) => {
        assert.ok(f.trimStart().startsWith('^XA'), `format ${i + 1} opens with ^XA`);
        assert.ok(f.includes(data[i]!.trackingNumber), `format ${i + 1} holds ${data[i]!.trackingNumber}`);
      });
      // Media type, tracking, darkness, calibration, configuration: none of them.
      assert.doesNotMatch(zpl, /\^(MM|MN|MT|MD|MF|JU|JZ|KD|SZ|JM)|~(SD|JS|TA|JC|JR|JD)/);
    });

    it('a list of labels prints in the order given; bad lists change nothing', async () => {
      const reversed = [...labelIds].reverse();
      const { body } = await printFile({ labelIds: reversed });
      await assertPositions(body, 'label', 1, await labelData(t, reversed));
      const other = await t.newAccount();
      const s = (await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': other.apiKey }, payload: sampleShipment })).json();
      const theirs = (await t.app.inject({ method: 'POST', url: '/v1/labels', headers: { 'x-api-key': other.apiKey }, payload: { shipmentId: s.id } })).json();
      const unknown = '0195f3a0-7c4e-7d2a-9b1e-3f5a6c7d8e9f';
      const before = await t.ctx.db.selectFrom('print_files').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      const post = (payload: object) => t.request({ method: 'POST', url: '/v1/print-files', payload });
      const notFound = await post({ labelIds: [labelIds[0], theirs.id, unknown] });
      assert.equal(notFound.statusCode, 404);
      assert.match(notFound.json().message, new RegExp(theirs.id));
      for (const [payload, field] of [
        [{ batchId: batch.id, labelIds }, 'labelIds'],
        [{}, 'batchId'],
        [{ batchId: batch.id, format: 'ZPL', layout: 'letter-2up' }, 'layout'],
        [{ batchId: batch.id, layout: 'letter-2up', start: 3 }, 'start'],
        [{ batchId: batch.id, start: 2 }, 'start'],
        [{ labelIds: ['nope'] }, 'labelIds[0]'],
        [{ labelIds: [labelIds[0], labelIds[1], labelIds[0]] }, 'labelIds'],
      ] as const) {
        const res = await post(payload);
        assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
        assert.equal(res.json().details[0].field, field);
      }
      // A layout of one label a page is not given a range of one.
      assert.equal((await post({ batchId: batch.id, start: 2 })).json().message, 'start must be 1 for layout label, which has one label a page');
      assert.equal((await post({ batchId: batch.id, layout: 'letter-2up', start: 3 })).json().message, 'start must be 1 to 2 for layout letter-2up');
      const after = await t.ctx.db.selectFrom('print_files').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(after.n), Number(before.n));
    });

    it('invalidated labels: 409 naming them in a list, left out of a batch\'s file, and 410 for a file made before', async () => {
      const { file } = await printFile({ batchId: batch.id, format: 'ZPL' });
      const tampered = file.url.replace(/sig=([^&])/, (_m: string, c: string) => `sig=${c === 'A' ? 'B' : 'A'}`);
      assert.equal((await t.app.inject({ method: 'GET', url: path(tampered) })).statusCode, 403);
      assert.equal((await t.request({ method: 'PUT', url: `/v1/labels/${labelIds[1]}/invalidate` })).statusCode, 204);
      assert.equal((await t.app.inject({ method: 'GET', url: path(file.url) })).statusCode, 410);
      const conflict = await t.request({ method: 'POST', url: '/v1/print-files', payload: { labelIds } });
      assert.equal(conflict.statusCode, 409);
      assert.equal(conflict.json().message, `label ${labelIds[1]} is invalidated and cannot be printed`);
      const { file: again, body } = await printFile({ batchId: batch.id });
      assert.equal(again.labelCount, 4);
      const kept = labelIds.filter((_, i) => i !== 1);
      await assertPositions(body, 'label', 1, await labelData(t, kept));
    });

    /** The text of each page of a PDF, in order. */
    const pagesOf = async (pdf: Buffer) => (await pdfText(pdf)).split('\f').slice(0, -1);
    /** Which document a page of customs papers is, by its title (the one title it carries). */
    const titleOf = (page: string) => {
      const titles = new Set(page.match(/CUSTOMS DECLARATION CN 2[23]|COMMERCIAL INVOICE/g));
      assert.equal(titles.size, 1, page);
      return [...titles][0];
    };

    it('customs papers: each parcel\'s declaration and invoice in the labels\' order, a set per copy', async () => {
      const { file, body } = await printFile({ batchId: batch.id, contents: 'customs', copies: 2 });
      // The batch's labels still active (item 2's was invalidated above), every one of a shipment with customs: a CN22 and an invoice each.
      const data = await labelData(t, labelIds.filter((_, i) => i !== 1));
      assert.ok(data.every((d) => d.customsForm === 'CN22'));
      assert.deepEqual({ ...file, id: undefined, url: undefined, expiresAt: undefined }, { id: undefined, url: undefined, expiresAt: undefined, contents: 'customs', format: 'PDF', layout: 'label', labelCount: 4, pageCount: 16, copies: 2 });
      assert.deepEqual(await pdfInfo(body), { pages: 16, size: '595.28 x 841.89' });
      const pages = await pagesOf(body);
      assert.equal(pages.length, 16);
      data.forEach((d, k) => {
        for (const [n, title] of ['CUSTOMS DECLARATION CN 22', 'COMMERCIAL INVOICE', 'CUSTOMS DECLARATION CN 22', 'COMMERCIAL INVOICE'].entries()) {
          const page = pages[4 * k + n]!;
          assert.equal(titleOf(page), title, `page ${4 * k + n + 1} is the ${title} of parcel ${k + 1}`);
          assert.ok(page.includes(d.trackingNumber), `page ${4 * k + n + 1} carries ${d.trackingNumber}`);
        }
      });
    });

    it('customs papers of a list: a label without any left out, a CN23 over several pages counted to its last page; 410 once a label is invalidated', async () => {
      const item = { ...sampleShipment.customs.items[0], quantity: 1, netWeight: { value: 10, unit: 'g' }, value: { amount: 100, currency: 'EUR' } };
      const items = Array.from({ length: 50 }, (_, i) => ({ ...item, description: `Hand-thrown stoneware mug with a glaze of its own, number ${i + 1}` }));
      const big = (await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, customs: { ...sampleShipment.customs, items } } })).json();
      const home = (await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, carrier: 'USPS', service: 'priority_mail', from: US_SENDER, customs: undefined } })).json();
      const labels = [];
      for (const s of [home, big]) labels.push((await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: s.id } })).json());
      const { file, body } = await printFile({ labelIds: labels.map((l) => l.id), contents: 'customs' });
      assert.equal(file.labelCount, 1);
      const { pages } = await pdfInfo(body);
      assert.ok(pages > 2, `a CN23 and an invoice of 50 items take more than two pages (${pages})`);
      assert.equal(file.pageCount, pages);
      const texts = await pagesOf(body);
      const titles = texts.map(titleOf);
      const declaration = titles.filter((title) => title === 'CUSTOMS DECLARATION CN 23').length;
      assert.ok(declaration >= 2, `the CN23 continues on ${declaration} pages`);
      assert.deepEqual(titles, [...Array<string>(declaration).fill('CUSTOMS DECLARATION CN 23'), ...Array<string>(pages - declaration).fill('COMMERCIAL INVOICE')]);
      assert.match(texts[0]!, new RegExp(`Page 1 of ${declaration}`));
      for (const text of texts) assert.ok(text.includes(labels[1].trackingNumber));
      assert.equal((await t.request({ method: 'PUT', url: `/v1/labels/${labels[1].id}/invalidate` })).statusCode, 204);
      assert.equal((await t.app.inject({ method: 'GET', url: path(file.url) })).statusCode, 410);
    });

    it('customs papers: what does not go together is 400 naming its field, no papers at all 422; nothing is made', async () => {
      const made = await countRows(t.ctx, 'print_files');
      const post = (payload: object) => t.request({ method: 'POST', url: '/v1/print-files', payload });
      for (const [payload, field] of [
        [{ batchId: batch.id, contents: 'customs', format: 'ZPL' }, 'format'],
        [{ batchId: batch.id, contents: 'customs', layout: 'a4-4up' }, 'layout'],
        [{ batchId: batch.id, contents: 'customs', start: 2 }, 'start'],
        [{ batchId: batch.id, contents: 'customs', copies: 6 }, 'copies'],
        [{ batchId: batch.id, contents: 'customs', copies: 0 }, 'copies'],
        [{ batchId: batch.id, copies: 2 }, 'copies'],
        [{ batchId: batch.id, contents: 'papers' }, 'contents'],
      ] as const) {
        const res = await post(payload);
        assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`);
        assert.equal(res.json().details[0].field, field, JSON.stringify(payload));
      }
      const home = (await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, carrier: 'USPS', service: 'priority_mail', from: US_SENDER, customs: undefined } })).json();
      const label = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: home.id } })).json();
      assert.equal(label.documents, undefined, 'a label without customs has no papers');
      const before = await countRows(t.ctx, 'print_files');
      const none = await post({ labelIds: [label.id], contents: 'customs' });
      assert.equal(none.statusCode, 422, none.body);
      assert.equal(none.json().code, 'NOTHING_TO_PRINT');
      assert.match(none.json().message, /^the label has no customs papers \(a label has them when its shipment carries customs\): there is nothing to print$/);
      assert.equal(await countRows(t.ctx, 'print_files'), before);
      assert.equal(before, made);
    });
  });
});

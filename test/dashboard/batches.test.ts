// The dashboard's batches (§11, §15): a CSV file uploaded as a batch, every problem of a refused file
// listed by row and column with nothing created, the progress page refreshing itself until the
// worker is done, and the print file behind its signed link; on both databases.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { processBatches } from '../../src/batches/service.ts';
import { CSV_COLUMNS, exampleCsv } from '../../src/dashboard/csv.ts';
import { countRows, forEachDatabase, sampleShipment, withTestApp, type TestApp } from '../helpers.ts';
import { noticeOf, signedIn, type Visitor } from './support.ts';
import { pdfText } from '../render/pictures.ts';

/** Runs the worker's batch job until nothing is left. */
async function runBatches(t: TestApp): Promise<void> {
  while ((await processBatches(t.ctx)) > 0);
}

/** A CSV file of these rows, the header being every column any row names. */
function csv(rows: Record<string, string>[]): string {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cell = (v: string) => (/[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  return `${[columns, ...rows.map((r) => columns.map((c) => r[c] ?? ''))].map((l) => l.map(cell).join(',')).join('\n')}\n`;
}

const FROM = { from_name: 'Lager Süd Inc', from_street1: '4100 Distribution Dr', from_city: 'Memphis', from_state: 'TN', from_postal_code: '38118', from_country: 'US' };
const TO_NY = { to_name: 'Ada Lovelace', to_street1: '350 Fifth Avenue', to_street2: 'Suite 2100', to_city: 'New York', to_state: 'NY', to_postal_code: '10118', to_country: 'US' };
const DOMESTIC = { reference: 'Order 1', carrier: 'USPS', service: 'priority_mail', ...FROM, ...TO_NY, weight: '1.5', weight_unit: 'lb' };
const s = sampleShipment;
const INTERNATIONAL = {
  reference: 'Order 2, "mugs"', carrier: 'UPS', service: 'worldwide_saver',
  from_name: s.from.name, from_company: s.from.company, from_street1: s.from.street1, from_city: s.from.city, from_postal_code: s.from.postalCode, from_country: s.from.country, from_phone: s.from.phone,
  ...TO_NY, to_name: s.to.name,
  weight: '1.2', weight_unit: 'kg', length: '30', width: '20', height: '10', dimension_unit: 'cm',
  customs_contents_type: 'merchandise', customs_signer: s.customs.signer,
  item_description: 'Ceramic mug', item_quantity: '2', item_weight: '0.8', item_value: '40', item_currency: 'EUR', item_hs_code: '691200', item_origin_country: 'DE',
  item2_description: 'Tea towel', item2_quantity: '1', item2_weight: '100', item2_weight_unit: 'g', item2_value: '9.5', item2_currency: 'EUR', item2_hs_code: '630260', item2_origin_country: 'PT',
};
const WITH_MESSAGE = { ...DOMESTIC, reference: 'Order 3', carrier: 'FedEx', service: 'ground', message_1: 'Fragile' };

const FILE = { name: 'file', filename: 'shipments.csv', type: 'text/csv' };
const upload = (v: Visitor, content: string | Buffer, fields: Record<string, string> = { format: 'PDF', size: '4x6' }) =>
  v.upload('/dashboard/batches', fields, { ...FILE, content }, '/dashboard/batches');

/** The text of a page without its tags (entities of quotes and ampersands read back). */
function textOf(res: LightMyRequestResponse): string {
  return res.body.replace(/<[^>]+>/g, ' ').replace(/&#(\d+);/g, (_m, c) => String.fromCharCode(Number(c))).replace(/\s+/g, ' ');
}

function assertAccessible(body: string): void {
  assert.equal(body.match(/<h1[\s>]/g)?.length, 1, 'one h1');
  for (const t of body.match(/<table>[\s\S]*?<\/table>/g) ?? []) {
    assert.ok(t.includes('<caption>'), 'a table has a caption');
    assert.ok(!/<th(?=[\s>])(?! scope="col")/.test(t), 'every column header has scope=col');
  }
  for (const id of body.matchAll(/<(?:input|select)(?![^>]*type="hidden")[^>]* id="([^"]+)"/g)) assert.match(body, new RegExp(`<label for="${id[1]}"`), `a label for ${id[1]}`);
}

forEachDatabase((database) => {
  describe('dashboard batches', () => {
    const t = withTestApp(database);

    it('uploads a CSV file as a batch, shows its progress, then prints its labels', async () => {
      const acct = await t.newAccount();
      const v = await signedIn(t, acct.accountId);
      const list = await v.get('/dashboard/batches');
      assert.equal(list.statusCode, 200);
      assertAccessible(list.body);
      assert.match(list.body, /<form method="post" action="\/dashboard\/batches" enctype="multipart\/form-data">/);
      assert.match(list.body, /<input type="file" id="f-file" name="file" accept="\.csv,text\/csv" required/);
      for (const c of CSV_COLUMNS) assert.ok(list.body.includes(`<code>${c.name}</code>`), `the page lists column ${c.name}`);

      const res = await upload(v, csv([DOMESTIC, INTERNATIONAL, WITH_MESSAGE]), { format: 'ZPL', size: '4x6' });
      assert.equal(res.statusCode, 303, textOf(res).slice(0, 2000));
      const location = String(res.headers.location);
      const id = /^\/dashboard\/batches\/([0-9a-f-]{36})$/.exec(location)?.[1];
      assert.ok(id, location);

      const waiting = await v.get(location);
      assert.equal(waiting.statusCode, 200);
      assertAccessible(waiting.body);
      assert.match(waiting.body, /The batch of 3 shipments was created/);
      assert.match(waiting.body, /<div id="batch-live" data-refresh>/);
      assert.match(waiting.body, /<progress id="batch-progress" data-live aria-labelledby="progress-heading" value="0" max="3">/);
      assert.match(textOf(waiting), /0 of 3 done, 0 failed/);
      assert.match(waiting.body, new RegExp(`<a href="/dashboard/batches/${id}">Refresh</a>`));
      // Nothing to print yet: the form is there, disabled, so the page does not move when it can be used.
      assert.match(waiting.body, /<fieldset class="bare" disabled>/);
      assert.match(textOf(waiting), /The print file of the whole batch can be made once every label is made/);
      // Asked for anyway: the service's refusal, on the batch's page.
      const early = await v.post(`/dashboard/batches/${id}/print-file`, { format: 'PDF', layout: 'label', start: '1' }, `/dashboard/batches/${id}`);
      assert.equal(early.statusCode, 409);
      assert.match(textOf(early), new RegExp(`batch ${id} is still processing \\(0 of 3 items done\\)`));

      await runBatches(t);
      const done = await v.get(`/dashboard/batches/${id}`);
      assert.equal(done.statusCode, 200);
      assertAccessible(done.body);
      assert.match(done.body, /<div id="batch-live">/);
      assert.doesNotMatch(done.body, /data-refresh/);
      assert.match(done.body, /<progress id="batch-progress" data-live aria-labelledby="progress-heading" value="3" max="3">/);
      assert.match(textOf(done), /completed 3 of 3 done, 0 failed/);
      assert.doesNotMatch(done.body, />Refresh</);
      assert.match(done.body, /<fieldset class="bare">/, 'the print file can be made now');
      // Named after its file, on its page, in the list and in the API.
      assert.match(done.body, new RegExp(`<dt>File</dt><dd>${FILE.filename.replace('.', '\\.')}</dd>`));
      assert.match((await v.get('/dashboard/batches')).body, new RegExp(`<a href="/dashboard/batches/${id}">${FILE.filename.replace('.', '\\.')}</a>`));
      assert.match(done.body, new RegExp(`<h1>${FILE.filename.replace('.', '\\.')}: batch of 3 shipments</h1>`));

      // What the API says of the same batch: the rows in order, each shipment as its row said.
      const api = (await t.app.inject({ method: 'GET', url: `/v1/batches/${id}`, headers: { 'x-api-key': acct.apiKey } })).json();
      assert.equal(api.format, 'ZPL');
      // The international parcel's customs documents are linked on its row, as its label gives them.
      assert.ok(done.body.includes('<th scope="col">Customs documents (PDF)</th>'));
      const papers = (await t.app.inject({ method: 'GET', url: `/v1/labels/${api.items[1].labelId}`, headers: { 'x-api-key': acct.apiKey } })).json().documents;
      assert.ok(papers.length >= 1, 'the international item has documents');
      for (const doc of papers) assert.ok(done.body.includes(`<a href="${doc.url.replaceAll('&', '&#38;')}">${doc.type.replace(/_/g, ' ')}</a>`), doc.type);
      // Its papers, in one PDF to print: each set as many times as asked; a wrong count is said at its field.
      assert.match(textOf(done), /Customs papers The customs declarations and commercial invoices of the batch’s 1 parcel that has them/);
      const badCopies = await v.post(`/dashboard/batches/${id}/print-file`, { contents: 'customs', copies: '9' }, `/dashboard/batches/${id}`);
      assert.equal(badCopies.statusCode, 400);
      assert.match(badCopies.body, /<p class="error" id="f-copies-error">must be a whole number from 1 to 5<\/p>/);
      assert.match(badCopies.body, /<input[^>]* name="copies"[^>]* value="9"/, 'the form keeps what was sent');
      const customs = await v.post(`/dashboard/batches/${id}/print-file`, { contents: 'customs', copies: '3' }, `/dashboard/batches/${id}`);
      assert.equal(customs.statusCode, 303, textOf(customs).slice(0, 1000));
      const customsLink = new URL(String(customs.headers.location));
      const customsPdf = await t.app.inject({ method: 'GET', url: customsLink.pathname + customsLink.search });
      assert.equal(customsPdf.statusCode, 200);
      const customsText = await pdfText(customsPdf.rawPayload);
      assert.equal(customsText.match(/CUSTOMS DECLARATION CN 22/g)?.length, 3, 'three declarations');
      assert.equal(customsText.match(/COMMERCIAL INVOICE/g)?.length, 3, 'three invoices');
      assert.ok(customsText.includes(api.items[1].trackingNumber));
      // Past its 24 hours a label's documents are not linked (the link would answer 410).
      await t.ctx.db.updateTable('labels').set({ expires_at: '2026-01-01T00:00:00.000Z' }).where('id', '=', api.items[1].labelId).execute();
      const later = await v.get(`/dashboard/batches/${id}`);
      assert.ok(!later.body.includes('/v1/downloads/label-documents/'), 'no link to an expired label\'s documents');
      // …but its papers still print: the row says where, and the customs papers' form stays.
      assert.match(textOf(later), /links expired: in the customs papers’ print file/);
      assert.match(later.body, /<h2 id="papers-heading">Customs papers<\/h2>/);
      assert.equal(api.name, FILE.filename);
      assert.deepEqual(api.counts, { total: 3, succeeded: 3, failed: 0 });
      for (const item of api.items) assert.ok(done.body.includes(`<a href="/dashboard/shipments/${item.shipmentId}">${item.trackingNumber}</a>`));
      const shipment = (i: number) => t.app.inject({ method: 'GET', url: `/v1/shipments/${api.items[i].shipmentId}`, headers: { 'x-api-key': acct.apiKey } }).then((r) => r.json());
      const [first, second, third] = [await shipment(0), await shipment(1), await shipment(2)];
      assert.equal(first.reference, 'Order 1');
      // Each item's row names its parcel as a picker knows it: reference and recipient.
      assert.match(textOf(done), new RegExp(`1 Order 1 ${first.to.name}, ${first.to.city} ${first.to.country} ${api.items[0].trackingNumber} labelled`));
      assert.deepEqual(first.parcel, { weight: { value: 1.5, unit: 'lb' } });
      assert.equal(first.customs, undefined);
      assert.equal(second.reference, 'Order 2, "mugs"');
      assert.deepEqual(second.parcel, { weight: { value: 1.2, unit: 'kg' }, length: 30, width: 20, height: 10, dimensionUnit: 'cm' });
      assert.deepEqual(second.customs, {
        contentsType: 'merchandise',
        items: [
          { description: 'Ceramic mug', quantity: 2, netWeight: { value: 0.8, unit: 'kg' }, value: { amount: 40, currency: 'EUR' }, hsCode: '691200', originCountry: 'DE' },
          { description: 'Tea towel', quantity: 1, netWeight: { value: 100, unit: 'g' }, value: { amount: 9.5, currency: 'EUR' }, hsCode: '630260', originCountry: 'PT' },
        ],
        signer: s.customs.signer,
      });
      assert.deepEqual(second.from, s.from);
      assert.deepEqual(third.messages, ['Fragile']);
      assert.equal(third.carrier, 'FedEx');

      // The print file: ZPL (the batch's format) is offered first; a sheet layout with it is refused on the page.
      assert.match(done.body, new RegExp(`<form method="post" action="/dashboard/batches/${id}/print-file">`));
      assert.match(done.body, /<option value="ZPL" selected>/);
      const refused = await v.post(`/dashboard/batches/${id}/print-file`, { format: 'ZPL', layout: 'a4-4up', start: '1' }, `/dashboard/batches/${id}`);
      assert.equal(refused.statusCode, 400);
      assert.match(textOf(refused), /That did not work a ZPL print file has one label per label format: layout must be label/);
      assert.match(refused.body, /<p class="error" id="f-layout-error">must be label for ZPL<\/p>/);
      assert.match(refused.body, /<option value="a4-4up" selected>/, 'the form keeps what was sent');
      const badStart = await v.post(`/dashboard/batches/${id}/print-file`, { format: 'PDF', layout: 'letter-2up', start: '3' }, `/dashboard/batches/${id}`);
      assert.equal(badStart.statusCode, 400);
      assert.match(textOf(badStart), /start must be 1 to 2 for layout letter-2up/);
      const notANumber = await v.post(`/dashboard/batches/${id}/print-file`, { format: 'PDF', layout: 'label', start: 'first' }, `/dashboard/batches/${id}`);
      assert.equal(notANumber.statusCode, 400);
      assert.match(textOf(notANumber), /Start position: must be a whole number from 1 to 4/);

      const print = await v.post(`/dashboard/batches/${id}/print-file`, { format: 'PDF', layout: 'letter-2up', start: '2' }, `/dashboard/batches/${id}`);
      assert.equal(print.statusCode, 303, textOf(print).slice(0, 1000));
      const link = new URL(String(print.headers.location));
      assert.equal(link.origin, 'http://localhost:8080');
      assert.match(link.pathname, /^\/v1\/downloads\/print-files\/[0-9a-f-]{36}$/);
      assert.ok(link.searchParams.get('sig'));
      const pdf = await t.app.inject({ method: 'GET', url: link.pathname + link.search });
      assert.equal(pdf.statusCode, 200);
      assert.equal(pdf.headers['content-type'], 'application/pdf');
      assert.equal(pdf.rawPayload.subarray(0, 4).toString('latin1'), '%PDF');

      const zpl = await v.post(`/dashboard/batches/${id}/print-file`, { format: 'ZPL', layout: 'label', start: '1' }, `/dashboard/batches/${id}`);
      assert.equal(zpl.statusCode, 303);
      const zplLink = new URL(String(zpl.headers.location));
      const zplBody = (await t.app.inject({ method: 'GET', url: zplLink.pathname + zplLink.search })).body;
      assert.equal(zplBody.match(/\^XA/g)?.length, 3);

      // The list shows the batch, done.
      const after = await v.get('/dashboard/batches');
      assert.ok(after.body.includes(`<a href="/dashboard/batches/${id}">`));
      assert.match(textOf(after), /completed ZPL, 4x6 3 of 3 done 0/);
    });

    it('the example file of the upload page is a valid batch', async () => {
      const v = await signedIn(t, (await t.newAccount()).accountId);
      const example = await v.get('/dashboard/batches/example.csv');
      assert.equal(example.statusCode, 200);
      assert.match(String(example.headers['content-type']), /^text\/csv/);
      assert.match(String(example.headers['content-disposition']), /attachment; filename="batch-example.csv"/);
      assert.equal(example.body.split('\r\n')[0], CSV_COLUMNS.map((c) => c.name).join(','));
      const res = await upload(v, example.body);
      assert.equal(res.statusCode, 303, textOf(res).slice(0, 2000));
    });

    it('a batch naming another account\'s shipment shows nothing of it', async () => {
      const victim = await t.newAccount();
      const theirs = (await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': victim.apiKey }, payload: { ...sampleShipment, reference: 'SECRET-REF', to: { ...sampleShipment.to, name: 'Victim Person' } } })).json();
      const acct = await t.newAccount();
      const batch = await t.app.inject({ method: 'POST', url: '/v1/batches', headers: { 'x-api-key': acct.apiKey }, payload: { items: [{ shipmentId: theirs.id }] } });
      assert.equal(batch.statusCode, 202, batch.body);
      await runBatches(t);
      const v = await signedIn(t, acct.accountId);
      const page = await v.get(`/dashboard/batches/${batch.json().id}`);
      assert.equal(page.statusCode, 200);
      assert.match(textOf(page), /NOT_FOUND/);
      assert.ok(!page.body.includes('SECRET-REF') && !page.body.includes('Victim Person'), 'nothing of the other account\'s shipment');
    });

    it('names a batch after its file: without a folder, control or invisible characters, at most 200 characters, escaped on the page', async () => {
      const acct = await t.newAccount();
      const v = await signedIn(t, acct.accountId);
      const cases: [string, string | null][] = [
        ['C:\\Users\\pack\\Desktop\\orders.csv', 'orders.csv'],
        ['../../etc/orders <b>2 & 3.csv', 'orders <b>2 & 3.csv'],
        ['\u202Evsc.exe\u200B', 'vsc.exe'],
        [`${'x'.repeat(250)}.csv`, 'x'.repeat(200)],
        ['', null],
      ];
      for (const [sent, kept] of cases) {
        const res = await v.upload('/dashboard/batches', { format: 'PDF', size: '4x6' }, { ...FILE, filename: sent, content: csv([DOMESTIC]) }, '/dashboard/batches');
        assert.equal(res.statusCode, 303, textOf(res).slice(0, 1000));
        const id = /([0-9a-f-]{36})$/.exec(String(res.headers.location))![1]!;
        const batch = (await t.app.inject({ method: 'GET', url: `/v1/batches/${id}`, headers: { 'x-api-key': acct.apiKey } })).json();
        assert.equal(batch.name, kept, JSON.stringify(sent));
        if (kept?.includes('<')) assert.ok((await v.get(`/dashboard/batches/${id}`)).body.includes('<dd>orders &#60;b&#62;2 &#38; 3.csv</dd>'), 'escaped');
      }
    });

    it('the same file uploaded again within a day is made only when asked for: its labels would be made twice', async () => {
      const acct = await t.newAccount();
      const v = await signedIn(t, acct.accountId);
      const count = async () => (await t.app.inject({ method: 'GET', url: '/v1/batches', headers: { 'x-api-key': acct.apiKey } })).json().length;
      assert.equal((await upload(v, csv([DOMESTIC]))).statusCode, 303);
      const twice = await upload(v, csv([DOMESTIC]));
      assert.equal(twice.statusCode, 409);
      assert.match(twice.body, /<p class="error" id="f-file-error">shipments\.csv was uploaded at \d{4}-\d\d-\d\d \d\d:\d\d UTC, as a batch of 1 \(listed below\)\. To make its labels again, tick “Upload it again” and choose the file again\.<\/p>/);
      assert.match(twice.body, /<input type="checkbox" id="f-again" name="again" value="yes"> Upload it again/);
      assert.equal(await count(), 1);
      const asked = await upload(v, csv([DOMESTIC]), { format: 'PDF', size: '4x6', again: 'yes' });
      assert.equal(asked.statusCode, 303, textOf(asked).slice(0, 1000));
      assert.equal(await count(), 2);
      // Batches of that file whose items all failed made no label: the file comes back corrected, asking nothing.
      await t.ctx.db.updateTable('batches').set({ status: 'completed', succeeded: 0, failed: 1, next_index: 1 }).where('account_id', '=', acct.accountId).execute();
      assert.equal((await upload(v, csv([DOMESTIC]))).statusCode, 303);
      assert.equal(await count(), 3);
      // Another file's name is no matter.
      const other = await v.upload('/dashboard/batches', { format: 'PDF', size: '4x6' }, { ...FILE, filename: 'tuesday.csv', content: csv([DOMESTIC]) }, '/dashboard/batches');
      assert.equal(other.statusCode, 303);
    });

    it('the same upload form sent again (Back and submit, a double click) makes no second batch', async () => {
      const acct = await t.newAccount();
      const v = await signedIn(t, acct.accountId);
      const page = await v.get('/dashboard/batches');
      const formKey = /<input type="hidden" name="formKey" value="([0-9a-f-]{36})">/.exec(page.body)?.[1];
      assert.ok(formKey, 'the upload form carries a key of its own');
      const first = await upload(v, csv([DOMESTIC]), { format: 'PDF', size: '4x6', formKey });
      assert.equal(first.statusCode, 303, textOf(first).slice(0, 1000));
      const again = await upload(v, csv([DOMESTIC]), { format: 'PDF', size: '4x6', formKey });
      assert.equal(again.statusCode, 303);
      assert.equal(again.headers.location, first.headers.location);
      assert.match(noticeOf(again) ?? '', /^This form was already sent: this is the batch it made\. Nothing new was created\.$/);
      const batches = await t.app.inject({ method: 'GET', url: '/v1/batches', headers: { 'x-api-key': acct.apiKey } });
      assert.equal(batches.json().length, 1);
      // The page shown again gives the form a new key (a second upload of the same file then asks first).
      const next = /name="formKey" value="([0-9a-f-]{36})"/.exec((await v.get('/dashboard/batches')).body)?.[1];
      assert.notEqual(next, formKey);
    });

    it('a file with problems is 400 listing every one by row and column, and nothing is created', async () => {
      const v = await signedIn(t, (await t.newAccount()).accountId);
      const batches = await countRows(t.ctx, 'batches');
      const shipments = await countRows(t.ctx, 'shipments');
      const rows = [
        { ...DOMESTIC, to_postal_code: '1011' }, // row 2: not a US ZIP code
        { ...DOMESTIC, carrier: 'TNT' }, // row 3
        { ...DOMESTIC, weight: '1,5' }, // row 4
        DOMESTIC, // row 5: fine
        { ...INTERNATIONAL, item_quantity: 'two', item2_currency: '' }, // row 6
        { ...INTERNATIONAL, customs_contents_type: '', customs_signer: '', item_description: '', item_quantity: '', item_weight: '', item_value: '', item_currency: '', item_hs_code: '', item_origin_country: '', item2_description: '', item2_quantity: '', item2_weight: '', item2_weight_unit: '', item2_value: '', item2_currency: '', item2_hs_code: '', item2_origin_country: '' }, // row 7: abroad without customs
        { ...DOMESTIC, to_street1: '2 Oak\nAve', reference: 'a\u0007b' }, // row 8: a line break is a space, a bell a control character
      ];
      const res = await upload(v, csv(rows));
      assert.equal(res.statusCode, 400);
      assertAccessible(res.body);
      const text = textOf(res);
      assert.match(text, /The file was refused; no batch was created/);
      assert.match(text, /Row 2, to_postal_code \(to\.postalCode\): 1011 is not a postal code of UNITED STATES/);
      assert.match(text, /Row 3, carrier: must be one of UPS, USPS, FedEx, DHL/);
      assert.match(text, /Row 4, weight \(parcel\.weight\.value\): “1,5” is not a number \(write decimals with a point: 1\.5\)/);
      assert.doesNotMatch(text, /Row 5/);
      assert.match(text, /Row 6, item_quantity \(customs\.items\[0\]\.quantity\): “two” is not a whole number/);
      assert.match(text, /Row 6, item2_currency \(customs\.items\[1\]\.value\.currency\): is required/);
      assert.match(text, /Row 7, customs_contents_type, customs_signer, item_… \(customs\): is required: the parcel crosses a customs border/);
      // Named as the API names them, never as a pattern.
      assert.doesNotMatch(text, /Row 8, to_street1/);
      assert.match(text, /Row 8, reference: must not contain control characters/);
      assert.doesNotMatch(text, /must match pattern|printable character/);
      assert.match(res.body, /<div class="error-summary" role="alert" tabindex="-1" id="error-summary">/);
      assert.match(res.body, /aria-invalid="true"/);
      assert.equal(await countRows(t.ctx, 'batches'), batches);
      assert.equal(await countRows(t.ctx, 'shipments'), shipments);
    });

    it('a line break or tab inside a cell (Alt+Enter in a spreadsheet) is one space, as on the new-shipment form', async () => {
      const acct = await t.newAccount();
      const v = await signedIn(t, acct.accountId);
      const header = Object.keys(DOMESTIC).join(',');
      const row = { ...DOMESTIC, reference: 'Order\t 7', to_street1: '350 Fifth \r\n Avenue', to_street2: 'Suite\n2100' };
      const line = Object.values(row).map((c) => (/[\r\n]/.test(c) ? `"${c}"` : c)).join(',');
      const res = await upload(v, `${header}\r\n${line}\r\n`);
      assert.equal(res.statusCode, 303, textOf(res).slice(0, 1000));
      await runBatches(t);
      const batch = (await t.app.inject({ method: 'GET', url: `/v1/batches/${/([0-9a-f-]{36})$/.exec(String(res.headers.location))![1]}`, headers: { 'x-api-key': acct.apiKey } })).json();
      const shipment = (await t.app.inject({ method: 'GET', url: `/v1/shipments/${batch.items[0].shipmentId}`, headers: { 'x-api-key': acct.apiKey } })).json();
      assert.equal(shipment.reference, 'Order 7');
      assert.equal(shipment.to.street1, '350 Fifth Avenue');
      assert.equal(shipment.to.street2, 'Suite 2100');
    });

    it('a row whose cells do not line up with the header is named as such, not by its shifted columns', async () => {
      const v = await signedIn(t, (await t.newAccount()).accountId);
      const [header, first, second, third] = exampleCsv().split('\r\n') as [string, string, string, string];
      // Trailing empty cells left out, as a spreadsheet may: the row is taken.
      const trimmed = first.replace(/,+$/, '');
      assert.ok(trimmed.split(',').length < CSV_COLUMNS.length);
      assert.equal((await upload(v, `${header}\r\n${trimmed}\r\n`)).statusCode, 303);
      const rows = [
        first.replace(',1.5,lb,', ',1,5,lb,'), // row 2: an unquoted decimal comma, the last cell empty
        second, // row 3: fine
        third.slice(0, third.indexOf(',3,kg,')), // row 4: cut before its weight
        trimmed, // row 5: trailing empty cells left out
      ];
      const res = await upload(v, `${header}\r\n${rows.join('\r\n')}\r\n`);
      assert.equal(res.statusCode, 400);
      const text = textOf(res);
      assert.match(text, new RegExp(`Row 2 has ${CSV_COLUMNS.length + 1} cells where the header has ${CSV_COLUMNS.length}: a comma inside a cell \\(a decimal comma such as 1,5, or an address\\) needs the cell in double quotes`));
      assert.doesNotMatch(text, /Row 2,/, 'no problems of columns the cells slid into');
      assert.match(text, new RegExp(`Row 4 has ${third.slice(0, third.indexOf(',3,kg,')).split(',').length} cells where the header has ${CSV_COLUMNS.length}, so none for weight, weight_unit: a row needs one cell for every column`));
      assert.doesNotMatch(text, /Row 4,|Row [35]/);
      assert.match(text, /Correct these 2 problems/);
    });

    it('a quoting mistake is named by its row (a quoted line break making no new row) and its column', async () => {
      const v = await signedIn(t, (await t.newAccount()).accountId);
      const header = Object.keys(DOMESTIC).join(',');
      const line = Object.values(DOMESTIC).join(',');
      const twoLines = line.replace('Suite 2100', '"Suite\n2100"');
      const cases: [string, RegExp][] = [
        [`${header}\n${twoLines}\n${line.replace('Ada Lovelace', 'Grace "Amazing" Hopper')}\n`, /^Row 3, to_name: a double quote inside a cell needs the whole cell in double quotes and the quote doubled \("Grace ""Amazing"" Hopper"\)$/],
        [`${header}\n${line.replace('Ada Lovelace', '"Grace" Hopper')}\n`, /^Row 2, to_name: the cell begins with a double quote, so it must end with one, right before the next comma; a double quote inside it is doubled \("Grace ""Amazing"" Hopper"\)$/],
        [`${header}\n${twoLines}\n${line.replace('Ada Lovelace', '"Grace"Hopper')}\n`, /^Row 3, to_name: the cell begins with a double quote, so it must end with one/],
        [`${header}\n${twoLines}\n\n${line}\n${line.replace('Suite 2100', '"Suite 2100')}\n${line}\n`, /^Row 5, to_street2: the double quote that begins this cell is never closed, so the rest of the file was read as this one cell/],
        [`refer"ence,${header.slice('reference,'.length)}\n${line}\n`, /^Row 1, cell 1: a double quote inside a cell needs the whole cell in double quotes and the quote doubled \("refer""ence"\)$/],
      ];
      for (const [content, message] of cases) {
        const res = await upload(v, content);
        assert.equal(res.statusCode, 400);
        const problems = [...res.body.matchAll(/<li><a href="#f-file">([^<]*)<\/a><\/li>/g)].map((m) => m[1]!.replace(/&#(\d+);/g, (_m, c) => String.fromCharCode(Number(c))));
        assert.equal(problems.length, 1, problems.join('\n'));
        assert.match(problems[0]!, message);
      }
    });

    it('a file that is not a list of shipments is 400 with a clear message', async () => {
      const v = await signedIn(t, (await t.newAccount()).accountId);
      const batches = await countRows(t.ctx, 'batches');
      const header = Object.keys(DOMESTIC).join(',');
      const line = Object.values(DOMESTIC).join(',');
      const cases: [string | Buffer, RegExp][] = [
        [csv([{ ...DOMESTIC, colour: 'red', Gift_Wrap: 'no' }]), /The header names columns that are not known: colour, gift_wrap\./],
        ['', /The file is empty/],
        [`${header}\n\n`, /The file has a header row but no shipment rows/],
        [`${header}\n${`${line}\n`.repeat(1001)}`, /The file has 1001 shipment rows; a batch takes at most 1,000/],
        [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]), /The file is not a CSV text file/],
        [Buffer.from('carrier,service\nUPS,gr\xfcn\n', 'latin1'), /not a CSV text file in UTF-8/],
        [`${header}\n"unclosed,${line}\n`, /Row 2, reference: the double quote that begins this cell is never closed/],
        [header.replaceAll(',', ';'), /the columns must be separated by commas/],
        [`${header.replaceAll(',', '\t')}\n${line.replaceAll(',', '\t')}\n`, /The header row is one column, .*: the columns must be separated by commas \(not semicolons or tabs\)/],
        ['carrier,service,carrier\nUPS,ground,UPS\n', /a column more than once: carrier/],
        ['carrier,service\nUPS,ground\n', /The header lacks required columns: from_name, from_street1, from_city, from_country, to_name/],
        [`${header},\n${line},surplus\n`, new RegExp(`Row 2: cell ${Object.keys(DOMESTIC).length + 1} holds “surplus”, but the header has no column name there`)],
        [`${header}\n${line},surplus\n`, new RegExp(`Row 2 has ${Object.keys(DOMESTIC).length + 1} cells where the header has ${Object.keys(DOMESTIC).length}: a comma inside a cell`)],
      ];
      for (const [content, message] of cases) {
        const res = await upload(v, content);
        assert.equal(res.statusCode, 400, `${message}: ${res.statusCode}`);
        assert.match(textOf(res), message);
      }
      const noFile = await v.post('/dashboard/batches', { format: 'PDF', size: '4x6' }, '/dashboard/batches');
      assert.equal(noFile.statusCode, 400);
      assert.match(textOf(noFile), /Choose a CSV file to upload/);
      const badFormat = await upload(v, csv([DOMESTIC]), { format: 'DOCX', size: '4x6' });
      assert.equal(badFormat.statusCode, 400);
      assert.match(textOf(badFormat), /Format: must be one of PDF, PNG, ZPL/);
      const tooBig = await upload(v, Buffer.alloc(2 * 1024 * 1024 + 10, 'a'));
      assert.equal(tooBig.statusCode, 413);
      assert.equal(await countRows(t.ctx, 'batches'), batches);
    });

    it('a file over 2 MiB is 413 on the upload form, saying so at the file, with the format and size sent before it', async () => {
      const v = await signedIn(t, (await t.newAccount()).accountId);
      const batches = await countRows(t.ctx, 'batches');
      const page = await v.get('/dashboard/batches');
      // A browser sends the fields in the form's order: the format and size are read before the file.
      assert.ok(page.body.indexOf('name="format"') < page.body.indexOf('name="file"'), 'format before file');
      assert.ok(page.body.indexOf('name="size"') < page.body.indexOf('name="file"'), 'size before file');
      const formKey = /name="formKey" value="([0-9a-f-]{36})"/.exec(page.body)![1]!;
      const res = await upload(v, Buffer.alloc(2 * 1024 * 1024 + 10, 'a'), { formKey, format: 'ZPL', size: '4x8' });
      assert.equal(res.statusCode, 413);
      assertAccessible(res.body);
      assert.match(res.body, /<form method="post" action="\/dashboard\/batches" enctype="multipart\/form-data">/);
      assert.match(res.body, /<input type="file" id="f-file" name="file" accept="\.csv,text\/csv" required aria-describedby="f-file-hint f-file-error" aria-invalid="true">/);
      assert.match(res.body, /<p class="error" id="f-file-error">The file is larger than 2 MiB, the most one upload takes: split it into files of up to 1,000 rows, and check that it is the CSV export of the spreadsheet, not the spreadsheet itself\.<\/p>/);
      assert.match(textOf(res), /The form has problems CSV file: The file is larger than 2 MiB/);
      assert.match(res.body, /<option value="ZPL" selected>/);
      assert.match(res.body, /<option value="4x8" selected>/);
      assert.ok(res.body.includes(`<input type="hidden" name="formKey" value="${formKey}">`), 'the form keeps its key');
      assert.match(textOf(res), /Your batches/);
      // Without the form's token it is the dashboard's 403, as for a small file: no page of the account's batches.
      for (const _csrf of ['forged', '']) {
        const forged = await upload(v, Buffer.alloc(2 * 1024 * 1024 + 10, 'a'), { _csrf, formKey, format: 'ZPL', size: '4x8' });
        assert.equal(forged.statusCode, 403, forged.body.slice(0, 300));
        assert.doesNotMatch(textOf(forged), /Your batches/);
      }
      assert.equal(await countRows(t.ctx, 'batches'), batches);
    });

    it("another account's batch is 404, and a form without its token is 403", async () => {
      const mine = await t.newAccount();
      const theirs = await t.newAccount();
      const v = await signedIn(t, mine.accountId);
      const created = await t.app.inject({ method: 'POST', url: '/v1/batches', headers: { 'x-api-key': theirs.apiKey }, payload: { items: [{ shipment: sampleShipment }] } });
      assert.equal(created.statusCode, 202);
      const id = created.json().id;
      await runBatches(t);
      assert.equal((await v.get(`/dashboard/batches/${id}`)).statusCode, 404);
      assert.equal((await v.get('/dashboard/batches/not-an-id')).statusCode, 404);
      assert.equal((await v.post(`/dashboard/batches/${id}/print-file`, { format: 'PDF', layout: 'label', start: '1' }, '/dashboard/batches')).statusCode, 404);
      assert.ok(!(await v.get('/dashboard/batches')).body.includes(id), "another account's batch is not listed");

      const batches = await countRows(t.ctx, 'batches');
      const cookie = [...v.cookies].map(([k, val]) => `${k}=${val}`).join('; ');
      const boundary = '----nocsrf';
      const payload = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\n${csv([DOMESTIC])}\r\n--${boundary}--\r\n`;
      const noToken = await t.app.inject({ method: 'POST', url: '/dashboard/batches', headers: { cookie, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload });
      assert.equal(noToken.statusCode, 403);
      assert.match(noToken.body, /without its security token/);
      const wrongToken = await v.post('/dashboard/batches', { _csrf: 'forged', format: 'PDF' });
      assert.equal(wrongToken.statusCode, 403);
      assert.equal(await countRows(t.ctx, 'batches'), batches);
      const print = await t.app.inject({ method: 'POST', url: `/dashboard/batches/${id}/print-file`, headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'format=PDF' });
      assert.equal(print.statusCode, 403);
    });

    it('docs/batches.md documents every column', () => {
      const docs = readFileSync(new URL('../../docs/batches.md', import.meta.url), 'utf8');
      const section = docs.slice(docs.indexOf('## Uploading a CSV in the dashboard'));
      assert.ok(section.length > 100, 'the section exists');
      for (const c of CSV_COLUMNS) assert.ok(section.includes(`\`${c.name}\``), `docs name ${c.name}`);
    });

    it("the docs' example file is a valid batch of the shipments it describes", async () => {
      const acct = await t.newAccount();
      const v = await signedIn(t, acct.accountId);
      const docs = readFileSync(new URL('../../docs/batches.md', import.meta.url), 'utf8');
      const example = /## Uploading a CSV in the dashboard[\s\S]*?```csv\n([\s\S]*?)```/.exec(docs)?.[1];
      assert.ok(example, 'the section has an example file');
      const res = await upload(v, example);
      assert.equal(res.statusCode, 303, textOf(res).slice(0, 2000));
      await runBatches(t);
      const batches = (await t.app.inject({ method: 'GET', url: '/v1/batches', headers: { 'x-api-key': acct.apiKey } })).json();
      const batch = (await t.app.inject({ method: 'GET', url: `/v1/batches/${batches[0].id}`, headers: { 'x-api-key': acct.apiKey } })).json();
      assert.deepEqual(batch.counts, { total: 3, succeeded: 3, failed: 0 });
      const third = (await t.app.inject({ method: 'GET', url: `/v1/shipments/${batch.items[2].shipmentId}`, headers: { 'x-api-key': acct.apiKey } })).json();
      assert.deepEqual(third.to, { name: 'Grace Hopper', street1: '1 Market St', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' });
      assert.deepEqual(third.parcel, { weight: { value: 3, unit: 'kg' }, length: 30, width: 20, height: 10, dimensionUnit: 'cm' });
      assert.deepEqual(third.messages, ['Fragile']);
      const second = (await t.app.inject({ method: 'GET', url: `/v1/shipments/${batch.items[1].shipmentId}`, headers: { 'x-api-key': acct.apiKey } })).json();
      assert.deepEqual(second.customs.items[0].netWeight, { value: 0.8, unit: 'kg' });
    });
  });
});

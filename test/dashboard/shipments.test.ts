// The dashboard's shipment pages through app.inject: the list's search and filters, the new-shipment
// form's messages beside the fields, and the shipment page's actions, each checked through the API too.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { countRows, forEachDatabase, sampleShipment, startTestApp, type TestApp } from '../helpers.ts';
import { LABEL_FORMATS } from '../../src/render/index.ts';
import { noticeOf, signedIn, type Visitor } from './support.ts';

const DOMESTIC = {
  carrier: 'USPS',
  service: 'priority_mail',
  from: { name: 'Lager Süd', street1: '4100 Distribution Dr', city: 'Memphis', state: 'TN', postalCode: '38118', country: 'US' },
  to: { name: 'Ada Lovelace', street1: '350 Fifth Avenue', city: 'New York', state: 'NY', postalCode: '10118', country: 'US' },
  parcel: { weight: { value: 2, unit: 'lb' } },
};

/** The new-shipment form's fields for a body of the API (field names are the API's paths). */
function formOf(body: Record<string, any>): Record<string, string> {
  const out: Record<string, string> = { carrier: body.carrier, service: body.service, 'parcel.weight.value': String(body.parcel.weight.value), 'parcel.weight.unit': body.parcel.weight.unit };
  if (body.reference) out.reference = body.reference;
  for (const side of ['from', 'to']) for (const [k, v] of Object.entries(body[side])) out[`${side}.${k}`] = String(v);
  return out;
}

function messageBeside(body: string, id: string): string | undefined {
  return new RegExp(`<p class="error" id="${id}-error">([^<]*)</p>`).exec(body)?.[1];
}

forEachDatabase((database) => {
  describe('dashboard shipment pages', () => {
    let t: TestApp;
    let v: Visitor;
    before(async () => {
      t = await startTestApp(database);
      v = await signedIn(t);
    });
    after(async () => t.close());

    describe('POST /dashboard/shipments/new', () => {
      it('creates the shipment and its label in the format asked for, then shows it', async () => {
        const res = await v.post('/dashboard/shipments/new', { ...formOf({ ...DOMESTIC, reference: 'Form 1' }), 'label.format': 'ZPL', 'label.size': '4x6' }, '/dashboard/shipments/new');
        assert.equal(res.statusCode, 303, res.body.slice(0, 500));
        const id = /^\/dashboard\/shipments\/([0-9a-f-]{36})$/.exec(String(res.headers.location))![1]!;
        assert.match(noticeOf(res)!, /^Shipment created; label \S+ is ready\.$/);
        const api = (await t.request({ method: 'GET', url: `/v1/shipments/${id}` })).json();
        assert.equal(api.reference, 'Form 1');
        assert.deepEqual(api.to, DOMESTIC.to, 'kept as sent');
        // Codes typed in small letters are sent in capitals.
        const lower = await v.post('/dashboard/shipments/new', { ...formOf({ ...DOMESTIC, reference: 'Form 2' }), 'to.country': 'us', 'from.country': ' us ' }, '/dashboard/shipments/new');
        assert.equal(lower.statusCode, 303, lower.body.slice(0, 800));
        const label = (await t.request({ method: 'GET', url: `/v1/labels/${api.label.id}` })).json();
        assert.equal(label.format, 'PDF', 'GET answers in its own default format');
        const page = await v.get(`/dashboard/shipments/${id}`);
        assert.equal(page.statusCode, 200);
        assert.match(page.body, /<address>Ada Lovelace\n350 Fifth Avenue\nNEW YORK NY 10118<\/address>/, 'no country line at home');
      });

      it('fills the empty form with the sender of the account\'s last shipment that is not a return', async () => {
        const acct = await t.newAccount();
        const w = await signedIn(t, acct.accountId);
        const value = (body: string, name: string) => new RegExp(`name="${name.replace(/[.[\]]/g, '\\$&')}"[^>]* value="([^"]*)"`).exec(body)?.[1];
        const first = await w.get('/dashboard/shipments/new');
        assert.equal(value(first.body, 'from.name'), '', 'a new account: nothing to fill in');
        assert.doesNotMatch(first.body, /Filled in with the sender/);
        const sent = await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': acct.apiKey }, payload: { ...DOMESTIC, reference: 'Yesterday 17' } });
        assert.equal(sent.statusCode, 201, sent.body);
        // A return made since has the customer as its sender: it is not the warehouse's.
        assert.equal((await t.app.inject({ method: 'POST', url: `/v1/shipments/${sent.json().id}/returns`, headers: { 'x-api-key': acct.apiKey }, payload: {} })).statusCode, 201);
        const filled = await w.get('/dashboard/shipments/new');
        for (const [k, v] of Object.entries(DOMESTIC.from)) assert.equal(value(filled.body, `from.${k}`), v, k);
        assert.equal(value(filled.body, 'to.name'), '', 'the recipient is not filled in');
        assert.match(filled.body, /<p class="hint" id="f-from-hint">Filled in with the sender of your last shipment, Yesterday 17: change what differs\.<\/p>/);
      });

      it('the same form sent again (Back and submit, a double click) makes no second shipment or label', async () => {
        const empty = await v.get('/dashboard/shipments/new');
        const formKey = /<input type="hidden" name="formKey" value="([0-9a-f-]{36})">/.exec(empty.body)?.[1];
        assert.ok(formKey, 'the form carries a key of its own');
        assert.notEqual(/name="formKey" value="([0-9a-f-]{36})"/.exec((await v.get('/dashboard/shipments/new')).body)?.[1], formKey, 'a new one each time it is shown');
        const fields = { ...formOf({ ...DOMESTIC, reference: 'Sent twice' }), formKey };
        // Refused first: the form comes back with the same key, and nothing is kept for it.
        const refused = await v.post('/dashboard/shipments/new', { ...fields, 'to.postalCode': '94105' }, '/dashboard/shipments/new');
        assert.equal(refused.statusCode, 400);
        assert.match(refused.body, new RegExp(`name="formKey" value="${formKey}"`));
        const before = await countRows(t.ctx, 'shipments');
        const first = await v.post('/dashboard/shipments/new', fields, '/dashboard/shipments/new');
        assert.equal(first.statusCode, 303, first.body.slice(0, 500));
        const again = await v.post('/dashboard/shipments/new', fields, '/dashboard/shipments/new');
        assert.equal(again.statusCode, 303);
        assert.equal(again.headers.location, first.headers.location, 'back on the shipment the form made');
        assert.match(noticeOf(again) ?? '', /^This form was already sent: this is the shipment it made\. Nothing new was created\.$/);
        assert.equal(await countRows(t.ctx, 'shipments'), before + 1);
        // Sent twice at once (a double click): the second waits for the first's answer and goes there too.
        const twiceKey = /name="formKey" value="([0-9a-f-]{36})"/.exec((await v.get('/dashboard/shipments/new')).body)![1]!;
        const both = await Promise.all([0, 1].map(() => v.post('/dashboard/shipments/new', { ...fields, formKey: twiceKey, reference: 'Clicked twice' }, '/dashboard/shipments/new')));
        assert.deepEqual(both.map((r) => r.statusCode), [303, 303]);
        assert.equal(both[0]!.headers.location, both[1]!.headers.location);
        assert.equal(await countRows(t.ctx, 'shipments'), before + 2);
        // A key whose first sending died before it recorded what it made (its answer taken back here): nothing is made, and the page says so.
        const lostKey = '0190aaaa-0000-7000-8000-000000000001';
        assert.equal((await v.post('/dashboard/shipments/new', { ...fields, formKey: lostKey }, '/dashboard/shipments/new')).statusCode, 303);
        const died = await t.ctx.db.updateTable('idempotency_keys').set({ status_code: null, content_type: null, response_body: null, created_at: '2026-01-02T10:00:00.000Z' }).where('account_id', '=', t.accountId).where('key', 'like', `dashboard-form:${lostKey}:%`).executeTakeFirst();
        assert.equal(Number(died.numUpdatedRows), 1);
        const lost = await v.post('/dashboard/shipments/new', { ...fields, formKey: lostKey }, '/dashboard/shipments/new');
        assert.equal(lost.headers.location, '/dashboard/shipments');
        assert.equal(noticeOf(lost), 'This form was sent at 2026-01-02 10:00:00 UTC, and what it made was not recorded. Look for its shipment in this list before sending it again.');
        assert.equal(await countRows(t.ctx, 'shipments'), before + 3);
        // The same form filled in otherwise after Back (another recipient) is another shipment, made.
        const changed = await v.post('/dashboard/shipments/new', { ...fields, 'to.name': 'Someone Else' }, '/dashboard/shipments/new');
        assert.equal(changed.statusCode, 303);
        assert.notEqual(changed.headers.location, first.headers.location);
        assert.equal(await countRows(t.ctx, 'shipments'), before + 4);
        // Another account sending the same key makes its own shipment: keys are per account.
        const other = await signedIn(t, (await t.newAccount()).accountId);
        const theirs = await other.post('/dashboard/shipments/new', fields, '/dashboard/shipments/new');
        assert.equal(theirs.statusCode, 303, theirs.body.slice(0, 300));
        assert.notEqual(theirs.headers.location, first.headers.location);
      });

      it('shows the API\'s messages beside the fields, keeps what was typed, and creates nothing', async () => {
        const before = await countRows(t.ctx, 'shipments');
        const fields = { ...formOf(DOMESTIC), 'to.postalCode': '94105', 'parcel.weight.value': '2' };
        const res = await v.post('/dashboard/shipments/new', fields, '/dashboard/shipments/new');
        assert.equal(res.statusCode, 400);
        assert.equal(messageBeside(res.body, 'f-to-postalCode'), 'ZIP code 94105 is in CA, not NY');
        assert.match(res.body, /<input type="text" id="f-to-postalCode" name="to.postalCode"[^>]* aria-describedby="f-to-postalCode-hint f-to-postalCode-error" aria-invalid="true" value="94105">/);
        assert.match(res.body, /<div class="error-summary" role="alert"[^>]*>.*Postal code, To \(recipient\): ZIP code 94105 is in CA, not NY/s);
        const schema = await v.post('/dashboard/shipments/new', { ...formOf(DOMESTIC), 'parcel.weight.value': 'heavy', carrier: 'Pigeon' }, '/dashboard/shipments/new');
        assert.equal(schema.statusCode, 400);
        assert.equal(messageBeside(schema.body, 'f-parcel-weight-value'), 'heavy is not a number');
        // A decimal comma is said to be one (a number field of some browsers would have made it 15).
        const comma = await v.post('/dashboard/shipments/new', { ...formOf(DOMESTIC), 'parcel.weight.value': '1,5' }, '/dashboard/shipments/new');
        assert.equal(messageBeside(comma.body, 'f-parcel-weight-value'), '1,5 is not a number (write decimals with a point: 1.5)');
        assert.match(comma.body, /<input type="text" id="f-parcel-weight-value" name="parcel.weight.value" required inputmode="decimal"/);
        assert.equal(messageBeside(schema.body, 'f-carrier'), 'must be one of UPS, USPS, FedEx, DHL');
        // A recipient left empty: each of its required fields says so in the first round, not only the group.
        const empty = await v.post('/dashboard/shipments/new', Object.fromEntries(Object.entries(formOf(DOMESTIC)).filter(([k]) => !k.startsWith('to.'))), '/dashboard/shipments/new');
        assert.equal(empty.statusCode, 400);
        for (const key of ['name', 'street1', 'city', 'country']) assert.equal(messageBeside(empty.body, `f-to-${key}`), 'is required', key);
        assert.equal(messageBeside(empty.body, 'f-to'), undefined, 'nothing more on the group');
        // Postal code and state are not called optional: they are required where the post needs them.
        assert.match(empty.body, /<label for="f-to-postalCode">Postal code <span class="optional">\(required in most countries\)<\/span><\/label>/);
        assert.match(empty.body, /<label for="f-to-state">State or province <span class="optional">\(required in the US, Canada and Australia\)<\/span><\/label>/);
        assert.equal(await countRows(t.ctx, 'shipments'), before);
      });

      it('shows a problem of a whole part on its fieldset: customs across a border', async () => {
        const res = await v.post('/dashboard/shipments/new', formOf(sampleShipment), '/dashboard/shipments/new');
        assert.equal(res.statusCode, 400);
        assert.match(messageBeside(res.body, 'f-customs') ?? '', /^is required: the parcel crosses a customs border \(from DE to US\)$/);
        assert.match(res.body, /<fieldset id="f-customs" aria-describedby="f-customs-hint f-customs-error">/);
        // The declaration's fields say when they are needed, not "(optional)".
        assert.match(res.body, /<label for="f-customs-contentsType">Contents <span class="optional">\(required across a customs border\)<\/span><\/label>/);
        assert.match(res.body, /<label for="f-customs-signer">Signed by <span class="optional">\(required with a declaration\)<\/span><\/label>/);
        assert.match(res.body, /<label for="f-customs-items-0-netWeight-unit">Net weight unit <span class="optional">\(optional\)<\/span><\/label>/);
      });

      it('shows what the carrier, service and addresses decide in the same round as the other problems: the route, the address checks, a missing declaration', async () => {
        const before = await countRows(t.ctx, 'shipments');
        // Berlin to New York with UPS ground (domestic), no declaration, and a weight that is no number.
        const res = await v.post('/dashboard/shipments/new', { ...formOf(sampleShipment), service: 'ground', 'parcel.weight.value': 'heavy' }, '/dashboard/shipments/new');
        assert.equal(res.statusCode, 400);
        assert.equal(messageBeside(res.body, 'f-parcel-weight-value'), 'heavy is not a number');
        assert.match(messageBeside(res.body, 'f-service') ?? '', /^UPS&#39;s ground carries parcels within the United States and Puerto Rico, not from DE to US; choose worldwide_saver, worldwide_expedited$/);
        assert.match(messageBeside(res.body, 'f-customs') ?? '', /^is required: the parcel crosses a customs border \(from DE to US\)$/);
        // An e-mail address with a problem holds nothing back.
        const email = await v.post('/dashboard/shipments/new', { ...formOf(sampleShipment), service: 'ground', 'to.email': 'klaus@becker', 'parcel.weight.value': '1,5' }, '/dashboard/shipments/new');
        assert.equal(email.statusCode, 400);
        assert.ok(messageBeside(email.body, 'f-to-email'));
        assert.match(messageBeside(email.body, 'f-service') ?? '', /^UPS&#39;s ground carries parcels within/);
        assert.match(messageBeside(email.body, 'f-customs') ?? '', /^is required: the parcel crosses a customs border/);
        // The addresses' own checks too, and a carrier's service it does not offer.
        const zip = await v.post('/dashboard/shipments/new', { ...formOf(DOMESTIC), carrier: 'FedEx', service: 'priority_mail', 'to.postalCode': '94105', 'parcel.weight.value': 'heavy' }, '/dashboard/shipments/new');
        assert.equal(zip.statusCode, 400);
        assert.equal(messageBeside(zip.body, 'f-parcel-weight-value'), 'heavy is not a number');
        assert.equal(messageBeside(zip.body, 'f-to-postalCode'), 'ZIP code 94105 is in CA, not NY');
        assert.match(messageBeside(zip.body, 'f-service') ?? '', /^must be one of ground, /);
        // A problem of an address or the carrier leaves the route to the next round (it cannot be judged yet).
        const country = await v.post('/dashboard/shipments/new', { ...formOf(sampleShipment), service: 'ground', 'to.country': 'XX', 'parcel.weight.value': 'heavy' }, '/dashboard/shipments/new');
        assert.equal(country.statusCode, 400);
        assert.equal(messageBeside(country.body, 'f-service'), undefined);
        assert.equal(messageBeside(country.body, 'f-customs'), undefined);
        assert.equal(await countRows(t.ctx, 'shipments'), before);
      });

      it('declares contents of the kind "other" with what they are (§12: other needs contentsExplanation)', async () => {
        const item = sampleShipment.customs.items[0];
        const customs = {
          'customs.contentsType': 'other',
          'customs.signer': 'Jürgen Müller',
          'customs.items[0].description': item.description,
          'customs.items[0].quantity': String(item.quantity),
          'customs.items[0].netWeight.value': String(item.netWeight.value),
          'customs.items[0].netWeight.unit': item.netWeight.unit,
          'customs.items[0].value.amount': String(item.value.amount),
          'customs.items[0].value.currency': item.value.currency,
          'customs.items[0].hsCode': item.hsCode,
          'customs.items[0].originCountry': item.originCountry,
        };
        const without = await v.post('/dashboard/shipments/new', { ...formOf(sampleShipment), ...customs }, '/dashboard/shipments/new');
        assert.equal(without.statusCode, 400);
        assert.match(messageBeside(without.body, 'f-customs-contentsExplanation') ?? '', /required when contentsType is other/);
        const res = await v.post('/dashboard/shipments/new', { ...formOf(sampleShipment), ...customs, 'customs.contentsExplanation': 'Trade fair samples' }, '/dashboard/shipments/new');
        assert.equal(res.statusCode, 303, res.body.slice(0, 800));
        const id = /^\/dashboard\/shipments\/([0-9a-f-]{36})$/.exec(String(res.headers.location))![1]!;
        const api = (await t.request({ method: 'GET', url: `/v1/shipments/${id}` })).json();
        assert.deepEqual([api.customs.contentsType, api.customs.contentsExplanation], ['other', 'Trade fair samples']);
        // The net weight's unit left at "as the parcel's": the parcel's unit, as in the CSV upload.
        const { 'customs.items[0].netWeight.unit': _unit, ...noUnit } = customs;
        const parcelUnit = await v.post('/dashboard/shipments/new', { ...formOf(sampleShipment), ...noUnit, 'customs.contentsExplanation': 'Trade fair samples' }, '/dashboard/shipments/new');
        assert.equal(parcelUnit.statusCode, 303, parcelUnit.body.slice(0, 800));
        const second = /^\/dashboard\/shipments\/([0-9a-f-]{36})$/.exec(String(parcelUnit.headers.location))![1]!;
        const made = (await t.request({ method: 'GET', url: `/v1/shipments/${second}` })).json();
        assert.deepEqual(made.customs.items[0].netWeight, { value: item.netWeight.value, unit: sampleShipment.parcel.weight.unit });
        // Problems of what the form asks in parts are said in its words, beside the part or the group.
        const { 'customs.items[0].netWeight.value': _value, ...noNet } = customs;
        const noWeight = await v.post('/dashboard/shipments/new', { ...formOf(sampleShipment), ...noNet, 'customs.contentsExplanation': 'Samples' }, '/dashboard/shipments/new');
        assert.equal(noWeight.statusCode, 400);
        assert.ok(messageBeside(noWeight.body, 'f-customs-items-0-netWeight-value'), noWeight.body.slice(0, 3000));
        const heavy = await v.post('/dashboard/shipments/new', { ...formOf(sampleShipment), ...customs, 'customs.contentsExplanation': 'Samples', 'customs.items[0].netWeight.value': '5000', 'customs.items[0].netWeight.unit': 'g' }, '/dashboard/shipments/new');
        assert.equal(heavy.statusCode, 400);
        assert.match(messageBeside(heavy.body, 'f-customs') ?? '', /^Items: the items&#39; net weights add up to 5 kg, more than the parcel&#39;s 1.2 kg$/);
      });

      it('asks a US export over 2,500 USD of one HS code for its EEI filing, beside the field, and takes it', async () => {
        const fields = {
          ...formOf({ ...DOMESTIC, carrier: 'UPS', service: 'worldwide_saver', to: sampleShipment.from }),
          'customs.contentsType': 'merchandise',
          'customs.signer': 'Ada Byron',
          'customs.items[0].description': 'Laptop computer',
          'customs.items[0].quantity': '1',
          'customs.items[0].netWeight.value': '1',
          'customs.items[0].value.amount': '3000',
          'customs.items[0].value.currency': 'USD',
          'customs.items[0].hsCode': '847130',
          'customs.items[0].originCountry': 'US',
        };
        const page = await v.get('/dashboard/shipments/new');
        assert.match(page.body, /<label for="f-customs-eelPfc">EEI \(goods leaving the US\) <span class="optional">\(required over 2,500 USD of one HS code\)<\/span><\/label>/);
        const refused = await v.post('/dashboard/shipments/new', fields, '/dashboard/shipments/new');
        assert.equal(refused.statusCode, 400);
        assert.match(messageBeside(refused.body, 'f-customs-eelPfc') ?? '', /^is required: the items of HS code 847130 are worth 3000 USD/);
        // In the same round as a weight typed with a comma, and the declaration's other rules.
        const together = await v.post('/dashboard/shipments/new', { ...fields, 'parcel.weight.value': '12,5', 'customs.contentsType': 'other' }, '/dashboard/shipments/new');
        assert.equal(together.statusCode, 400);
        assert.match(messageBeside(together.body, 'f-parcel-weight-value') ?? '', /^12,5 is not a number/);
        assert.match(messageBeside(together.body, 'f-customs-eelPfc') ?? '', /^is required: /);
        assert.match(messageBeside(together.body, 'f-customs-contentsExplanation') ?? '', /^is required when contentsType is other/);
        // The summary reads from the top of the form down.
        const order = [...together.body.matchAll(/<li><a href="#(f-[^"]+)">/g)].map((m) => m[1]);
        assert.deepEqual(order, ['f-parcel-weight-value', 'f-customs-contentsExplanation', 'f-customs-eelPfc']);
        // Lower case, or the ITN alone, is taken as AES and the ITN.
        const bare = await v.post('/dashboard/shipments/new', { ...fields, 'customs.eelPfc': 'x20261129123456', reference: 'ITN alone' }, '/dashboard/shipments/new');
        assert.equal(bare.statusCode, 303, bare.body.slice(0, 2000));
        const made = (await t.request({ method: 'GET', url: `/v1/shipments/${/([0-9a-f-]{36})$/.exec(String(bare.headers.location))![1]}` })).json();
        assert.equal(made.customs.eelPfc, 'AES X20261129123456');
        const taken = await v.post('/dashboard/shipments/new', { ...fields, 'customs.eelPfc': 'AES X20261129123456' }, '/dashboard/shipments/new');
        assert.equal(taken.statusCode, 303, taken.body.slice(0, 2000));
      });

      it('declares up to three lines of contents; a line left empty before one in use is named, and lines in use must be whole', async () => {
        const line = (i: number, description: string, hsCode: string) => ({
          [`customs.items[${i}].description`]: description,
          [`customs.items[${i}].quantity`]: '1',
          [`customs.items[${i}].netWeight.value`]: '0.2',
          [`customs.items[${i}].value.amount`]: '12.50',
          [`customs.items[${i}].value.currency`]: 'eur',
          [`customs.items[${i}].hsCode`]: hsCode,
          [`customs.items[${i}].originCountry`]: 'de',
        });
        const declaration = { 'customs.contentsType': 'merchandise', 'customs.signer': 'Jürgen Müller' };
        const page = await v.get('/dashboard/shipments/new');
        for (const n of [1, 2, 3]) assert.match(page.body, new RegExp(`<legend>Contents line ${n}</legend>`));
        // The group says which fields a line needs, not each field; lines 2 and 3 are folded until used.
        assert.match(page.body, /<label for="f-customs-items-1-description">Item description<\/label>/);
        assert.match(page.body, /<p class="hint" id="f-customs-items-1-hint">For another kind of goods: once the line is used, every field is required but the unit\. Quantity, net weight and value are the whole line’s: for 2 mugs of 12\.50 each, the value is 25\.00\.<\/p>/);
        assert.match(page.body, /<details class="more"><summary>More kinds of goods: contents lines 2 and 3<\/summary><fieldset id="f-customs-items-1"/);
        const before = await countRows(t.ctx, 'shipments');
        // Line 2 left empty, line 3 in use; line 1's own problem is shown beside it all the same.
        const gap = await v.post('/dashboard/shipments/new', { ...formOf(sampleShipment), ...declaration, ...line(0, 'Ceramic mug', '6912.00'), ...line(2, 'Tea towel', '630260') }, '/dashboard/shipments/new');
        assert.equal(gap.statusCode, 400);
        assert.ok(messageBeside(gap.body, 'f-customs-items-0-hsCode'), 'line 1, before the gap, is checked');
        assert.match(gap.body, /<details class="more" open>/, 'the lines in use, or refused, are shown unfolded');
        assert.equal(messageBeside(gap.body, 'f-customs-items-1-description'), 'is empty while line 3 is filled in: fill the lines from the first');
        // A line in use lacking a field: that field of that line.
        const { 'customs.items[1].hsCode': _hs, ...partial } = line(1, 'Tea towel', '630260');
        const missing = await v.post('/dashboard/shipments/new', { ...formOf(sampleShipment), ...declaration, ...line(0, 'Ceramic mug', '691200'), ...partial }, '/dashboard/shipments/new');
        assert.equal(missing.statusCode, 400);
        assert.ok(messageBeside(missing.body, 'f-customs-items-1-hsCode'), missing.body.slice(0, 3000));
        assert.equal(await countRows(t.ctx, 'shipments'), before);
        const res = await v.post('/dashboard/shipments/new', { ...formOf(sampleShipment), ...declaration, ...line(0, 'Ceramic mug', '691200'), ...line(1, 'Tea towel', '630260') }, '/dashboard/shipments/new');
        assert.equal(res.statusCode, 303, res.body.slice(0, 3000));
        const id = /^\/dashboard\/shipments\/([0-9a-f-]{36})$/.exec(String(res.headers.location))![1]!;
        const api = (await t.request({ method: 'GET', url: `/v1/shipments/${id}` })).json();
        assert.deepEqual(
          api.customs.items.map((i: { description: string; hsCode: string; value: object; netWeight: object; originCountry: string }) => [i.description, i.hsCode, i.value, i.netWeight, i.originCountry]),
          [
            ['Ceramic mug', '691200', { amount: 12.5, currency: 'EUR' }, { value: 0.2, unit: sampleShipment.parcel.weight.unit }, 'DE'],
            ['Tea towel', '630260', { amount: 12.5, currency: 'EUR' }, { value: 0.2, unit: sampleShipment.parcel.weight.unit }, 'DE'],
          ],
        );
      });
    });

    describe('GET /dashboard/shipments', () => {
      it('finds by tracking number (any case, spaces ignored) or part of a reference, and filters by status and carrier', async () => {
        const a = (await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...DOMESTIC, reference: 'Order 100% Blue_1' } })).json();
        const b = (await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...DOMESTIC, carrier: 'UPS', service: 'ground', reference: 'Order 2002' } })).json();
        const label = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: a.id, format: 'PDF' } })).json();
        const found = async (query: string) => {
          const res = await v.get(`/dashboard/shipments?${query}`);
          assert.equal(res.statusCode, 200);
          return [a.id, b.id].filter((id) => res.body.includes(`/dashboard/shipments/${id}"`));
        };
        const spaced = label.trackingNumber.toLowerCase().replace(/(.{4})/g, '$1 ');
        assert.deepEqual(await found(`q=${encodeURIComponent(spaced)}`), [a.id]);
        assert.deepEqual(await found('q=100%25'), [a.id], '% is a character, not a wildcard');
        assert.deepEqual(await found('q=blue_1'), [a.id]);
        assert.deepEqual(await found('q=order'), [a.id, b.id]);
        assert.deepEqual(await found('q=order&carrier=UPS'), [b.id]);
        const aStatus = (await t.request({ method: 'GET', url: `/v1/shipments/${a.id}` })).json().status;
        assert.deepEqual(await found(`q=order&status=${aStatus}`), aStatus === 'created' ? [a.id, b.id] : [a.id]);
        assert.deepEqual(await found('q=order&status=delivered'), []);
        const page = await v.get('/dashboard/shipments');
        assert.match(page.body, /<input type="search" id="f-q" name="q" maxlength="100"/);
        assert.match(page.body, /<form method="get" action="\/dashboard\/shipments" role="search"/);
      });

      it('refuses a search over 100 characters beside the search box, keeping what was typed', async () => {
        const long = `order ${'x'.repeat(95)}`;
        const res = await v.get(`/dashboard/shipments?q=${encodeURIComponent(long)}&carrier=UPS`);
        assert.equal(res.statusCode, 400);
        assert.match(res.body, /<h1>Shipments<\/h1>/);
        assert.match(res.body, /<input type="search" id="f-q" name="q" maxlength="100" aria-describedby="f-q-error" aria-invalid="true" value="order x+">/);
        assert.match(res.body, /<p class="error" id="f-q-error">at most 100 characters: a tracking number, a reference or a name<\/p>/);
        assert.match(res.body, /<option value="UPS" selected>/);
        assert.doesNotMatch(res.body, /No shipment matches|<table/, 'no list under a refused search');
        // Announced like every refused form: a summary linking to the box.
        assert.match(res.body, /<div class="error-summary" role="alert" tabindex="-1" id="error-summary">.*<a href="#f-q">Tracking number, reference or customer: at most 100 characters/s);
        // 100 characters are a search like any other.
        assert.equal((await v.get(`/dashboard/shipments?q=${'y'.repeat(100)}`)).statusCode, 200);
      });
    });

    describe('paging', () => {
      it('links to the older shipments with the search kept, 50 a page, as the API pages them', async () => {
        const ids: string[] = [];
        for (let i = 0; i < 51; i++) ids.push((await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...DOMESTIC, reference: `Paged ${i}` } })).json().id);
        const first = await v.get('/dashboard/shipments?q=paged');
        const link = /<a href="(\/dashboard\/shipments\?q=paged&#38;cursor=[^"]+)" rel="next">Older shipments<\/a>/.exec(first.body);
        assert.ok(link, 'a link to the next page');
        assert.ok(!first.body.includes(`/dashboard/shipments/${ids[0]}"`), 'the oldest is not on the first page');
        const second = await v.get(link[1]!.replace(/&#38;/g, '&'));
        assert.equal(second.statusCode, 200);
        assert.ok(second.body.includes(`/dashboard/shipments/${ids[0]}"`), 'the oldest is on the second');
        assert.ok(!second.body.includes('Older shipments'));
        assert.equal((await v.get('/dashboard/shipments?cursor=not-ours')).statusCode, 400);
      });
    });

    describe('a shipment\'s page and its actions', () => {
      it('answers 404 Not found for an address whose id is not one, as for an unknown id', async () => {
        for (const path of ['/dashboard/shipments/not-a-uuid', '/dashboard/shipments/0189ABCD-0000-7000-8000-000000000000', '/dashboard/webhooks/nope', '/dashboard/batches/nope', '/dashboard/shipments/01890000-0000-7000-8000-000000000000']) {
          const res = await v.get(path);
          assert.equal(res.statusCode, 404, `${path}: ${res.statusCode}`);
          assert.match(res.body, /<h1>Not found<\/h1>/, path);
        }
      });

      it('lays the addresses out as the destination\'s post reads them, with the country across a border', async () => {
        const s = (await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment })).json();
        const page = await v.get(`/dashboard/shipments/${s.id}`);
        assert.match(page.body, /<address>Jürgen Müller\nMüller GmbH\nHauptstraße 5\n10115 BERLIN\nGERMANY\n/);
        assert.match(page.body, /NEW YORK NY 10118\nUNITED STATES<\/address>/);
        assert.match(page.body, /This shipment has no active label\./);
      });

      it('addresses a parcel across a customs border inside one country code as its label does: Berlin to Büsingen, with the country lines', async () => {
        const busingen = { name: 'Anna Keller', street1: 'Junkerstraße 86', city: 'Büsingen am Hochrhein', postalCode: '78266', country: 'DE' };
        const s = (await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, carrier: 'DHL', service: 'express_worldwide', to: busingen } })).json();
        const page = await v.get(`/dashboard/shipments/${s.id}`);
        assert.match(page.body, /<address>Jürgen Müller\nMüller GmbH\nHauptstraße 5\n10115 BERLIN\nGERMANY\n/);
        assert.match(page.body, /<address>Anna Keller\nJunkerstraße 86\n78266 BÜSINGEN AM HOCHRHEIN\nGERMANY<\/address>/);
      });

      it('offers no return of a parcel USPS carried abroad, and says why', async () => {
        const abroad = (await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, from: DOMESTIC.from, to: sampleShipment.from, carrier: 'USPS', service: 'first_class_package_international' } })).json();
        const page = await v.get(`/dashboard/shipments/${abroad.id}`);
        assert.match(page.body, /<p>No return can be made: this shipment went by USPS to DE, where USPS takes no parcels in, and a return keeps its carrier: send it back as a new shipment with UPS, FedEx or DHL\.<\/p>/);
        assert.doesNotMatch(page.body, /Create a return shipment/);
        const home = (await t.request({ method: 'POST', url: '/v1/shipments', payload: DOMESTIC })).json();
        assert.match((await v.get(`/dashboard/shipments/${home.id}`)).body, /Create a return shipment/);
      });

      it('a label past its 24 hours shows no preview or download, says why and what to do; its download says so on the page', async () => {
        const s = (await t.request({ method: 'POST', url: '/v1/shipments', payload: DOMESTIC })).json();
        const label = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: s.id } })).json();
        await t.ctx.db.updateTable('labels').set({ expires_at: '2026-01-02T10:00:00.000Z' }).where('id', '=', label.id).execute();
        const page = await v.get(`/dashboard/shipments/${s.id}`);
        assert.equal(page.statusCode, 200);
        assert.doesNotMatch(page.body, /<img /, 'no broken preview');
        assert.doesNotMatch(page.body, /Download label/);
        assert.match(page.body, /<dt>Downloads ended<\/dt><dd><time datetime="2026-01-02T10:00:00.000Z">2026-01-02 10:00:00 UTC<\/time><\/dd>/);
        assert.match(page.body, /To print it again, with the same tracking number, make a print file of it:/);
        const download = await v.get(`/dashboard/labels/${label.id}/download?format=PDF`);
        assert.equal(download.statusCode, 303);
        assert.equal(download.headers.location, `/dashboard/shipments/${s.id}`);
        assert.equal(noticeOf(download, true), `The download link of label ${label.trackingNumber} ended 24 hours after it was made: make a print file of it to print it again.`);
        // The print file the page offers prints it, with its tracking number.
        const file = await v.post(`/dashboard/shipments/${s.id}/print-file`, { layout: 'label', printFormat: 'ZPL' }, `/dashboard/shipments/${s.id}`);
        assert.equal(file.statusCode, 303, file.body.slice(0, 300));
        const link = new URL(String(file.headers.location));
        const zpl = await t.app.inject({ method: 'GET', url: link.pathname + link.search });
        assert.equal(zpl.statusCode, 200);
        assert.ok(zpl.body.startsWith('^XA'), zpl.body.slice(0, 40));
      });

      it('creates a label, sends each download format to the label\'s signed link, prints, invalidates and returns', async () => {
        const s = (await t.request({ method: 'POST', url: '/v1/shipments', payload: DOMESTIC })).json();
        const made = await v.post(`/dashboard/shipments/${s.id}/label`, { format: 'PDF', size: '4x6' }, `/dashboard/shipments/${s.id}`);
        assert.equal(made.statusCode, 303);
        const label = (await t.request({ method: 'GET', url: `/v1/shipments/${s.id}` })).json().label;
        const page = await v.get(`/dashboard/shipments/${s.id}`);
        assert.match(page.body, new RegExp(`<img src="http://localhost:8080/v1/downloads/labels/${label.id}\\?format=PNG&#38;expires=\\d+&#38;sig=[^"]+" alt="Label ${label.trackingNumber}, preview"`));
        for (const format of LABEL_FORMATS) {
          const res = await v.get(`/dashboard/labels/${label.id}/download?format=${format}`);
          assert.equal(res.statusCode, 303, format);
          const link = new URL(String(res.headers.location));
          const doc = await t.app.inject({ method: 'GET', url: link.pathname + link.search });
          assert.equal(doc.statusCode, 200, format);
        }
        assert.equal((await v.get(`/dashboard/labels/${label.id}/download?format=DOCX`)).statusCode, 400);
        const print = await v.post(`/dashboard/shipments/${s.id}/print-file`, { layout: 'a4-4up', printFormat: 'PDF' }, `/dashboard/shipments/${s.id}`);
        assert.equal(print.statusCode, 303);
        const file = new URL(String(print.headers.location));
        assert.match(file.pathname, /^\/v1\/downloads\/print-files\//);
        assert.equal((await t.app.inject({ method: 'GET', url: file.pathname + file.search })).body.slice(0, 5), '%PDF-');
        // What the service refuses comes back on the shipment's page, not on an error page of its own.
        const zplSheet = await v.post(`/dashboard/shipments/${s.id}/print-file`, { layout: 'a4-4up', printFormat: 'ZPL' }, `/dashboard/shipments/${s.id}`);
        assert.equal(zplSheet.statusCode, 303);
        assert.equal(zplSheet.headers.location, `/dashboard/shipments/${s.id}`);
        assert.match(noticeOf(zplSheet, true) ?? '', /^No print file was made: .*layout must be label/);
        const second = await v.post(`/dashboard/shipments/${s.id}/label`, { format: 'PDF', size: '4x6' }, `/dashboard/shipments/${s.id}`);
        assert.equal(second.headers.location, `/dashboard/shipments/${s.id}`);
        assert.equal(noticeOf(second), undefined, 'a refusal is not carried as a success');
        assert.match(noticeOf(second, true) ?? '', /^No label was created: shipment \S+ already has an active label/);
        // Shown on the next page as an alert in an error's colours, not in the success box.
        const shown = await v.get(`/dashboard/shipments/${s.id}`);
        assert.match(shown.body, /<p class="notice refused" role="alert" id="notice" tabindex="-1">No label was created: /);

        // The button asks first, naming the label; nothing is invalidated until that page's own button.
        const asked = await v.post(`/dashboard/shipments/${s.id}/invalidate`, { label: label.id }, `/dashboard/shipments/${s.id}`);
        assert.equal(asked.statusCode, 200);
        assert.match(asked.body, new RegExp(`<h1>Invalidate label ${label.trackingNumber}\\?</h1>`));
        assert.match(asked.body, /This cannot be undone/);
        assert.match(asked.body, new RegExp(`<input type="hidden" name="label" value="${label.id}"><input type="hidden" name="confirmed" value="yes"><button type="submit" class="danger">Invalidate label</button>`));
        assert.match(asked.body, new RegExp(`<a href="/dashboard/shipments/${s.id}">Cancel</a>`));
        assert.equal((await t.request({ method: 'GET', url: `/v1/labels/${label.id}` })).json().status, 'active');
        // A page showing another label than the shipment's own (a stale tab) invalidates nothing.
        const stale = await v.post(`/dashboard/shipments/${s.id}/invalidate`, { label: 'e0d2b2a4-0000-7000-8000-000000000000', confirmed: 'yes' }, `/dashboard/shipments/${s.id}`);
        assert.equal(stale.statusCode, 303);
        assert.match(noticeOf(stale, true) ?? '', new RegExp(`^The shipment's label has changed since that page was shown: label ${label.trackingNumber} is not invalidated\\.`));
        assert.equal((await t.request({ method: 'GET', url: `/v1/labels/${label.id}` })).json().status, 'active');
        const gone = await v.post(`/dashboard/shipments/${s.id}/invalidate`, { label: label.id, confirmed: 'yes' }, `/dashboard/shipments/${s.id}`);
        assert.equal(gone.statusCode, 303);
        assert.equal(noticeOf(gone), `Label ${label.trackingNumber} is invalidated.`);
        assert.equal((await t.request({ method: 'GET', url: `/v1/labels/${label.id}` })).json().status, 'invalidated');

        const ret = await v.post(`/dashboard/shipments/${s.id}/return`, {}, `/dashboard/shipments/${s.id}`);
        assert.equal(ret.statusCode, 303);
        const retId = /([0-9a-f-]{36})$/.exec(String(ret.headers.location))![1]!;
        const back = (await t.request({ method: 'GET', url: `/v1/shipments/${retId}` })).json();
        assert.equal(back.returnOf, s.id);
        assert.deepEqual(back.to, DOMESTIC.from);
        const again = await v.post(`/dashboard/shipments/${retId}/return`, {}, `/dashboard/shipments/${retId}`);
        assert.equal(again.statusCode, 409, 'a return of a return is refused as the API refuses it');
        // The original's page lists its return, linked.
        const original = await v.get(`/dashboard/shipments/${s.id}`);
        assert.match(original.body, new RegExp(`<li><a href="/dashboard/shipments/${retId}">Return [^<]+</a>`));
        // A second return asks first, naming the one there is; nothing is made until it is confirmed.
        const count = async () => (await t.request({ method: 'GET', url: `/v1/shipments?limit=100` })).json().filter((x: { returnOf?: string }) => x.returnOf === s.id).length;
        const askedAgain = await v.post(`/dashboard/shipments/${s.id}/return`, {}, `/dashboard/shipments/${s.id}`);
        assert.equal(askedAgain.statusCode, 200);
        assert.match(askedAgain.body, /<h1>Create another return shipment\?<\/h1>/);
        assert.match(askedAgain.body, /This shipment already has a return \(Return /);
        assert.match(askedAgain.body, new RegExp(`<a href="/dashboard/shipments/${s.id}">Cancel</a>`), 'Cancel goes back to the shipment');
        assert.equal(await count(), 1);
        const another = await v.post(`/dashboard/shipments/${s.id}/return`, { confirmed: 'yes' }, `/dashboard/shipments/${s.id}`);
        assert.equal(another.statusCode, 303);
        assert.equal(await count(), 2);
        // The button's form sent twice at once (a double click) makes one return; both lead to it.
        const withButton = await v.get(`/dashboard/shipments/${s.id}`);
        const formKey = new RegExp(`<form method="post" action="/dashboard/shipments/${s.id}/return" class="inline">.*?name="formKey" value="([0-9a-f-]{36})"`, 's').exec(withButton.body)![1]!;
        const twice = await Promise.all([1, 2].map(() => v.post(`/dashboard/shipments/${s.id}/return`, { formKey, confirmed: 'yes' }, `/dashboard/shipments/${s.id}`)));
        assert.deepEqual(twice.map((r) => r.statusCode), [303, 303]);
        assert.equal(twice[0]!.headers.location, twice[1]!.headers.location);
        assert.equal(await count(), 3);
        assert.ok(twice.some((r) => /This form was already sent: this is the return shipment it made/.test(noticeOf(r) ?? '')));
        // Sent again later (Back and a second press), it still leads to that return and makes none.
        const later = await v.post(`/dashboard/shipments/${s.id}/return`, { formKey, confirmed: 'yes' }, `/dashboard/shipments/${s.id}`);
        assert.equal(later.headers.location, twice[0]!.headers.location);
        assert.equal(await count(), 3);
      });

      it('offers no invalidation once the carrier has scanned the parcel, and a page shown before the scan invalidates nothing', async () => {
        const s = (await t.request({ method: 'POST', url: '/v1/shipments', payload: DOMESTIC })).json();
        const label = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: s.id } })).json();
        assert.match((await v.get(`/dashboard/shipments/${s.id}`)).body, />Invalidate label<\/button>/);
        // The parcel is scanned while a tab still shows the button.
        const scan = await t.request({ method: 'POST', url: '/v1/tracking/events', payload: { events: [{ trackingNumber: label.trackingNumber, status: 'in_transit', timestamp: new Date().toISOString(), location: 'Chicago, IL, US' }] } });
        assert.equal(scan.statusCode, 202, scan.body);
        const page = await v.get(`/dashboard/shipments/${s.id}`);
        assert.doesNotMatch(page.body, />Invalidate label<\/button>/);
        assert.match(page.body, /<p>The carrier has scanned the parcel \(in transit\), so the label can no longer be invalidated\.<\/p>/);
        // The button of a page shown before the scan asks nothing, and says why.
        const asked = await v.post(`/dashboard/shipments/${s.id}/invalidate`, { label: label.id }, `/dashboard/shipments/${s.id}`);
        assert.equal(asked.statusCode, 303);
        assert.equal(asked.headers.location, `/dashboard/shipments/${s.id}`);
        assert.equal(noticeOf(asked, true), `Label ${label.trackingNumber} is not invalidated: the carrier has scanned the parcel (in transit), so it can no longer be invalidated.`);
        const late = await v.post(`/dashboard/shipments/${s.id}/invalidate`, { label: label.id, confirmed: 'yes' }, `/dashboard/shipments/${s.id}`);
        assert.equal(late.statusCode, 303);
        assert.equal(late.headers.location, `/dashboard/shipments/${s.id}`);
        assert.match(noticeOf(late, true) ?? '', new RegExp(`^Label ${label.trackingNumber} is not invalidated: the carrier has scanned the parcel`));
        assert.equal((await t.request({ method: 'GET', url: `/v1/labels/${label.id}` })).json().status, 'active');
      });
    });
  });
});

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { countRows, createShipment, forEachDatabase, sampleShipment, type TestApp, withTestApp, US_SENDER } from '../helpers.ts';
import { processBatches } from '../../src/batches/service.ts';
import { isValidTrackingNumber, trackingUrl, type Carrier } from '../../src/carriers/index.ts';
import { LABEL_FORMATS } from '../../src/render/index.ts';
import { linkSignatureValid } from '../../src/http/signed-links.ts';
import { pdfText } from '../render/pictures.ts';

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const DAY_MS = 24 * 3600 * 1000;

const SHIPMENTS_BY_CARRIER: Record<Carrier, Record<string, unknown>> = {
  UPS: { carrier: 'UPS', service: 'worldwide_saver' },
  USPS: { carrier: 'USPS', service: 'priority_mail', from: US_SENDER },
  FedEx: { carrier: 'FedEx', service: 'international_priority' },
  DHL: { carrier: 'DHL', service: 'express_worldwide' },
};

function postLabel(t: TestApp, payload: unknown, apiKey?: string) {
  return t.app.inject({ method: 'POST', url: '/v1/labels', headers: { 'x-api-key': apiKey ?? t.apiKey }, payload: payload as object });
}

async function createLabel(t: TestApp, shipmentId: string, extra: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const res = await postLabel(t, { shipmentId, ...extra });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

/** The link's parts, and whether it was signed by this service for exactly those. */
function linkOf(t: TestApp, url: string) {
  const u = new URL(url);
  const id = u.pathname.split('/').pop()!;
  const format = u.searchParams.get('format')!;
  const expires = Number(u.searchParams.get('expires'));
  const sig = u.searchParams.get('sig')!;
  return { u, id, format, expires, sig, valid: linkSignatureValid(t.ctx.urlKey, 'labels', id, format, expires, sig) };
}

forEachDatabase((database) => {
  const t = withTestApp(database);

  describe('POST /v1/labels', () => {
    it('creates a PDF 4x6 label by default: 201 with every field, expiresAt exactly createdAt + 24 h, a signed url on {base_url}', async () => {
      const s = await createShipment(t);
      const res = await postLabel(t, { shipmentId: s.id });
      assert.equal(res.statusCode, 201, res.body);
      const label = res.json();
      // Berlin to New York: the label lists its customs documents too (§12).
      assert.deepEqual(Object.keys(label).sort(), ['carrier', 'createdAt', 'documents', 'expiresAt', 'format', 'id', 'shipmentId', 'size', 'status', 'trackingNumber', 'url']);
      assert.match(label.id, UUID7);
      assert.equal(label.shipmentId, s.id);
      assert.equal(label.format, 'PDF');
      assert.equal(label.size, '4x6');
      assert.equal(label.carrier, 'UPS');
      assert.equal(label.status, 'active');
      assert.match(label.createdAt, ISO_MS);
      assert.match(label.expiresAt, ISO_MS);
      assert.equal(Date.parse(label.expiresAt) - Date.parse(label.createdAt), DAY_MS);
      assert.ok(isValidTrackingNumber('UPS', label.trackingNumber), label.trackingNumber);
      const link = linkOf(t, label.url);
      assert.equal(`${link.u.origin}${link.u.pathname}`, `http://localhost:8080/v1/downloads/labels/${label.id}`);
      assert.equal(link.format, 'PDF');
      assert.equal(link.expires, Math.floor(Date.parse(label.expiresAt) / 1000));
      assert.ok(link.valid, 'the url is signed over id, format and expiry');
    });

    it('takes any of the 13 formats and each of the four sizes', async () => {
      for (const format of LABEL_FORMATS) {
        const s = await createShipment(t);
        const label = await createLabel(t, s.id, { format });
        assert.equal(label.format, format);
        assert.equal(linkOf(t, label.url).format, format);
      }
      for (const size of ['4x6', '4x8', '6x4', '8.5x11']) {
        const s = await createShipment(t);
        assert.equal((await createLabel(t, s.id, { size })).size, size);
      }
    });

    it('records the label on the shipment in the same transaction and stores what is printed', async () => {
      const s = await createShipment(t);
      const label = await createLabel(t, s.id, { size: '4x8' });
      const shipment = (await t.request({ method: 'GET', url: `/v1/shipments/${s.id}` })).json();
      assert.deepEqual(shipment.label, { id: label.id, trackingNumber: label.trackingNumber, carrier: 'UPS' });
      const row = await t.ctx.db.selectFrom('labels').selectAll().where('id', '=', label.id).executeTakeFirstOrThrow();
      assert.equal(row.account_id, t.accountId);
      assert.equal(row.status, 'active');
      assert.deepEqual(JSON.parse(row.label_data), {
        labelId: label.id,
        carrier: 'UPS',
        serviceCode: 'worldwide_saver',
        serviceName: 'UPS WORLDWIDE SAVER',
        trackingNumber: label.trackingNumber,
        size: '4x8',
        shipDate: label.createdAt,
        from: s.from,
        to: s.to,
        parcel: s.parcel,
        reference: 'Order #1001',
        customs: s.customs,
        customsForm: 'CN22',
      });
    });

    it('issues valid tracking numbers for every carrier', async () => {
      for (const [carrier, fields] of Object.entries(SHIPMENTS_BY_CARRIER)) {
        const s = await createShipment(t, fields);
        const label = await createLabel(t, s.id);
        assert.equal(label.carrier, carrier);
        assert.ok(isValidTrackingNumber(carrier as Carrier, label.trackingNumber), `${carrier} ${label.trackingNumber}`);
      }
    });

    it("numbers USPS's parcels abroad as the UPU's S10 says, from a counter of their own, and prints, documents and tracks them", async () => {
      const home = { name: 'A B', street1: '1600 Pennsylvania Ave NW', city: 'Washington', state: 'DC', postalCode: '20500', country: 'US' };
      const domestic = async () => (await createLabel(t, (await createShipment(t, { carrier: 'USPS', service: 'priority_mail', from: US_SENDER, to: home, customs: undefined })).id)).trackingNumber as string;
      const first = await domestic();
      const abroad: Record<string, any>[] = [];
      for (const service of ['priority_mail_international', 'priority_mail_express_international', 'first_class_package_international']) {
        const s = await createShipment(t, { carrier: 'USPS', service, from: US_SENDER, to: sampleShipment.from, parcel: { weight: { value: 2, unit: 'lb' } } });
        abroad.push(await createLabel(t, s.id));
      }
      const serials = abroad.map((l) => {
        assert.match(l.trackingNumber, /^[A-Z]{2}\d{9}US$/);
        assert.ok(isValidTrackingNumber('USPS', l.trackingNumber), l.trackingNumber);
        return Number(l.trackingNumber.slice(2, 10));
      });
      assert.deepEqual(abroad.map((l) => l.trackingNumber.slice(0, 2)), ['CP', 'EC', 'LX']);
      assert.deepEqual(serials, [serials[0], serials[0]! + 1, serials[0]! + 2], 'one counter for the S10 numbers');
      // The domestic numbers go on from where they were: the S10 labels took none of their serials.
      assert.equal(BigInt((await domestic()).slice(11, 21)), BigInt(first.slice(11, 21)) + 1n);
      // Each goes with its customs declaration, and its label prints the number as the UPU groups it.
      // USPS's forms (IMM 123.61): a CN23 for Priority Mail International and Express International, a CN22 for First-Class Package International below 400 USD.
      assert.deepEqual(abroad.map((l) => l.documents.map((d: { type: string }) => d.type)), [['cn23', 'commercial_invoice'], ['cn23', 'commercial_invoice'], ['cn22', 'commercial_invoice']]);
      const pdf = await t.app.inject({ method: 'GET', url: abroad[0]!.url.replace('http://localhost:8080', '') });
      assert.equal(pdf.statusCode, 200);
      const text = await pdfText(pdf.rawPayload);
      assert.ok(text.includes(`${abroad[0]!.trackingNumber.slice(0, 2)} ${abroad[0]!.trackingNumber.slice(2, 5)} ${abroad[0]!.trackingNumber.slice(5, 8)} ${abroad[0]!.trackingNumber.slice(8, 11)} US`), text);
      assert.match(text, /PRIORITY MAIL INTERNATIONAL/);
      // Tracked by its number, as a person types it.
      const typed = abroad[1]!.trackingNumber.toLowerCase().replace(/(..)(...)(...)(...)(..)/, '$1 $2 $3 $4 $5');
      const events = await t.app.inject({ method: 'POST', url: '/v1/tracking/events', headers: { 'x-api-key': t.apiKey }, payload: { events: [{ trackingNumber: typed, status: 'in_transit', timestamp: '2026-01-02T10:00:00Z', location: 'Chicago, IL, US' }] } });
      assert.equal(events.statusCode, 202, events.body);
      const tracked = await t.app.inject({ method: 'GET', url: `/v1/labels/${abroad[1]!.id}/trackingnumber?format=detailed`, headers: { 'x-api-key': t.apiKey } });
      assert.equal(tracked.json().status, 'in_transit');
    });

    it('answers a second label for the same shipment with 409 CONFLICT naming the existing label, and writes nothing', async () => {
      const s = await createShipment(t);
      const first = await createLabel(t, s.id);
      const labels = await countRows(t.ctx, 'labels');
      const res = await postLabel(t, { shipmentId: s.id, format: 'ZPL' });
      assert.equal(res.statusCode, 409);
      assert.deepEqual(res.json(), { code: 'CONFLICT', message: `shipment ${s.id} already has an active label ${first.id}; invalidate it before creating another` });
      assert.equal(await countRows(t.ctx, 'labels'), labels);
    });

    it('lets two racing requests for one shipment give exactly one 201 and one 409', async () => {
      for (let round = 0; round < 3; round++) {
        const s = await createShipment(t);
        const results = await Promise.all([postLabel(t, { shipmentId: s.id }), postLabel(t, { shipmentId: s.id, format: 'PNG' })]);
        const statuses = results.map((r) => r.statusCode).sort();
        assert.deepEqual(statuses, [201, 409], results.map((r) => r.body).join('\n'));
        const winner = results.find((r) => r.statusCode === 201)!.json();
        const loser = results.find((r) => r.statusCode === 409)!.json();
        assert.equal(loser.code, 'CONFLICT');
        assert.match(loser.message, new RegExp(`shipment ${s.id} already has an active label ${winner.id};`));
        const rows = await t.ctx.db.selectFrom('labels').select('id').where('shipment_id', '=', s.id).execute();
        assert.deepEqual(rows.map((r) => r.id), [winner.id]);
      }
    });

    const bad: [string, (shipmentId: string) => unknown, string][] = [
      ['a shipment id that is not a uuid', () => ({ shipmentId: 'not-a-uuid' }), 'shipmentId must be a UUID (in lower case, as ids are issued)'],
      ['a shipment id in capitals', (id) => ({ shipmentId: id.toUpperCase() }), 'shipmentId must be a UUID (in lower case, as ids are issued)'],
      ['a missing shipment id', () => ({ format: 'PDF' }), 'shipmentId is required'],
      ['an unsupported size', (id) => ({ shipmentId: id, size: '5x5' }), 'size must be one of 4x6, 4x8, 6x4, 8.5x11'],
      ['a size in another spelling', (id) => ({ shipmentId: id, size: '4X6' }), 'size must be one of 4x6, 4x8, 6x4, 8.5x11'],
      ['an unknown format', (id) => ({ shipmentId: id, format: 'DOCX' }), `format must be one of ${LABEL_FORMATS.join(', ')}`],
      ['a lower-case format', (id) => ({ shipmentId: id, format: 'pdf' }), `format must be one of ${LABEL_FORMATS.join(', ')}`],
      ['an unknown field', (id) => ({ shipmentId: id, colour: 'red' }), 'colour is not a known field'],
      ['a number as shipment id', () => ({ shipmentId: 12 }), 'shipmentId must be a string'],
    ];
    for (const [name, body, message] of bad) {
      it(`rejects ${name} with 400 INVALID_INPUT and writes nothing`, async () => {
        const s = await createShipment(t);
        const before = await countRows(t.ctx, 'labels');
        const res = await postLabel(t, body(s.id));
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().code, 'INVALID_INPUT');
        assert.equal(res.json().message, message);
        assert.equal(await countRows(t.ctx, 'labels'), before);
      });
    }

    it('answers an unknown shipment and another account\'s shipment with 404 naming the id', async () => {
      const unknown = '01890a5d-ac96-774b-bcce-b302099a8057';
      const res = await postLabel(t, { shipmentId: unknown });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { code: 'NOT_FOUND', message: `shipment ${unknown} not found` });
      const other = await t.newAccount();
      const theirs = await createShipment(t, {}, other.apiKey);
      const foreign = await postLabel(t, { shipmentId: theirs.id });
      assert.equal(foreign.statusCode, 404);
      assert.deepEqual(foreign.json(), { code: 'NOT_FOUND', message: `shipment ${theirs.id} not found` });
      assert.equal((await t.ctx.db.selectFrom('labels').select('id').where('shipment_id', '=', theirs.id).execute()).length, 0);
    });

    it('refuses the label of a shipment taken before services were checked against their routes (UPS ground from Berlin to New York), naming what runs there, and writes nothing', async () => {
      const s = await createShipment(t);
      // As such a shipment was stored: the route rule came later.
      await t.ctx.db.updateTable('shipments').set({ service: 'ground' }).where('id', '=', s.id).execute();
      const before = await countRows(t.ctx, 'labels');
      const res = await postLabel(t, { shipmentId: s.id });
      assert.equal(res.statusCode, 400, res.body);
      const message = `shipment ${s.id} was taken before services were checked against their routes and cannot be labelled as it is (service: UPS's ground carries parcels within the United States and Puerto Rico, not from DE to US; choose worldwide_saver, worldwide_expedited); create the shipment again`;
      assert.deepEqual(res.json(), { code: 'INVALID_INPUT', message, details: [{ field: 'shipmentId', message }] });
      assert.equal(await countRows(t.ctx, 'labels'), before);
      // In a batch the item fails with the same message, and the others go on.
      const batch = await t.request({ method: 'POST', url: '/v1/batches', payload: { items: [{ shipmentId: s.id }, { shipment: sampleShipment }] } });
      assert.equal(batch.statusCode, 202, batch.body);
      while ((await processBatches(t.ctx)) > 0);
      const done = (await t.request({ method: 'GET', url: `/v1/batches/${batch.json().id}` })).json();
      assert.deepEqual(done.counts, { total: 2, succeeded: 1, failed: 1 });
      assert.equal(done.items[0].error.message, message);
    });

    it('needs write:labels (403 FORBIDDEN naming it) and a credential (401)', async () => {
      const reader = await t.newAccount(['read:labels', 'write:shipments']);
      const s = await createShipment(t, {}, reader.apiKey);
      const res = await postLabel(t, { shipmentId: s.id }, reader.apiKey);
      assert.equal(res.statusCode, 403);
      assert.deepEqual(res.json(), { code: 'FORBIDDEN', message: 'this operation needs the write:labels scope' });
      const anonymous = await t.app.inject({ method: 'POST', url: '/v1/labels', payload: { shipmentId: s.id } });
      assert.equal(anonymous.statusCode, 401);
      assert.equal(anonymous.json().code, 'UNAUTHORIZED');
    });

    it('replays the first response for the same Idempotency-Key instead of answering 409', async () => {
      const s = await createShipment(t);
      const send = () => t.request({ method: 'POST', url: '/v1/labels', headers: { 'idempotency-key': `label-${s.id}` }, payload: { shipmentId: s.id } });
      const first = await send();
      const again = await send();
      assert.equal(first.statusCode, 201);
      assert.equal(again.statusCode, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.deepEqual(again.json(), first.json());
    });

    it('gives 20 labels created in parallel on different shipments 20 distinct valid tracking numbers', async () => {
      const carriers = Object.keys(SHIPMENTS_BY_CARRIER) as Carrier[];
      const shipments = await Promise.all(Array.from({ length: 20 }, (_, i) => createShipment(t, SHIPMENTS_BY_CARRIER[carriers[i % 4]!])));
      const results = await Promise.all(shipments.map((s) => postLabel(t, { shipmentId: s.id })));
      const labels = results.map((r) => {
        assert.equal(r.statusCode, 201, r.body);
        return r.json();
      });
      for (const l of labels) assert.ok(isValidTrackingNumber(l.carrier, l.trackingNumber), l.trackingNumber);
      assert.equal(new Set(labels.map((l) => l.trackingNumber)).size, 20);
    });

    it('never issues a tracking number twice, whatever mix of creations, conflicts and invalidations runs at once (property)', async () => {
      const carriers = Object.keys(SHIPMENTS_BY_CARRIER) as Carrier[];
      const seen = new Set<string>();
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ carrier: fc.constantFrom(...carriers), tries: fc.integer({ min: 1, max: 2 }), invalidate: fc.boolean() }), { minLength: 1, maxLength: 6 }),
          async (plan) => {
            const shipments = await Promise.all(plan.map((p) => createShipment(t, SHIPMENTS_BY_CARRIER[p.carrier])));
            const attempts = plan.flatMap((p, i) => Array.from({ length: p.tries }, () => postLabel(t, { shipmentId: shipments[i]!.id })));
            const results = await Promise.all(attempts);
            const created = results.filter((r) => r.statusCode === 201).map((r) => r.json());
            assert.equal(created.length, plan.length, 'exactly one label per shipment');
            assert.ok(results.every((r) => r.statusCode === 201 || r.statusCode === 409));
            // Invalidate some, then label those shipments again: the new label gets a fresh number.
            const again = await Promise.all(
              plan.map(async (p, i) => {
                if (!p.invalidate) return null;
                const label = created.find((l) => l.shipmentId === shipments[i]!.id)!;
                assert.equal((await t.request({ method: 'PUT', url: `/v1/labels/${label.id}/invalidate` })).statusCode, 204);
                return createLabel(t, shipments[i]!.id);
              }),
            );
            for (const l of [...created, ...again.filter((x) => x !== null)]) {
              assert.ok(isValidTrackingNumber(l.carrier, l.trackingNumber), l.trackingNumber);
              assert.ok(!seen.has(l.trackingNumber), `${l.trackingNumber} issued twice`);
              seen.add(l.trackingNumber);
            }
          },
        ),
        { numRuns: 8 },
      );
    });

    it('survives arbitrary bodies: never 5xx, never writes (fuzz)', async () => {
      const labels = await countRows(t.ctx, 'labels');
      const counters = await t.ctx.db.selectFrom('counters').selectAll().orderBy('name').execute();
      const field = fc.oneof(fc.jsonValue(), fc.string(), fc.constantFrom(...LABEL_FORMATS, '4x6', '8.5x11', '', ' PDF', '4x6\u0000'));
      const body = fc.oneof(
        fc.jsonValue(),
        fc.record({ shipmentId: fc.oneof(fc.uuid(), fc.string(), fc.jsonValue()), format: field, size: field }, { requiredKeys: [] }),
        fc.record({ shipmentId: fc.uuid({ version: 7 }), format: fc.constantFrom(...LABEL_FORMATS), size: fc.constantFrom('4x6', '6x4') }),
        fc.dictionary(fc.string(), fc.jsonValue()),
      );
      await fc.assert(
        fc.asyncProperty(body, async (payload) => {
          const res = await t.request({ method: 'POST', url: '/v1/labels', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(payload) ?? 'null' });
          assert.ok(res.statusCode === 400 || res.statusCode === 404, `${res.statusCode} ${res.body} for ${JSON.stringify(payload)}`);
          const err = res.json();
          assert.equal(err.code, res.statusCode === 400 ? 'INVALID_INPUT' : 'NOT_FOUND');
          assert.equal(typeof err.message, 'string');
        }),
        { numRuns: 150 },
      );
      assert.equal(await countRows(t.ctx, 'labels'), labels);
      assert.deepEqual(await t.ctx.db.selectFrom('counters').selectAll().orderBy('name').execute(), counters);
    });
  });

  describe('GET /v1/labels/{id}', () => {
    it('returns the label with format PDF by default, and with the asked format and a url for it; expiresAt unchanged', async () => {
      const s = await createShipment(t);
      const created = await createLabel(t, s.id, { format: 'ZPL', size: '6x4' });
      const plain = await t.request({ method: 'GET', url: `/v1/labels/${created.id}` });
      assert.equal(plain.statusCode, 200);
      assert.deepEqual(plain.json(), { ...created, format: 'PDF', url: plain.json().url });
      assert.equal(linkOf(t, plain.json().url).format, 'PDF');
      for (const format of ['PNG', 'ZPL', 'SVG', 'EPS']) {
        const res = await t.request({ method: 'GET', url: `/v1/labels/${created.id}?format=${format}` });
        assert.equal(res.statusCode, 200);
        const body = res.json();
        assert.equal(body.format, format);
        assert.equal(body.size, '6x4');
        assert.equal(body.createdAt, created.createdAt);
        assert.equal(body.expiresAt, created.expiresAt);
        const link = linkOf(t, body.url);
        assert.equal(link.format, format);
        assert.ok(link.valid);
      }
      assert.equal((await t.request({ method: 'GET', url: `/v1/labels/${created.id}?format=ZPL` })).json().url, created.url);
    });

    it('answers an unknown format with 400, an unknown or foreign id with 404 naming it, a malformed id with 400', async () => {
      const s = await createShipment(t);
      const label = await createLabel(t, s.id);
      const badFormat = await t.request({ method: 'GET', url: `/v1/labels/${label.id}?format=DOCX` });
      assert.equal(badFormat.statusCode, 400);
      assert.deepEqual(badFormat.json().code, 'INVALID_INPUT');
      assert.equal(badFormat.json().message, `query parameter format must be one of ${LABEL_FORMATS.join(', ')}`);
      const unknown = '01890a5d-ac96-774b-bcce-b302099a8057';
      const res = await t.request({ method: 'GET', url: `/v1/labels/${unknown}` });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { code: 'NOT_FOUND', message: `label ${unknown} not found` });
      const other = await t.newAccount();
      const foreign = await t.app.inject({ method: 'GET', url: `/v1/labels/${label.id}`, headers: { 'x-api-key': other.apiKey } });
      assert.equal(foreign.statusCode, 404);
      assert.deepEqual(foreign.json(), { code: 'NOT_FOUND', message: `label ${label.id} not found` });
      assert.equal((await t.request({ method: 'GET', url: '/v1/labels/nope' })).statusCode, 400);
    });

    it('needs read:labels', async () => {
      const s = await createShipment(t);
      const label = await createLabel(t, s.id);
      const writer = await t.newAccount(['write:labels']);
      const res = await t.app.inject({ method: 'GET', url: `/v1/labels/${label.id}`, headers: { 'x-api-key': writer.apiKey } });
      assert.equal(res.statusCode, 403);
      assert.equal(res.json().code, 'FORBIDDEN');
    });
  });

  describe('PUT /v1/labels/{id}/invalidate', () => {
    it('answers 204 with no body, again 204 when already invalidated, and shows the label invalidated', async () => {
      const s = await createShipment(t);
      const label = await createLabel(t, s.id);
      const first = await t.request({ method: 'PUT', url: `/v1/labels/${label.id}/invalidate` });
      assert.equal(first.statusCode, 204);
      assert.equal(first.body, '');
      const second = await t.request({ method: 'PUT', url: `/v1/labels/${label.id}/invalidate` });
      assert.equal(second.statusCode, 204);
      assert.equal(second.body, '');
      const got = (await t.request({ method: 'GET', url: `/v1/labels/${label.id}` })).json();
      assert.equal(got.status, 'invalidated');
      assert.equal(got.expiresAt, label.expiresAt);
      const row = await t.ctx.db.selectFrom('labels').select(['status', 'invalidated_at']).where('id', '=', label.id).executeTakeFirstOrThrow();
      assert.equal(row.status, 'invalidated');
      assert.match(row.invalidated_at!, ISO_MS);
    });

    it('clears the shipment\'s label, and a new label may then be created with a new tracking number', async () => {
      const s = await createShipment(t);
      const old = await createLabel(t, s.id);
      assert.equal((await t.request({ method: 'PUT', url: `/v1/labels/${old.id}/invalidate` })).statusCode, 204);
      const shipment = (await t.request({ method: 'GET', url: `/v1/shipments/${s.id}` })).json();
      assert.equal(shipment.label, undefined);
      const fresh = await createLabel(t, s.id);
      assert.notEqual(fresh.id, old.id);
      assert.notEqual(fresh.trackingNumber, old.trackingNumber);
      assert.deepEqual((await t.request({ method: 'GET', url: `/v1/shipments/${s.id}` })).json().label, { id: fresh.id, trackingNumber: fresh.trackingNumber, carrier: 'UPS' });
      // Invalidating the old label again leaves the new one on the shipment.
      assert.equal((await t.request({ method: 'PUT', url: `/v1/labels/${old.id}/invalidate` })).statusCode, 204);
      assert.equal((await t.request({ method: 'GET', url: `/v1/shipments/${s.id}` })).json().label.id, fresh.id);
    });

    it('answers an unknown or foreign id with 404 `label <id> not found` and changes nothing', async () => {
      const unknown = '01890a5d-ac96-774b-bcce-b302099a8057';
      const res = await t.request({ method: 'PUT', url: `/v1/labels/${unknown}/invalidate` });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { code: 'NOT_FOUND', message: `label ${unknown} not found` });
      const s = await createShipment(t);
      const label = await createLabel(t, s.id);
      const other = await t.newAccount();
      const foreign = await t.app.inject({ method: 'PUT', url: `/v1/labels/${label.id}/invalidate`, headers: { 'x-api-key': other.apiKey } });
      assert.equal(foreign.statusCode, 404);
      assert.deepEqual(foreign.json(), { code: 'NOT_FOUND', message: `label ${label.id} not found` });
      assert.equal((await t.request({ method: 'GET', url: `/v1/labels/${label.id}` })).json().status, 'active');
    });

    it('needs write:labels', async () => {
      const s = await createShipment(t);
      const label = await createLabel(t, s.id);
      const reader = await t.newAccount(['read:labels']);
      const res = await t.app.inject({ method: 'PUT', url: `/v1/labels/${label.id}/invalidate`, headers: { 'x-api-key': reader.apiKey } });
      assert.equal(res.statusCode, 403);
      assert.equal((await t.request({ method: 'GET', url: `/v1/labels/${label.id}` })).json().status, 'active');
    });
  });

  describe('GET /v1/labels/{id}/trackingnumber (basic)', () => {
    it('returns trackingNumber, carrier and the carrier\'s public tracking page', async () => {
      for (const [carrier, fields] of Object.entries(SHIPMENTS_BY_CARRIER)) {
        const s = await createShipment(t, fields);
        const label = await createLabel(t, s.id);
        const res = await t.request({ method: 'GET', url: `/v1/labels/${label.id}/trackingnumber` });
        assert.equal(res.statusCode, 200);
        assert.deepEqual(res.json(), { trackingNumber: label.trackingNumber, carrier, trackingUrl: trackingUrl(carrier as Carrier, label.trackingNumber) });
        const explicit = await t.request({ method: 'GET', url: `/v1/labels/${label.id}/trackingnumber?format=basic` });
        assert.deepEqual(explicit.json(), res.json());
      }
    });

    it('answers an unknown or foreign label with 404 naming it', async () => {
      const unknown = '01890a5d-ac96-774b-bcce-b302099a8057';
      const res = await t.request({ method: 'GET', url: `/v1/labels/${unknown}/trackingnumber` });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { code: 'NOT_FOUND', message: `label ${unknown} not found` });
      const s = await createShipment(t);
      const label = await createLabel(t, s.id);
      const other = await t.newAccount();
      const foreign = await t.app.inject({ method: 'GET', url: `/v1/labels/${label.id}/trackingnumber`, headers: { 'x-api-key': other.apiKey } });
      assert.equal(foreign.statusCode, 404);
    });
  });
});

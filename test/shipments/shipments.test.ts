import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { countRows, createShipment, forEachDatabase, sampleShipment, withTestApp } from '../helpers.ts';
import { fillRecipientSearch } from '../../src/shipments/service.ts';

forEachDatabase((database) => {
  const t = withTestApp(database);

  describe('POST /v1/shipments', () => {
    it('creates a shipment with UTF-8 addresses and writes shipment.created in the same transaction', async () => {
      const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment });
      assert.equal(res.statusCode, 201);
      const body = res.json();
      assert.match(body.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.equal(body.from.name, 'Jürgen Müller');
      assert.equal(body.to.name, 'Ελένη Παπαδοπούλου');
      assert.equal(body.status, 'created');
      assert.match(body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      const events = await t.ctx.db.selectFrom('domain_events').selectAll().where('shipment_id', '=', body.id).execute();
      assert.equal(events.length, 1);
      assert.equal(events[0]!.type, 'shipment.created');
      assert.deepEqual(JSON.parse(events[0]!.data), body);
    });

    const bad: [string, unknown][] = [
      ['unknown carrier', { ...sampleShipment, carrier: 'TNT' }],
      ['unknown service', { ...sampleShipment, service: 'teleport' }],
      ['missing to', { ...sampleShipment, to: undefined }],
      ['unknown field', { ...sampleShipment, colour: 'red' }],
      ['weight as string', { ...sampleShipment, parcel: { weight: { value: '1', unit: 'kg' } } }],
      ['bad country', { ...sampleShipment, to: { ...sampleShipment.to, country: 'XX' } }],
      ['control character', { ...sampleShipment, to: { ...sampleShipment.to, name: 'A\u0007B' } }],
      ['line too long', { ...sampleShipment, to: { ...sampleShipment.to, street1: 'x'.repeat(101) } }],
      ['partial dimensions', { ...sampleShipment, parcel: { weight: { value: 1, unit: 'kg' }, length: 3 } }],
      ['array body', [1, 2]],
    ];
    for (const [name, payload] of bad) {
      it(`rejects ${name} with 400 INVALID_INPUT and writes nothing`, async () => {
        const before = await countRows(t.ctx, 'shipments');
        const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: payload as object });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().code, 'INVALID_INPUT');
        assert.equal(typeof res.json().message, 'string');
        assert.equal(await countRows(t.ctx, 'shipments'), before);
      });
    }

    for (const code of ['EU', 'ZZ', 'UK', 'XA', 'QO']) {
      it(`rejects to.country ${code} (a region code, not an assigned ISO 3166-1 country) with 400 naming the field`, async () => {
        const before = await countRows(t.ctx, 'shipments');
        const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, to: { ...sampleShipment.to, country: code } } });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().code, 'INVALID_INPUT');
        assert.deepEqual(res.json().details.map((d: { field: string }) => d.field), ['to.country']);
        assert.equal(await countRows(t.ctx, 'shipments'), before);
      });
    }

    it('answers malformed JSON with 400, a wrong content type with 415, an oversized body with 413', async () => {
      const malformed = await t.request({ method: 'POST', url: '/v1/shipments', headers: { 'content-type': 'application/json' }, payload: '{"carrier":' });
      assert.equal(malformed.statusCode, 400);
      assert.equal(malformed.json().code, 'INVALID_INPUT');
      // Bytes that are not UTF-8 (Latin-1's ü) are refused, not stored as U+FFFD.
      const before = await countRows(t.ctx, 'shipments');
      const latin1 = Buffer.from(JSON.stringify({ ...sampleShipment, to: { ...sampleShipment.to, name: 'M~ller' } }));
      latin1[latin1.indexOf('~')] = 0xfc;
      const notUtf8 = await t.request({ method: 'POST', url: '/v1/shipments', headers: { 'content-type': 'application/json' }, payload: latin1 });
      assert.equal(notUtf8.statusCode, 400);
      assert.deepEqual(notUtf8.json(), { code: 'INVALID_INPUT', message: 'malformed request: the body is not UTF-8 text; send JSON in UTF-8' });
      assert.equal(await countRows(t.ctx, 'shipments'), before);
      const xml = await t.request({ method: 'POST', url: '/v1/shipments', headers: { 'content-type': 'application/xml' }, payload: '<a/>' });
      assert.equal(xml.statusCode, 415);
      assert.equal(xml.json().code, 'UNSUPPORTED_MEDIA_TYPE');
      const big = await t.request({ method: 'POST', url: '/v1/shipments', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ reference: 'x'.repeat(1024 * 1024 + 10) }) });
      assert.equal(big.statusCode, 413);
      assert.equal(big.json().code, 'PAYLOAD_TOO_LARGE');
    });
  });

  describe('GET /v1/shipments/{id}', () => {
    it('returns the shipment, and 404 naming the id for another account or an unknown id', async () => {
      const s = await createShipment(t);
      const ok = await t.request({ method: 'GET', url: `/v1/shipments/${s.id}` });
      assert.equal(ok.statusCode, 200);
      assert.equal(ok.headers['content-type'], 'application/json; charset=utf-8');
      assert.deepEqual(ok.json(), s);
      const other = await t.newAccount();
      const foreign = await t.app.inject({ method: 'GET', url: `/v1/shipments/${s.id}`, headers: { 'x-api-key': other.apiKey } });
      assert.equal(foreign.statusCode, 404);
      assert.deepEqual(foreign.json(), { code: 'NOT_FOUND', message: `shipment ${s.id} not found` });
      const bad = await t.request({ method: 'GET', url: '/v1/shipments/not-a-uuid' });
      assert.equal(bad.statusCode, 400);
      // An id in capitals is not one this service issued: 400 naming the parameter, not a 404 for a shipment that exists.
      const capitals = await t.request({ method: 'GET', url: `/v1/shipments/${s.id.toUpperCase()}` });
      assert.equal(capitals.statusCode, 400, capitals.body);
      assert.match(capitals.json().message, /id must be a UUID \(in lower case/);
    });
  });

  describe('GET /v1/shipments/{id} and POST agree to the byte', () => {
    it('whatever order the client sent the keys in', async () => {
      const reversed = (o: unknown): unknown =>
        Array.isArray(o) ? o.map(reversed) : o && typeof o === 'object' ? Object.fromEntries(Object.entries(o).reverse().map(([k, v]) => [k, reversed(v)])) : o;
      const created = await t.request({ method: 'POST', url: '/v1/shipments', payload: reversed(sampleShipment) as object });
      assert.equal(created.statusCode, 201, created.body);
      const read = await t.request({ method: 'GET', url: `/v1/shipments/${created.json().id}` });
      assert.equal(read.body, created.body);
    });
  });

  describe('GET /v1/shipments', () => {
    it('pages newest first with a Link header', async () => {
      const acct = await t.newAccount();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await createShipment(t, {}, acct.apiKey)).id);
      const seen: string[] = [];
      let url: string | null = '/v1/shipments?limit=2';
      while (url) {
        const res: { statusCode: number; json(): any; headers: Record<string, unknown> } = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': acct.apiKey } });
        assert.equal(res.statusCode, 200);
        seen.push(...res.json().map((s: { id: string }) => s.id));
        const link = res.headers.link as string | undefined;
        url = link ? new URL(/<([^>]+)>; rel="next"/.exec(link)![1]!).pathname + new URL(/<([^>]+)>/.exec(link)![1]!).search : null;
      }
      assert.deepEqual(seen, ids.reverse());
    });

    it('filters by status, carrier and a tracking number or part of a reference, the filters kept in the Link header', async () => {
      const acct = await t.newAccount();
      const get = async (query: string) => {
        const res = await t.app.inject({ method: 'GET', url: `/v1/shipments?${query}`, headers: { 'x-api-key': acct.apiKey } });
        assert.equal(res.statusCode, 200, `${query}: ${res.body}`);
        return { ids: res.json().map((x: { id: string }) => x.id) as string[], link: res.headers.link as string | undefined };
      };
      const a = await createShipment(t, { reference: 'Order 100% Blue_1' }, acct.apiKey);
      const b = await createShipment(t, { reference: 'Order 2002', carrier: 'DHL', service: 'express_worldwide' }, acct.apiKey);
      const c = await createShipment(t, { reference: 'Order 2003' }, acct.apiKey);
      const label = (await t.app.inject({ method: 'POST', url: '/v1/labels', headers: { 'x-api-key': acct.apiKey }, payload: { shipmentId: c.id } })).json();
      assert.deepEqual((await get('q=blue_1')).ids, [a.id], 'part of a reference, any case, _ and % taken as written');
      assert.deepEqual((await get('q=100%25')).ids, [a.id]);
      assert.deepEqual((await get(`q=${encodeURIComponent(label.trackingNumber.toLowerCase().replace(/(.{4})/g, '$1 '))}`)).ids, [c.id], 'a tracking number, any case, spaces ignored');
      assert.deepEqual((await get('carrier=DHL')).ids, [b.id]);
      assert.deepEqual((await get('q=Order%20200&limit=1')).ids, [c.id]);
      assert.match((await get('q=Order%20200&limit=1')).link ?? '', /q=Order\+200|q=Order%20200/, 'the next page keeps the filter');
      for (const [query, field] of [['status=lost', 'status'], ['carrier=TNT', 'carrier'], ['q=', 'q'], ['q=%20%20', 'q']]) {
        const res = await t.app.inject({ method: 'GET', url: `/v1/shipments?${query}`, headers: { 'x-api-key': acct.apiKey } });
        assert.equal(res.statusCode, 400, query);
        assert.equal(res.json().details[0].field, field);
      }
    });

    it("finds a shipment by part of its recipient's name or company, in any case, with or without accents", async () => {
      const acct = await t.newAccount();
      const find = async (q: string) => {
        const res = await t.app.inject({ method: 'GET', url: `/v1/shipments?q=${encodeURIComponent(q)}`, headers: { 'x-api-key': acct.apiKey } });
        assert.equal(res.statusCode, 200, res.body);
        return res.json().map((x: { id: string }) => x.id) as string[];
      };
      const greek = await createShipment(t, {}, acct.apiKey);
      const german = await createShipment(t, { to: { ...sampleShipment.to, name: 'Jürgen Müller', company: 'Straßen & Söhne' } }, acct.apiKey);
      const other = await createShipment(t, { to: { ...sampleShipment.to, name: 'Ada Lovelace' } }, acct.apiKey);
      assert.deepEqual(await find('muller'), [german.id], 'without the accent');
      assert.deepEqual(await find('MÜLLER'), [german.id], 'in capitals, with it');
      assert.deepEqual(await find('jürgen  müller'), [german.id], 'spaces collapsed');
      assert.deepEqual(await find('söhne'), [german.id], 'the company');
      assert.deepEqual(await find('ΕΛΈΝΗ'), [greek.id], 'Greek in capitals with its tonos');
      assert.deepEqual(await find('παπαδοπουλου'), [greek.id], 'and in small letters without');
      assert.deepEqual(await find('lovelace'), [other.id]);
      assert.deepEqual(await find('New York'), [], 'the street and city are not searched');
      assert.deepEqual(await find('name'), [], 'nor the stored JSON');
      // Words in any order, a comma between them.
      assert.deepEqual(await find('Müller, Jürgen'), [german.id]);
      assert.deepEqual(await find('muller jurgen sohne'), [german.id]);
      assert.deepEqual(await find('muller ada'), [], 'every word must match');
      // A name in Chinese characters or kana is found written with or without its space.
      const japanese = await createShipment(t, { to: { ...sampleShipment.to, name: '田中 太郎' } }, acct.apiKey);
      assert.deepEqual(await find('田中太郎'), [japanese.id]);
      assert.deepEqual(await find('太郎'), [japanese.id]);
      assert.deepEqual(await find('田中花子'), [], 'every character must be there');
      // A return is found by its customer, who sends it.
      const ret = (await t.app.inject({ method: 'POST', url: `/v1/shipments/${other.id}/returns`, headers: { 'x-api-key': acct.apiKey }, payload: {} })).json();
      assert.deepEqual((await find('lovelace')).sort(), [other.id, ret.id].sort());
      // Another account's recipient is not found.
      assert.deepEqual((await t.app.inject({ method: 'GET', url: '/v1/shipments?q=muller', headers: { 'x-api-key': t.apiKey } })).json().filter((x: { id: string }) => x.id === german.id), []);
    });

    it('shipments made before the recipient search (or by older code) are filled by its job, a page at a time', async () => {
      const acct = await t.newAccount();
      const made = [];
      for (const name of ['Grace Hopper', 'Grace Kelly', 'Grace Jones']) made.push(await createShipment(t, { to: { ...sampleShipment.to, name, company: 'Navy' } }, acct.apiKey));
      // As shipments written before the column was: empty (what migration 0020 leaves them).
      await t.ctx.db.updateTable('shipments').set({ recipient_search: '' }).where('account_id', '=', acct.accountId).execute();
      const find = async (q: string) => (await t.app.inject({ method: 'GET', url: `/v1/shipments?q=${q}`, headers: { 'x-api-key': acct.apiKey } })).json().map((x: { id: string }) => x.id);
      assert.deepEqual(await find('grace'), []);
      // Other tests' shipments are all filled already, so the pages are this account's: 2, then 1, then none.
      assert.deepEqual([await fillRecipientSearch(t.ctx, 2), await fillRecipientSearch(t.ctx, 2), await fillRecipientSearch(t.ctx, 2)], [2, 1, 0]);
      assert.deepEqual((await find('grace')).sort(), made.map((s) => s.id).sort());
      const row = await t.ctx.db.selectFrom('shipments').select('recipient_search').where('id', '=', made[0]!.id).executeTakeFirstOrThrow();
      assert.equal(row.recipient_search, 'grace hopper navy');
    });

    it('a search of accents alone finds no recipient (it folds to nothing), and letters without an accent to drop are found as people type them', async () => {
      const acct = await t.newAccount();
      const find = async (q: string) => (await t.app.inject({ method: 'GET', url: `/v1/shipments?q=${encodeURIComponent(q)}`, headers: { 'x-api-key': acct.apiKey } })).json().map((x: { id: string }) => x.id);
      const made = await createShipment(t, { to: { ...sampleShipment.to, name: 'Łukasz Yılmaz', company: 'Straße & Søn Ærø Đặng' } }, acct.apiKey);
      // A lone combining accent is no search at all (400, as a blank one is); a spacing one folds to nothing.
      assert.equal((await t.app.inject({ method: 'GET', url: `/v1/shipments?q=${encodeURIComponent('\u0301')}`, headers: { 'x-api-key': acct.apiKey } })).statusCode, 400);
      assert.deepEqual(await find('¨'), []);
      assert.deepEqual(await find('´'), []);
      for (const q of ['lukasz', 'YILMAZ', 'strasse', 'STRASSE', 'straße', 'son', 'aero', 'dang']) assert.deepEqual(await find(q), [made.id], q);
    });
  });
});

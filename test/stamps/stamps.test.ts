import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { countRows, createShipment, fakeClock, forEachDatabase, withTestApp } from '../helpers.ts';
import { signedLink } from '../../src/http/signed-links.ts';
import { createStamp, fetchLink } from './support.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const DAY_MS = 24 * 3600 * 1000;

forEachDatabase((database) => {
  const t = withTestApp(database);

  describe('POST /v1/stamps', () => {
    it('creates a PDF stamp by default: 201 with id, shipmentId, format, url, createdAt, expiresAt = createdAt + 24 h, status, serial', async () => {
      const shipment = await createShipment(t);
      const res = await t.request({ method: 'POST', url: '/v1/stamps', payload: { shipmentId: shipment.id } });
      assert.equal(res.statusCode, 201, res.body);
      const s = res.json();
      assert.match(s.id, UUID_V7);
      assert.equal(s.shipmentId, shipment.id);
      assert.equal(s.carrier, 'UPS');
      assert.equal(s.format, 'PDF');
      assert.equal(s.status, 'active');
      assert.match(s.serial, /^ST-\d{4}-\d{6}$/);
      assert.match(s.createdAt, TIME);
      assert.match(s.expiresAt, TIME);
      assert.equal(Date.parse(s.expiresAt) - Date.parse(s.createdAt), DAY_MS);
      assert.match(s.indicium, /^[\w-]+\.[\w-]+\.[\w-]+$/);
      const url = new URL(s.url);
      assert.equal(`${url.origin}${url.pathname}`, `http://localhost:8080/v1/downloads/stamps/${s.id}`);
      assert.equal(url.searchParams.get('format'), 'PDF');
      assert.equal(Number(url.searchParams.get('expires')), Math.floor(Date.parse(s.expiresAt) / 1000));
      assert.deepEqual(Object.keys(s).sort(), ['carrier', 'createdAt', 'expiresAt', 'format', 'id', 'indicium', 'serial', 'shipmentId', 'status', 'url']);
    });

    for (const format of ['PNG', 'ZPL', 'PDF']) {
      it(`accepts format ${format}`, async () => {
        const s = await createStamp(t, { format });
        assert.equal(s.format, format);
        assert.equal(new URL(s.url).searchParams.get('format'), format);
      });
    }

    const bad: [string, Record<string, unknown>][] = [
      ['a format other than PDF, PNG, ZPL', { format: 'JPEG' }],
      ['a lower-case format', { format: 'pdf' }],
      ['a shipment id that is not a uuid', { shipmentId: 'not-a-uuid' }],
      ['a numeric shipment id', { shipmentId: 42 }],
      ['no shipment id', { shipmentId: undefined }],
      ['an unknown field', { amount: 5 }],
    ];
    for (const [name, body] of bad) {
      it(`rejects ${name} with 400 INVALID_INPUT and creates nothing`, async () => {
        const shipment = await createShipment(t);
        const before = await countRows(t.ctx, 'stamps');
        const res = await t.request({ method: 'POST', url: '/v1/stamps', payload: { shipmentId: shipment.id, ...body } });
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().code, 'INVALID_INPUT');
        assert.equal(await countRows(t.ctx, 'stamps'), before);
      });
    }

    it('answers 404 NOT_FOUND naming the shipment for an unknown id and for another account\'s shipment', async () => {
      const unknown = '01890000-0000-7000-8000-000000000000';
      const res = await t.request({ method: 'POST', url: '/v1/stamps', payload: { shipmentId: unknown } });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { code: 'NOT_FOUND', message: `shipment ${unknown} not found` });
      const other = await t.newAccount();
      const theirs = await createShipment(t, {}, other.apiKey);
      const foreign = await t.request({ method: 'POST', url: '/v1/stamps', payload: { shipmentId: theirs.id } });
      assert.equal(foreign.statusCode, 404);
      assert.deepEqual(foreign.json(), { code: 'NOT_FOUND', message: `shipment ${theirs.id} not found` });
    });

    it('answers 409 CONFLICT naming the active stamp; after invalidation a new stamp with a new serial is allowed', async () => {
      const first = await createStamp(t);
      const again = await t.request({ method: 'POST', url: '/v1/stamps', payload: { shipmentId: first.shipmentId, format: 'PNG' } });
      assert.equal(again.statusCode, 409);
      assert.equal(again.json().code, 'CONFLICT');
      assert.match(again.json().message, new RegExp(first.id));
      const inv = await t.request({ method: 'PUT', url: `/v1/stamps/${first.id}/invalid?ids=${first.id}` });
      assert.equal(inv.statusCode, 204);
      const next = await createStamp(t, { shipmentId: first.shipmentId });
      assert.notEqual(next.id, first.id);
      assert.notEqual(next.serial, first.serial);
    });

    it('lets exactly one of several simultaneous requests for one shipment win; the others are 409', async () => {
      const shipment = await createShipment(t);
      const results = await Promise.all(
        Array.from({ length: 6 }, () => t.request({ method: 'POST', url: '/v1/stamps', payload: { shipmentId: shipment.id } })),
      );
      const codes = results.map((r) => r.statusCode).sort();
      assert.deepEqual(codes, [201, 409, 409, 409, 409, 409]);
      const rows = await t.ctx.db.selectFrom('stamps').select('id').where('shipment_id', '=', shipment.id).execute();
      assert.equal(rows.length, 1);
    });

    it('needs the write:stamps scope (403 FORBIDDEN naming it) and credentials (401)', async () => {
      const reader = await t.newAccount(['read:stamps', 'write:shipments']);
      const shipment = await createShipment(t, {}, reader.apiKey);
      const res = await t.app.inject({ method: 'POST', url: '/v1/stamps', headers: { 'x-api-key': reader.apiKey }, payload: { shipmentId: shipment.id } });
      assert.equal(res.statusCode, 403);
      assert.equal(res.json().code, 'FORBIDDEN');
      assert.match(res.json().message, /write:stamps/);
      const anonymous = await t.app.inject({ method: 'POST', url: '/v1/stamps', payload: { shipmentId: shipment.id } });
      assert.equal(anonymous.statusCode, 401);
    });

    it('replays the first response for the same Idempotency-Key', async () => {
      const shipment = await createShipment(t);
      const send = () => t.request({ method: 'POST', url: '/v1/stamps', headers: { 'idempotency-key': `stamp-${shipment.id}` }, payload: { shipmentId: shipment.id } });
      const first = await send();
      const second = await send();
      assert.equal(first.statusCode, 201);
      assert.equal(second.statusCode, 201);
      assert.equal(second.headers['idempotent-replayed'], 'true');
      assert.deepEqual(second.json(), first.json());
    });
  });

  describe('serial numbers', () => {
    const numberOf = (serial: string) => Number(serial.split('-')[2]);
    const issuerOf = (serial: string) => serial.split('-')[1];

    it('count up per account, and another account has its own issuer code and count', async () => {
      const acct = await t.newAccount();
      const a = [];
      for (let i = 0; i < 3; i++) a.push((await createStamp(t, {}, acct.apiKey)).serial);
      assert.deepEqual(a.map(numberOf), [1, 2, 3]);
      assert.equal(new Set(a.map(issuerOf)).size, 1);
      const other = await t.newAccount();
      const b = (await createStamp(t, {}, other.apiKey)).serial;
      assert.equal(numberOf(b), 1);
      assert.notEqual(issuerOf(b), issuerOf(a[0]!));
    });

    it('are unique and gapless under concurrent creation, and never reused after invalidation', async () => {
      const acct = await t.newAccount();
      const shipments = await Promise.all(Array.from({ length: 12 }, () => createShipment(t, {}, acct.apiKey)));
      const stamps = await Promise.all(shipments.map((s) => createStamp(t, { shipmentId: s.id }, acct.apiKey)));
      const numbers = stamps.map((s) => numberOf(s.serial)).sort((x, y) => x - y);
      assert.deepEqual(numbers, Array.from({ length: 12 }, (_, i) => i + 1));
      const inv = await t.app.inject({ method: 'PUT', url: `/v1/stamps/${stamps[0]!.id}/invalid?ids=${stamps[1]!.id}`, headers: { 'x-api-key': acct.apiKey } });
      assert.equal(inv.statusCode, 204);
      const again = await createStamp(t, { shipmentId: stamps[0]!.shipmentId }, acct.apiKey);
      assert.equal(numberOf(again.serial), 13);
    });

    if (database.name === 'postgres') {
      it('stay unique and monotonic with two service processes on one database', async () => {
        // A second app on the same PostgreSQL schema is a second process as far as the database can tell.
        const { openContext } = await import('../../src/bootstrap.ts');
        const { buildApp } = await import('../../src/app.ts');
        const schema = (await t.ctx.db.selectNoFrom((eb) => eb.fn<string>('current_schema').as('s')).executeTakeFirstOrThrow()).s;
        const ctx2 = await openContext(t.ctx.config, t.ctx.log, { schema });
        const app2 = await buildApp(ctx2);
        try {
          const acct = await t.newAccount();
          const shipments = await Promise.all(Array.from({ length: 16 }, () => createShipment(t, {}, acct.apiKey)));
          const results = await Promise.all(
            shipments.map((s, i) => (i % 2 ? app2 : t.app).inject({ method: 'POST', url: '/v1/stamps', headers: { 'x-api-key': acct.apiKey }, payload: { shipmentId: s.id } })),
          );
          for (const r of results) assert.equal(r.statusCode, 201, r.body);
          const stamps = results.map((r) => r.json());
          assert.equal(new Set(stamps.map((s) => issuerOf(s.serial))).size, 1);
          assert.deepEqual(stamps.map((s) => numberOf(s.serial)).sort((x, y) => x - y), Array.from({ length: 16 }, (_, i) => i + 1));
          // Monotonic: in serial order, issue times never go backwards.
          const bySerial = await t.ctx.db.selectFrom('stamps').select(['serial', 'created_at']).where('account_id', '=', acct.accountId).orderBy('serial').execute();
          assert.equal(bySerial.length, 16);
          for (let i = 1; i < bySerial.length; i++) assert.ok(bySerial[i]!.created_at >= bySerial[i - 1]!.created_at, `${bySerial[i]!.serial} was issued before ${bySerial[i - 1]!.serial}`);
        } finally {
          await app2.close();
          await ctx2.storage.close();
        }
      });
    }
  });

  describe('GET /v1/stamps/{id}', () => {
    it('returns the stamp as created; ?format=ZPL returns a ZPL url with the same expiresAt', async () => {
      const s = await createStamp(t);
      const res = await t.request({ method: 'GET', url: `/v1/stamps/${s.id}` });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), s);
      const zpl = await t.request({ method: 'GET', url: `/v1/stamps/${s.id}?format=ZPL` });
      assert.equal(zpl.statusCode, 200);
      assert.equal(zpl.json().format, 'ZPL');
      assert.equal(zpl.json().expiresAt, s.expiresAt);
      assert.equal(new URL(zpl.json().url).searchParams.get('format'), 'ZPL');
      const bad = await t.request({ method: 'GET', url: `/v1/stamps/${s.id}?format=GIF` });
      assert.equal(bad.statusCode, 400);
      assert.equal(bad.json().code, 'INVALID_INPUT');
    });

    it('answers 404 naming the stamp for an unknown id and another account\'s stamp; 400 for a non-uuid', async () => {
      const s = await createStamp(t);
      const other = await t.newAccount();
      const foreign = await t.app.inject({ method: 'GET', url: `/v1/stamps/${s.id}`, headers: { 'x-api-key': other.apiKey } });
      assert.equal(foreign.statusCode, 404);
      assert.deepEqual(foreign.json(), { code: 'NOT_FOUND', message: `stamp ${s.id} not found` });
      const unknown = '01890000-0000-7000-8000-000000000001';
      const res = await t.request({ method: 'GET', url: `/v1/stamps/${unknown}` });
      assert.deepEqual(res.json(), { code: 'NOT_FOUND', message: `stamp ${unknown} not found` });
      assert.equal((await t.request({ method: 'GET', url: '/v1/stamps/123' })).statusCode, 400);
    });

    it('shows status invalidated after invalidation and expired after expiresAt', async () => {
      const a = await createStamp(t);
      const b = await createStamp(t);
      await t.request({ method: 'PUT', url: `/v1/stamps/${a.id}/invalid?ids=${a.id}` });
      await t.ctx.db.updateTable('stamps').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('id', '=', b.id).execute();
      assert.equal((await t.request({ method: 'GET', url: `/v1/stamps/${a.id}` })).json().status, 'invalidated');
      assert.equal((await t.request({ method: 'GET', url: `/v1/stamps/${b.id}` })).json().status, 'expired');
    });

    it('needs read:stamps', async () => {
      const s = await createStamp(t);
      const writer = await t.newAccount(['write:stamps']);
      const res = await t.app.inject({ method: 'GET', url: `/v1/stamps/${s.id}`, headers: { 'x-api-key': writer.apiKey } });
      assert.equal(res.statusCode, 403);
      assert.match(res.json().message, /read:stamps/);
    });
  });

  describe('GET /v1/downloads/stamps/{id} (the signed url)', () => {
    const kinds = [
      ['PDF', 'application/pdf', 'pdf', (b: Buffer) => b.subarray(0, 5).toString() === '%PDF-'],
      ['PNG', 'image/png', 'png', (b: Buffer) => b.subarray(1, 4).toString() === 'PNG'],
      ['ZPL', 'application/zpl', 'zpl', (b: Buffer) => b.toString().startsWith('^XA') && b.toString().trimEnd().endsWith('^XZ')],
    ] as const;
    for (const [format, mediaType, ext, looksRight] of kinds) {
      it(`serves the ${format} without credentials, with media type ${mediaType} and a filename`, async () => {
        const s = await createStamp(t, { format });
        const res = await fetchLink(t, s.url);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.headers['content-type'], mediaType);
        assert.equal(res.headers['content-disposition'], `inline; filename="stamp-${s.serial}.${ext}"`);
        assert.equal(res.headers['cache-control'], 'no-store');
        assert.ok(looksRight(res.rawPayload));
      });
    }

    it('renders the same document twice for the same stamp', async () => {
      const s = await createStamp(t, { format: 'PNG' });
      const one = await fetchLink(t, s.url);
      const two = await fetchLink(t, s.url);
      assert.ok(one.rawPayload.equals(two.rawPayload));
    });

    it('answers 403 FORBIDDEN for a changed signature, format, expiry or id', async () => {
      const s = await createStamp(t);
      const other = await createStamp(t);
      const u = new URL(s.url);
      const sig = u.searchParams.get('sig')!;
      const variants = [
        s.url.replace(`sig=${sig}`, `sig=${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BA' : 'AA'}`),
        s.url.replace('format=PDF', 'format=PNG'),
        s.url.replace(/expires=(\d+)/, (_m: string, e: string) => `expires=${Number(e) + 3600}`),
        // The same instant spelled otherwise is a changed link too, not a malformed one.
        s.url.replace(/expires=(\d+)/, (_m: string, e: string) => `expires=0${e}`),
        s.url.replace(/expires=(\d+)/, (_m: string, e: string) => `expires=0x${Number(e).toString(16)}`),
        s.url.replace(/expires=(\d+)/, (_m: string, e: string) => `expires=${Number(e) / 1e9}e9`),
        s.url.replace(s.id, other.id),
        s.url.replace(/&sig=.*/, ''),
      ];
      for (const url of variants) {
        const res = await fetchLink(t, url);
        if (url.includes('sig=')) {
          assert.equal(res.statusCode, 403, url);
          assert.equal(res.json().code, 'FORBIDDEN');
        } else {
          assert.equal(res.statusCode, 400, url);
        }
      }
    });

    it('answers 410 GONE after invalidation', async () => {
      const s = await createStamp(t);
      assert.equal((await fetchLink(t, s.url)).statusCode, 200);
      await t.request({ method: 'PUT', url: `/v1/stamps/${s.id}/invalid?ids=${s.id}` });
      const res = await fetchLink(t, s.url);
      assert.equal(res.statusCode, 410);
      assert.equal(res.json().code, 'GONE');
    });

    it('a link works until its stamp\'s expiresAt to the millisecond, as every download link does', async (tc) => {
      const s = await createStamp(t);
      const second = Math.floor(Date.now() / 1000) + 5;
      const expiresAt = new Date(second * 1000 + 900).toISOString();
      await t.ctx.db.updateTable('stamps').set({ expires_at: expiresAt }).where('id', '=', s.id).execute();
      const link = signedLink(t.ctx.urlKey, t.ctx.config.baseUrl, 'stamps', s.id, 'PDF', expiresAt);
      const clock = fakeClock(tc);
      clock.tick(second * 1000 + 500 - Date.now());
      assert.equal((await fetchLink(t, link)).statusCode, 200, 'past the whole second the link names, before the stamp expires');
      clock.tick(400);
      assert.equal((await fetchLink(t, link)).statusCode, 410);
    });

    it('answers 410 GONE after expiry, whether the link or the stamp ran out', async () => {
      const s = await createStamp(t);
      const past = new Date(Date.now() - 1000).toISOString();
      const expiredLink = signedLink(t.ctx.urlKey, t.ctx.config.baseUrl, 'stamps', s.id, 'PDF', past);
      const res = await fetchLink(t, expiredLink);
      assert.equal(res.statusCode, 410);
      assert.equal(res.json().code, 'GONE');
      await t.ctx.db.updateTable('stamps').set({ expires_at: past }).where('id', '=', s.id).execute();
      assert.equal((await fetchLink(t, s.url)).statusCode, 410);
    });
  });
});

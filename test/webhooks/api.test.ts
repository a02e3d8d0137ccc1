// The webhooks API (docs/webhooks.md): subscriptions, their deliveries, redelivery; `secret` write-only.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countRows, createShipment, fakeClock, forEachDatabase, startTestApp, type TestAccount, type TestApp, withTestApp } from '../helpers.ts';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { bodyOf, fanOut } from '../../src/webhooks/jobs.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const RFC3339_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const ALL_EVENTS = ['shipment.created', 'shipment.in_transit', 'shipment.delivered', 'shipment.exception'];

type Res = { statusCode: number; body: string; json(): any; headers: Record<string, unknown> };

forEachDatabase((database) => {
  const t = withTestApp(database);

  const as = (account: TestAccount, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object): Promise<Res> =>
    t.app.inject({ method, url, headers: { 'x-api-key': account.apiKey }, ...(payload === undefined ? {} : { payload }) });

  async function createHook(account: TestAccount, body: Record<string, unknown> = {}): Promise<Record<string, any>> {
    const res = await as(account, 'POST', '/v1/webhooks', { url: 'https://hooks.example.com/shipping', events: ['shipment.created'], ...body });
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }

  /** Follows `Link: rel="next"` from `first` and returns every id in order. */
  async function allPages(account: TestAccount, first: string): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let pages = 0;
    let url: string | null = first;
    while (url) {
      const res = await as(account, 'GET', url);
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(Array.isArray(res.json()));
      ids.push(...res.json().map((x: { id: string }) => x.id));
      pages++;
      const link = res.headers.link as string | undefined;
      if (link) assert.match(link, /^<http:\/\/localhost:8080\/v1\/[^>]+>; rel="next"$/);
      url = link ? ((u) => u.pathname + u.search)(new URL(/<([^>]+)>/.exec(link)![1]!)) : null;
    }
    return { ids, pages };
  }

  describe('POST /v1/webhooks', () => {
    it('creates an active webhook and answers 201 with id, url, events, active, createdAt and no secret', async () => {
      const acct = await t.newAccount();
      const res = await as(acct, 'POST', '/v1/webhooks', { url: 'https://hooks.example.com/a?x=1', events: ALL_EVENTS, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assert.deepEqual(Object.keys(body).sort(), ['active', 'createdAt', 'events', 'id', 'updatedAt', 'url']);
      assert.match(body.id, UUID7);
      assert.equal(body.url, 'https://hooks.example.com/a?x=1');
      assert.deepEqual(body.events, ALL_EVENTS);
      assert.equal(body.active, true);
      assert.match(body.createdAt, RFC3339_MS);
      assert.equal(body.updatedAt, body.createdAt);
    });

    it('keeps active: false and accepts http URLs outside production', async () => {
      const acct = await t.newAccount();
      const body = await createHook(acct, { url: 'http://10.0.0.5:8080/hook', active: false });
      assert.equal(body.active, false);
      assert.equal(body.url, 'http://10.0.0.5:8080/hook');
    });

    const bad: [string, unknown][] = [
      ['a missing url', { events: ['shipment.created'] }],
      ['a relative url', { url: '/hooks', events: ['shipment.created'] }],
      ['an ftp url', { url: 'ftp://hooks.example.com/x', events: ['shipment.created'] }],
      ['a javascript url', { url: 'javascript:alert(1)', events: ['shipment.created'] }],
      ['credentials in the url', { url: 'https://user:pw@hooks.example.com/', events: ['shipment.created'] }],
      ['a url with no host (http:/x, which a browser would read as http://x/)', { url: 'http:/hooks.example.com/x', events: ['shipment.created'] }],
      ['a url with no slashes', { url: 'https:hooks.example.com', events: ['shipment.created'] }],
      ['a url that is not a string', { url: 42, events: ['shipment.created'] }],
      ['missing events', { url: 'https://hooks.example.com/' }],
      ['empty events', { url: 'https://hooks.example.com/', events: [] }],
      ['duplicate events', { url: 'https://hooks.example.com/', events: ['shipment.created', 'shipment.created'] }],
      ['an unknown event', { url: 'https://hooks.example.com/', events: ['shipment.lost'] }],
      ['events as a string', { url: 'https://hooks.example.com/', events: 'shipment.created' }],
      ['active as a string', { url: 'https://hooks.example.com/', events: ['shipment.created'], active: 'yes' }],
      ['an empty secret', { url: 'https://hooks.example.com/', events: ['shipment.created'], secret: '' }],
      ['a whsec_ secret that is not base64', { url: 'https://hooks.example.com/', events: ['shipment.created'], secret: 'whsec_not*base64!' }],
      ['an empty whsec_ secret', { url: 'https://hooks.example.com/', events: ['shipment.created'], secret: 'whsec_' }],
      ['a secret that is not a string', { url: 'https://hooks.example.com/', events: ['shipment.created'], secret: 123 }],
      ['an unknown field', { url: 'https://hooks.example.com/', events: ['shipment.created'], colour: 'red' }],
      ['an id', { url: 'https://hooks.example.com/', events: ['shipment.created'], id: '01890a5d-ac96-774b-bcce-b302099a8057' }],
    ];
    for (const [name, payload] of bad) {
      it(`rejects ${name} with 400 INVALID_INPUT and stores nothing`, async () => {
        const acct = await t.newAccount();
        const res = await as(acct, 'POST', '/v1/webhooks', payload as object);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().code, 'INVALID_INPUT');
        assert.equal(typeof res.json().message, 'string');
        assert.deepEqual((await as(acct, 'GET', '/v1/webhooks')).json(), []);
      });
    }

    it('needs the write:webhooks scope (403 with read:webhooks only)', async () => {
      const reader = await t.newAccount(['read:webhooks']);
      const res = await as(reader, 'POST', '/v1/webhooks', { url: 'https://hooks.example.com/', events: ['shipment.created'] });
      assert.equal(res.statusCode, 403);
      assert.equal(res.json().code, 'FORBIDDEN');
      assert.match(String(res.headers['www-authenticate']), /scope="write:webhooks"/);
      const writer = await t.newAccount(['write:webhooks']);
      const list = await as(writer, 'GET', '/v1/webhooks');
      assert.equal(list.statusCode, 403);
      assert.match(String(list.headers['www-authenticate']), /scope="read:webhooks"/);
    });
  });

  describe('https only in production', () => {
    let prod: TestApp;
    let dir = '';
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'webhooks-prod-'));
      const db = database.name === 'sqlite' ? { name: 'sqlite' as const, url: `sqlite:${join(dir, 'prod.db')}` } : database;
      prod = await startTestApp(db, { APP_ENV: 'production', PUBLIC_BASE_URL: 'https://api.example.com' });
    });
    after(async () => {
      await prod.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('rejects an http url with 400 and accepts https', async () => {
      const http = await prod.request({ method: 'POST', url: '/v1/webhooks', payload: { url: 'http://hooks.example.com/', events: ['shipment.created'] } });
      assert.equal(http.statusCode, 400, http.body);
      assert.equal(http.json().code, 'INVALID_INPUT');
      assert.match(http.json().message, /https/);
      const https = await prod.request({ method: 'POST', url: '/v1/webhooks', payload: { url: 'https://hooks.example.com/', events: ['shipment.created'] } });
      assert.equal(https.statusCode, 201, https.body);
      const patch = await prod.request({ method: 'PATCH', url: `/v1/webhooks/${https.json().id}`, payload: { url: 'http://hooks.example.com/' } });
      assert.equal(patch.statusCode, 400);
    });
  });

  describe('GET /v1/webhooks', () => {
    it('is a bare array, newest first, paged by limit and cursor with a Link header, and only the caller\'s', async () => {
      const acct = await t.newAccount();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await createHook(acct, { url: `https://hooks.example.com/${i}` })).id);
      const first = await as(acct, 'GET', '/v1/webhooks?limit=2');
      assert.equal(first.json().length, 2);
      assert.match(String(first.headers.link), /rel="next"/);
      const { ids: seen, pages } = await allPages(acct, '/v1/webhooks?limit=2');
      assert.deepEqual(seen, [...ids].reverse());
      assert.equal(pages, 3);
      const other = await t.newAccount();
      const theirs = await as(other, 'GET', '/v1/webhooks');
      assert.deepEqual(theirs.json(), []);
      assert.equal(theirs.headers.link, undefined);
    });

    it('rejects a limit outside 1 to 100 and a cursor it did not issue', async () => {
      const acct = await t.newAccount();
      for (const q of ['limit=0', 'limit=101', 'limit=abc', 'cursor=nonsense', 'colour=red']) {
        const res = await as(acct, 'GET', `/v1/webhooks?${q}`);
        assert.equal(res.statusCode, 400, q);
        assert.equal(res.json().code, 'INVALID_INPUT');
      }
    });
  });

  describe('GET /v1/webhooks/{id}', () => {
    it('returns the webhook; another account\'s or an unknown id is 404 naming the id; a malformed id is 400', async () => {
      const acct = await t.newAccount();
      const hook = await createHook(acct);
      const ok = await as(acct, 'GET', `/v1/webhooks/${hook.id}`);
      assert.equal(ok.statusCode, 200);
      assert.deepEqual(ok.json(), hook);
      const other = await t.newAccount();
      const foreign = await as(other, 'GET', `/v1/webhooks/${hook.id}`);
      assert.equal(foreign.statusCode, 404);
      assert.deepEqual(foreign.json(), { code: 'NOT_FOUND', message: `webhook ${hook.id} not found` });
      const unknown = '01890a5d-ac96-774b-bcce-b302099a8057';
      assert.deepEqual((await as(acct, 'GET', `/v1/webhooks/${unknown}`)).json(), { code: 'NOT_FOUND', message: `webhook ${unknown} not found` });
      assert.equal((await as(acct, 'GET', '/v1/webhooks/not-a-uuid')).statusCode, 400);
    });
  });

  describe('PATCH /v1/webhooks/{id}', () => {
    it('changes only the fields sent and answers 200 with the webhook', async (tc) => {
      const acct = await t.newAccount();
      const hook = await createHook(acct);
      fakeClock(tc).tick(5);
      const res = await as(acct, 'PATCH', `/v1/webhooks/${hook.id}`, { events: ['shipment.delivered', 'shipment.exception'], active: false });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.deepEqual(body.events, ['shipment.delivered', 'shipment.exception']);
      assert.equal(body.active, false);
      assert.equal(body.url, hook.url);
      assert.equal(body.createdAt, hook.createdAt);
      assert.ok(body.updatedAt > hook.updatedAt);
      assert.deepEqual((await as(acct, 'GET', `/v1/webhooks/${hook.id}`)).json(), body);
      const url = await as(acct, 'PATCH', `/v1/webhooks/${hook.id}`, { url: 'https://elsewhere.example.org/in', active: true });
      assert.equal(url.json().url, 'https://elsewhere.example.org/in');
      assert.equal(url.json().active, true);
    });

    it('rejects an empty body, bad fields and unknown fields with 400; another account\'s id with 404', async () => {
      const acct = await t.newAccount();
      const hook = await createHook(acct);
      for (const payload of [{}, { events: [] }, { events: ['nope'] }, { url: 'not a url' }, { active: null }, { secret: '' }, { id: hook.id }]) {
        const res = await as(acct, 'PATCH', `/v1/webhooks/${hook.id}`, payload);
        assert.equal(res.statusCode, 400, JSON.stringify(payload));
        assert.equal(res.json().code, 'INVALID_INPUT');
      }
      assert.deepEqual((await as(acct, 'GET', `/v1/webhooks/${hook.id}`)).json(), hook);
      const other = await t.newAccount();
      const foreign = await as(other, 'PATCH', `/v1/webhooks/${hook.id}`, { active: false });
      assert.equal(foreign.statusCode, 404);
      assert.equal((await as(acct, 'GET', `/v1/webhooks/${hook.id}`)).json().active, true);
    });
  });

  describe('DELETE /v1/webhooks/{id}', () => {
    it('answers 204, removes the webhook with its deliveries, and 404 afterwards or for another account', async () => {
      const acct = await t.newAccount();
      const hook = await createHook(acct);
      const keep = await createHook(acct);
      await createShipment(t, {}, acct.apiKey);
      while ((await fanOut(t.ctx)).events > 0);
      const deliveriesOf = async (id: string) => (await t.ctx.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', id).execute()).length;
      assert.equal(await deliveriesOf(hook.id), 1);
      const other = await t.newAccount();
      assert.equal((await as(other, 'DELETE', `/v1/webhooks/${hook.id}`)).statusCode, 404);
      const res = await as(acct, 'DELETE', `/v1/webhooks/${hook.id}`);
      assert.equal(res.statusCode, 204);
      assert.equal(res.body, '');
      assert.equal((await as(acct, 'GET', `/v1/webhooks/${hook.id}`)).statusCode, 404);
      assert.equal((await as(acct, 'DELETE', `/v1/webhooks/${hook.id}`)).statusCode, 404);
      assert.equal(await deliveriesOf(hook.id), 0);
      assert.equal(await deliveriesOf(keep.id), 1);
    });
  });

  describe('secret is write-only', () => {
    it('never appears in a response, a log line or the database in clear', async () => {
      const acct = await t.newAccount();
      const secrets = ['whsec_c2VjcmV0LXRoYXQtbXVzdC1uZXZlci1sZWFrLTAx', 'plain-secret-that-must-never-leak-02', 'plain-secret-that-must-never-leak-03'];
      const bodies: string[] = [];
      const created = await as(acct, 'POST', '/v1/webhooks', { url: 'https://hooks.example.com/s', events: ['shipment.created'], secret: secrets[0] });
      bodies.push(created.body);
      const id = created.json().id;
      bodies.push((await as(acct, 'PATCH', `/v1/webhooks/${id}`, { secret: secrets[1] })).body);
      bodies.push((await as(acct, 'GET', `/v1/webhooks/${id}`)).body);
      bodies.push((await as(acct, 'GET', '/v1/webhooks')).body);
      // Rejected requests carrying a secret: their error messages must not echo it.
      bodies.push((await as(acct, 'POST', '/v1/webhooks', { url: 'ftp://x.example.com/', events: ['shipment.created'], secret: secrets[2] })).body);
      bodies.push((await as(acct, 'PATCH', `/v1/webhooks/${id}`, { secret: secrets[2], events: [] })).body);
      // A credentialled request that is replayed by Idempotency-Key is stored; the stored copy has no secret either.
      const idem = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': acct.apiKey, 'idempotency-key': 'wh-1' }, payload: { url: 'https://hooks.example.com/i', events: ['shipment.created'], secret: secrets[2] } });
      bodies.push(idem.body);
      await createShipment(t, {}, acct.apiKey);
      while ((await fanOut(t.ctx)).events > 0);
      bodies.push((await as(acct, 'GET', `/v1/webhooks/${id}/deliveries`)).body);
      const rows = await t.ctx.db.selectFrom('webhooks').select('secret').where('account_id', '=', acct.accountId).execute();
      const stored = JSON.stringify(await t.ctx.db.selectFrom('idempotency_keys').selectAll().where('account_id', '=', acct.accountId).execute());
      assert.equal(rows.length, 2);
      for (const s of secrets) {
        for (const b of bodies) assert.ok(!b.includes(s), `response leaked a secret: ${b}`);
        assert.ok(!t.logs.join('').includes(s), 'a log line contains a secret');
        for (const r of rows) assert.ok(r.secret && !r.secret.includes(s) && r.secret.startsWith('v1.'), 'secret stored in clear');
        assert.ok(!stored.includes(s), 'idempotency record contains a secret');
      }
    });

    it('is redacted by the logger wherever an object carries it', () => {
      const before = t.logs.length;
      t.ctx.log.info({ webhook: { url: 'https://x.example.com', secret: 'log-me-not-1234' } }, 'redaction check');
      const line = t.logs.slice(before).join('');
      assert.match(line, /redaction check/);
      assert.ok(!line.includes('log-me-not-1234'));
      assert.match(line, /\[redacted\]/);
    });
  });

  describe('GET /v1/webhooks/{id}/deliveries', () => {
    it('lists one pending delivery per subscribed event, newest first, with attempts and nextAttemptAt, paged with Link', async () => {
      const acct = await t.newAccount();
      const hook = await createHook(acct);
      const shipments: string[] = [];
      for (let i = 0; i < 3; i++) shipments.push((await createShipment(t, {}, acct.apiKey)).id);
      while ((await fanOut(t.ctx)).events > 0);
      const res = await as(acct, 'GET', `/v1/webhooks/${hook.id}/deliveries`);
      assert.equal(res.statusCode, 200);
      const list = res.json();
      assert.equal(list.length, 3);
      const events = await t.ctx.db.selectFrom('domain_events').select(['id', 'shipment_id']).where('account_id', '=', acct.accountId).orderBy('id', 'desc').execute();
      assert.deepEqual(list.map((d: any) => d.eventId), events.map((e) => e.id));
      // Each names the shipment its event is about.
      assert.deepEqual(list.map((d: any) => d.subjectId), shipments.toReversed());
      for (const d of list) {
        assert.match(d.id, UUID7);
        assert.equal(d.type, 'shipment.created');
        assert.equal(d.status, 'pending');
        assert.deepEqual(d.attempts, []);
        assert.match(d.nextAttemptAt, RFC3339_MS);
        assert.match(d.createdAt, RFC3339_MS);
      }
      const { ids, pages } = await allPages(acct, `/v1/webhooks/${hook.id}/deliveries?limit=2`);
      assert.deepEqual(ids, list.map((d: any) => d.id));
      assert.equal(pages, 2);
      assert.deepEqual((await as(acct, 'GET', `/v1/webhooks/${hook.id}/deliveries?status=succeeded`)).json(), []);
      assert.equal((await as(acct, 'GET', `/v1/webhooks/${hook.id}/deliveries?status=pending`)).json().length, 3);
      assert.equal((await as(acct, 'GET', `/v1/webhooks/${hook.id}/deliveries?status=lost`)).statusCode, 400);
      const other = await t.newAccount();
      assert.equal((await as(other, 'GET', `/v1/webhooks/${hook.id}/deliveries`)).statusCode, 404);
    });
  });

  describe('fan-out', () => {
    it('creates one delivery per active subscriber of the event\'s kind in the same account, once', async () => {
      const acct = await t.newAccount();
      const created = await createHook(acct, { events: ['shipment.created'] });
      const both = await createHook(acct, { events: ['shipment.delivered', 'shipment.created'] });
      const deliveredOnly = await createHook(acct, { events: ['shipment.delivered'] });
      const inactive = await createHook(acct, { events: ['shipment.created'], active: false });
      const other = await t.newAccount();
      const foreign = await createHook(other, { events: ['shipment.created'] });
      const s = await createShipment(t, {}, acct.apiKey);
      while ((await fanOut(t.ctx)).events > 0);
      while ((await fanOut(t.ctx)).events > 0);
      const count = async (id: string) => (await as(id === foreign.id ? other : acct, 'GET', `/v1/webhooks/${id}/deliveries`)).json().length;
      assert.equal(await count(created.id), 1);
      assert.equal(await count(both.id), 1);
      assert.equal(await count(deliveredOnly.id), 0);
      assert.equal(await count(inactive.id), 0);
      assert.equal(await count(foreign.id), 0);
      const event = await t.ctx.db.selectFrom('domain_events').selectAll().where('shipment_id', '=', s.id).executeTakeFirstOrThrow();
      assert.match(String(event.dispatched_at), RFC3339_MS);
      const delivery = await t.ctx.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', created.id).executeTakeFirstOrThrow();
      assert.equal(delivery.event_id, event.id);
      assert.deepEqual(JSON.parse(bodyOf(event)), { id: event.id, type: 'shipment.created', timestamp: event.created_at, data: s });
    });
  });

  describe('fan-out after a delay', () => {
    it('gives an event only to the webhooks that existed when it happened, however late the fan-out runs', async () => {
      const acct = await t.newAccount();
      const before = await createHook(acct, { events: ['shipment.created'] });
      await createShipment(t, {}, acct.apiKey);
      // The worker was away (ROLE=api alone, or down) while a webhook was added (a later millisecond:
      // times are kept to the millisecond, and one created in the event's own millisecond gets it).
      await new Promise((resolve) => setTimeout(resolve, 5));
      const after = await createHook(acct, { events: ['shipment.created'] });
      while ((await fanOut(t.ctx)).events > 0);
      const count = async (id: string) => (await as(acct, 'GET', `/v1/webhooks/${id}/deliveries`)).json().length;
      assert.equal(await count(before.id), 1);
      assert.equal(await count(after.id), 0);
    });

    it('keeps the event of a webhook deactivated after it, paused until the webhook is active again; one inactive already gets none', async () => {
      const acct = await t.newAccount();
      const deactivated = await createHook(acct, { events: ['shipment.created'] });
      const off = await createHook(acct, { events: ['shipment.created'] });
      assert.equal((await as(acct, 'PATCH', `/v1/webhooks/${off.id}`, { active: false })).statusCode, 200);
      await new Promise((resolve) => setTimeout(resolve, 5));
      await createShipment(t, {}, acct.apiKey);
      await new Promise((resolve) => setTimeout(resolve, 5));
      // Deactivated (a PATCH here; a 410 does the same) before the fan-out ran.
      assert.equal((await as(acct, 'PATCH', `/v1/webhooks/${deactivated.id}`, { active: false })).statusCode, 200);
      while ((await fanOut(t.ctx)).events > 0);
      const deliveries = async (id: string) => (await as(acct, 'GET', `/v1/webhooks/${id}/deliveries`)).json();
      const [kept] = await deliveries(deactivated.id);
      assert.equal(kept?.status, 'pending');
      assert.equal(kept.nextAttemptAt, null, 'paused, as the webhook is');
      assert.deepEqual(await deliveries(off.id), []);
      assert.equal((await as(acct, 'PATCH', `/v1/webhooks/${deactivated.id}`, { active: true })).statusCode, 200);
      assert.notEqual((await deliveries(deactivated.id))[0].nextAttemptAt, null, 'due again once active');
    });
  });

  describe('POST /v1/webhooks/{id}/deliveries/{deliveryId}/redeliver', () => {
    it('answers 202 with the delivery pending and due now; 404 for unknown or foreign ids; 409 while the webhook is inactive', async () => {
      const acct = await t.newAccount();
      const hook = await createHook(acct);
      await createShipment(t, {}, acct.apiKey);
      while ((await fanOut(t.ctx)).events > 0);
      const [delivery] = (await as(acct, 'GET', `/v1/webhooks/${hook.id}/deliveries`)).json();
      await t.ctx.db.updateTable('webhook_deliveries').set({ status: 'failed', next_attempt_at: null, attempt_count: 3 }).where('id', '=', delivery.id).execute();
      const res = await as(acct, 'POST', `/v1/webhooks/${hook.id}/deliveries/${delivery.id}/redeliver`);
      assert.equal(res.statusCode, 202, res.body);
      assert.equal(res.json().id, delivery.id);
      assert.equal(res.json().eventId, delivery.eventId);
      assert.equal(res.json().subjectId, delivery.subjectId);
      assert.match(delivery.subjectId, UUID7);
      assert.equal(res.json().status, 'pending');
      assert.match(res.json().nextAttemptAt, RFC3339_MS);
      const row = await t.ctx.db.selectFrom('webhook_deliveries').selectAll().where('id', '=', delivery.id).executeTakeFirstOrThrow();
      assert.equal(row.status, 'pending');
      assert.equal(row.attempt_count, 0);
      const unknown = '01890a5d-ac96-774b-bcce-b302099a8057';
      const missing = await as(acct, 'POST', `/v1/webhooks/${hook.id}/deliveries/${unknown}/redeliver`);
      assert.equal(missing.statusCode, 404);
      assert.deepEqual(missing.json(), { code: 'NOT_FOUND', message: `delivery ${unknown} not found` });
      const other = await t.newAccount();
      assert.equal((await as(other, 'POST', `/v1/webhooks/${hook.id}/deliveries/${delivery.id}/redeliver`)).statusCode, 404);
      const otherHook = await createHook(acct);
      assert.equal((await as(acct, 'POST', `/v1/webhooks/${otherHook.id}/deliveries/${delivery.id}/redeliver`)).statusCode, 404);
      await as(acct, 'PATCH', `/v1/webhooks/${hook.id}`, { active: false });
      const inactive = await as(acct, 'POST', `/v1/webhooks/${hook.id}/deliveries/${delivery.id}/redeliver`);
      assert.equal(inactive.statusCode, 409);
      assert.equal(inactive.json().code, 'CONFLICT');
    });

    it('pauses pending deliveries while the webhook is inactive and resumes them when it is active again', async () => {
      const acct = await t.newAccount();
      const hook = await createHook(acct);
      await createShipment(t, {}, acct.apiKey);
      while ((await fanOut(t.ctx)).events > 0);
      await as(acct, 'PATCH', `/v1/webhooks/${hook.id}`, { active: false });
      const paused = (await as(acct, 'GET', `/v1/webhooks/${hook.id}/deliveries`)).json();
      assert.equal(paused[0].status, 'pending');
      assert.equal(paused[0].nextAttemptAt, null);
      await as(acct, 'PATCH', `/v1/webhooks/${hook.id}`, { active: true });
      const resumed = (await as(acct, 'GET', `/v1/webhooks/${hook.id}/deliveries`)).json();
      assert.match(resumed[0].nextAttemptAt, RFC3339_MS);
      assert.equal(await countRows(t.ctx, 'webhook_attempts'), 0);
    });
  });

  describe('OpenAPI', () => {
    it('declares every webhooks response, and real responses match their schemas', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
      const ajv = new Ajv2020({ strict: false, allErrors: true });
      addFormats(ajv);
      ajv.addSchema(doc, 'openapi');
      const check = (method: string, path: string, res: Res) => {
        const responses = doc.paths[path]?.[method.toLowerCase()]?.responses;
        assert.ok(responses, `${method} ${path} is not in the document`);
        const declared = responses[String(res.statusCode)];
        assert.ok(declared, `${method} ${path} → ${res.statusCode} is not declared`);
        if (res.statusCode === 204) return assert.equal(res.body, '');
        const pointer = ['paths', path, method.toLowerCase(), 'responses', String(res.statusCode), 'content', 'application/json', 'schema'].map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
        const validate = ajv.getSchema(`openapi#/${pointer}`)!;
        assert.ok(validate(res.json()), `${method} ${path} → ${res.statusCode}: ${ajv.errorsText(validate.errors)}\n${res.body}`);
      };
      const acct = await t.newAccount();
      const created = await as(acct, 'POST', '/v1/webhooks', { url: 'https://hooks.example.com/oa', events: ['shipment.created'], secret: 'oa-secret' });
      check('POST', '/v1/webhooks', created);
      const id = created.json().id;
      check('POST', '/v1/webhooks', await as(acct, 'POST', '/v1/webhooks', { url: 'nope', events: [] }));
      check('GET', '/v1/webhooks', await as(acct, 'GET', '/v1/webhooks'));
      check('GET', '/v1/webhooks/{id}', await as(acct, 'GET', `/v1/webhooks/${id}`));
      check('GET', '/v1/webhooks/{id}', await as(acct, 'GET', '/v1/webhooks/01890a5d-ac96-774b-bcce-b302099a8057'));
      check('PATCH', '/v1/webhooks/{id}', await as(acct, 'PATCH', `/v1/webhooks/${id}`, { secret: null }));
      await createShipment(t, {}, acct.apiKey);
      while ((await fanOut(t.ctx)).events > 0);
      const [delivery] = (await as(acct, 'GET', `/v1/webhooks/${id}/deliveries`)).json();
      await t.ctx.db
        .insertInto('webhook_attempts')
        .values([
          { id: '01890a5d-ac96-774b-bcce-b302099a8001', delivery_id: delivery.id, at: new Date().toISOString(), response_status: null, duration_ms: 12, error: 'connection refused' },
          { id: '01890a5d-ac96-774b-bcce-b302099a8002', delivery_id: delivery.id, at: new Date().toISOString(), response_status: 200, duration_ms: 3, error: null },
        ])
        .execute();
      const deliveries = await as(acct, 'GET', `/v1/webhooks/${id}/deliveries`);
      assert.equal(deliveries.json()[0].attempts.length, 2);
      check('GET', '/v1/webhooks/{id}/deliveries', deliveries);
      check('POST', '/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver', await as(acct, 'POST', `/v1/webhooks/${id}/deliveries/${delivery.id}/redeliver`));
      await as(acct, 'PATCH', `/v1/webhooks/${id}`, { active: false });
      const paused = await as(acct, 'GET', `/v1/webhooks/${id}/deliveries`);
      assert.equal(paused.json()[0].nextAttemptAt, null);
      check('GET', '/v1/webhooks/{id}/deliveries', paused);
      check('POST', '/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver', await as(acct, 'POST', `/v1/webhooks/${id}/deliveries/${delivery.id}/redeliver`));
      check('DELETE', '/v1/webhooks/{id}', await as(acct, 'DELETE', `/v1/webhooks/${id}`));
      check('DELETE', '/v1/webhooks/{id}', await as(acct, 'DELETE', `/v1/webhooks/${id}`));
    });
  });
});

// Contract §9: Idempotency-Key on POST, stored in the database, per account, 24 hours.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { sql } from 'kysely';
import { withCommitStatement } from '../../src/db/commit-statement.ts';
import { nextCounter, PURGE_CHUNK } from '../../src/db/index.ts';
import { purgeIdempotencyKeys } from '../../src/http/idempotency.ts';
import { countRows, forEachDatabase, sampleShipment, withTestApp } from '../helpers.ts';

forEachDatabase((database) => {
  const t = withTestApp(database);

  const post = (key: string, payload: object, apiKey?: string) =>
    t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': apiKey ?? t.apiKey, 'idempotency-key': key }, payload });
  const shipmentsOf = async (accountId: string) => Number((await t.ctx.db.selectFrom('shipments').select((eb) => eb.fn.countAll<number>().as('n')).where('account_id', '=', accountId).executeTakeFirstOrThrow()).n);

  describe('Idempotency-Key on POST /v1/shipments', () => {
    it('the same key and body replays the first response: same status, body and id, marked idempotent-replayed, one row', async () => {
      const acct = await t.newAccount();
      const first = await post('order-1001', sampleShipment, acct.apiKey);
      assert.equal(first.statusCode, 201);
      assert.equal(first.headers['idempotent-replayed'], undefined);
      const again = await post('order-1001', sampleShipment, acct.apiKey);
      assert.equal(again.statusCode, 201);
      assert.equal(again.headers['idempotent-replayed'], 'true');
      assert.match(String(again.headers['content-type']), /^application\/json/);
      assert.deepEqual(again.json(), first.json());
      assert.equal(await shipmentsOf(acct.accountId), 1);
      const events = await t.ctx.db.selectFrom('domain_events').select('id').where('shipment_id', '=', first.json().id).execute();
      assert.equal(events.length, 1, 'the replay emits no second shipment.created');
    });

    it('the same key with a different body: 422 IDEMPOTENCY_KEY_REUSED and nothing created', async () => {
      const acct = await t.newAccount();
      assert.equal((await post('k-reused', sampleShipment, acct.apiKey)).statusCode, 201);
      const res = await post('k-reused', { ...sampleShipment, reference: 'another order' }, acct.apiKey);
      assert.equal(res.statusCode, 422);
      assert.equal(res.json().code, 'IDEMPOTENCY_KEY_REUSED');
      assert.equal(typeof res.json().message, 'string');
      assert.equal(await shipmentsOf(acct.accountId), 1);
    });

    it('keeps a request as an HMAC under a service secret, not a plain hash of its body (which can hold a secret); a key kept the plain way replays too', async () => {
      const acct = await t.newAccount();
      const body = { url: 'https://hooks.example.com/i', events: ['shipment.created'], secret: 'short' };
      const webhook = (key: string) => t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': acct.apiKey, 'idempotency-key': key }, payload: body });
      assert.equal((await webhook('wh-keyed')).statusCode, 201);
      const stored = await t.ctx.db.selectFrom('idempotency_keys').select('request_hash').where('account_id', '=', acct.accountId).where('key', '=', 'wh-keyed').executeTakeFirstOrThrow();
      // What the schema makes of the body (the default `active` added), as a guesser holding the table would try it.
      const text = `POST /v1/webhooks\n${JSON.stringify({ ...body, active: true })}`;
      assert.notEqual(stored.request_hash, createHash('sha256').update(text).digest('hex'));
      assert.equal(stored.request_hash, createHmac('sha256', t.ctx.requestKey).update(text).digest('hex'), 'the keyed fingerprint of the same text');
      // A key claimed before fingerprints were keyed (within its 24 hours across an upgrade) still replays.
      const first = await post('legacy-1', sampleShipment, acct.apiKey);
      await t.ctx.db.updateTable('idempotency_keys').set({ request_hash: createHash('sha256').update(`POST /v1/shipments\n${JSON.stringify(sampleShipment)}`).digest('hex') }).where('account_id', '=', acct.accountId).where('key', '=', 'legacy-1').execute();
      const again = await post('legacy-1', sampleShipment, acct.apiKey);
      assert.equal(again.headers['idempotent-replayed'], 'true', again.body);
      assert.equal(again.json().id, first.json().id);
      assert.equal((await post('legacy-1', { ...sampleShipment, reference: 'another order' }, acct.apiKey)).statusCode, 422);
    });

    it('keys belong to an account: another account\'s same key and body creates its own shipment', async () => {
      const a = await t.newAccount();
      const b = await t.newAccount();
      const ra = await post('shared-key', sampleShipment, a.apiKey);
      const rb = await post('shared-key', sampleShipment, b.apiKey);
      assert.equal(ra.statusCode, 201);
      assert.equal(rb.statusCode, 201);
      assert.equal(rb.headers['idempotent-replayed'], undefined);
      assert.notEqual(ra.json().id, rb.json().id);
      assert.equal(await shipmentsOf(b.accountId), 1);
    });

    it('a refusal that changed nothing is not remembered, whether the schema or the service refused it: the corrected request takes the key', async () => {
      const acct = await t.newAccount();
      // A service that does not run the route passes the schema and is refused by the service layer.
      const wrongRoute = { ...sampleShipment, service: 'ground' };
      const first = await post('k-4xx', wrongRoute, acct.apiKey);
      assert.equal(first.statusCode, 400, first.body);
      const again = await post('k-4xx', wrongRoute, acct.apiKey);
      assert.equal(again.statusCode, 400);
      assert.equal(again.headers['idempotent-replayed'], undefined, 'answered anew');
      const fixed = await post('k-4xx', sampleShipment, acct.apiKey);
      assert.equal(fixed.statusCode, 201, fixed.body);
      assert.equal((await post('k-4xx', sampleShipment, acct.apiKey)).headers['idempotent-replayed'], 'true', 'the success is kept');
      assert.equal(await shipmentsOf(acct.accountId), 1);
      // Schema-invalid bodies never reach the handler: the key stays free for the corrected request.
      const invalid = await post('k-schema', { ...sampleShipment, carrier: 'TNT' }, acct.apiKey);
      assert.equal(invalid.statusCode, 400);
      const corrected = await post('k-schema', sampleShipment, acct.apiKey);
      assert.equal(corrected.statusCode, 201);
      assert.equal(await shipmentsOf(acct.accountId), 2);
    });

    it('concurrent requests with one key create one shipment; the others replay it or get 409 CONFLICT', async () => {
      const acct = await t.newAccount();
      const results = await Promise.all(Array.from({ length: 6 }, () => post('k-race', sampleShipment, acct.apiKey)));
      const created = results.filter((r) => r.statusCode === 201 && r.headers['idempotent-replayed'] === undefined);
      assert.equal(created.length, 1, results.map((r) => `${r.statusCode} ${r.body}`).join('\n'));
      for (const r of results) {
        assert.ok(r.statusCode === 201 || r.statusCode === 409, `${r.statusCode} ${r.body}`);
        if (r.statusCode === 201) assert.equal(r.json().id, created[0]!.json().id);
        else assert.equal(r.json().code, 'CONFLICT');
      }
      assert.equal(await shipmentsOf(acct.accountId), 1);
      // Once the first finished, a retry replays it.
      const retry = await post('k-race', sampleShipment, acct.apiKey);
      assert.equal(retry.headers['idempotent-replayed'], 'true');
      assert.equal(retry.json().id, created[0]!.json().id);
    });

    it('after 24 hours a key may be used again', async () => {
      const acct = await t.newAccount();
      const first = await post('k-old', sampleShipment, acct.apiKey);
      const dayAgo = new Date(Date.now() - 25 * 3600 * 1000).toISOString();
      await t.ctx.db.updateTable('idempotency_keys').set({ created_at: dayAgo }).where('account_id', '=', acct.accountId).where('key', '=', 'k-old').execute();
      const later = await post('k-old', { ...sampleShipment, reference: 'a new order' }, acct.apiKey);
      assert.equal(later.statusCode, 201);
      assert.notEqual(later.json().id, first.json().id);
      assert.equal(later.headers['idempotent-replayed'], undefined);
    });

    it('the purge forgets keys older than 24 hours at most PURGE_CHUNK a statement, so the job runs again at once until none is left, and keeps the others', async () => {
      const acct = await t.newAccount();
      const old = new Date(Date.now() - 25 * 3600 * 1000).toISOString();
      const rows = Array.from({ length: PURGE_CHUNK + 7 }, (_, i) => ({ account_id: acct.accountId, key: `old-${i}`, request_hash: 'h', created_at: old }));
      for (let i = 0; i < rows.length; i += 1000) await t.ctx.db.insertInto('idempotency_keys').values(rows.slice(i, i + 1000)).execute();
      await t.ctx.db.insertInto('idempotency_keys').values([0, 1, 2].map((i) => ({ account_id: acct.accountId, key: `new-${i}`, request_hash: 'h', created_at: new Date().toISOString() }))).execute();
      assert.equal(await purgeIdempotencyKeys(t.ctx), PURGE_CHUNK);
      assert.equal(await purgeIdempotencyKeys(t.ctx), 7);
      assert.equal(await purgeIdempotencyKeys(t.ctx), 0);
      const left = await t.ctx.db.selectFrom('idempotency_keys').select('key').where('account_id', '=', acct.accountId).orderBy('key').execute();
      assert.deepEqual(left.map((r) => r.key), ['new-0', 'new-1', 'new-2']);
    });

    it('a key longer than 255 characters: 400 INVALID_INPUT, nothing created', async () => {
      const before = await countRows(t.ctx, 'shipments');
      const res = await post('k'.repeat(256), sampleShipment);
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().code, 'INVALID_INPUT');
      assert.equal(await countRows(t.ctx, 'shipments'), before);
    });

    it('without a key, two identical requests create two shipments', async () => {
      const acct = await t.newAccount();
      for (let i = 0; i < 2; i++) assert.equal((await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': acct.apiKey }, payload: sampleShipment })).statusCode, 201);
      assert.equal(await shipmentsOf(acct.accountId), 2);
    });

    // What a process that dies between its commit and storing the answer leaves behind: the key's row
    // still without an answer, claimed longer ago than a live request could take.
    const orphan = (accountId: string, key: string) =>
      t.ctx.db
        .updateTable('idempotency_keys')
        .set({ status_code: null, content_type: null, response_body: null, created_at: new Date(Date.now() - 120_000).toISOString() })
        .where('account_id', '=', accountId)
        .where('key', '=', key)
        .execute();
    const rowOf = (accountId: string, key: string) =>
      t.ctx.db.selectFrom('idempotency_keys').selectAll().where('account_id', '=', accountId).where('key', '=', key).executeTakeFirstOrThrow();

    it('the work marks its key in its own transaction; a handler refusal that rolled back frees it', async () => {
      const acct = await t.newAccount();
      const created = await post('k-mark', sampleShipment, acct.apiKey);
      assert.equal(created.statusCode, 201);
      assert.equal((await rowOf(acct.accountId, 'k-mark')).work_committed, 1);
      const label = (key: string) =>
        t.app.inject({ method: 'POST', url: '/v1/labels', headers: { 'x-api-key': acct.apiKey, 'idempotency-key': key }, payload: { shipmentId: created.json().id, format: 'ZPL' } });
      assert.equal((await label('k-label-1')).statusCode, 201);
      assert.equal((await rowOf(acct.accountId, 'k-label-1')).work_committed, 1);
      // The second label is refused inside its transaction (the shipment has an active one): rolled back, so the key is free again.
      const refused = await label('k-label-2');
      assert.equal(refused.statusCode, 409, refused.body);
      assert.equal(await t.ctx.db.selectFrom('idempotency_keys').select('key').where('account_id', '=', acct.accountId).where('key', '=', 'k-label-2').executeTakeFirst(), undefined);
    });

    it('a key whose first request is still at work is 409 with Retry-After, saying when a failed one is taken up again', async () => {
      const acct = await t.newAccount();
      assert.equal((await post('k-busy', sampleShipment, acct.apiKey)).statusCode, 201);
      // As if the first were still running, 20 s in.
      await t.ctx.db.updateTable('idempotency_keys').set({ status_code: null, content_type: null, response_body: null, work_committed: 0, created_at: new Date(Date.now() - 20_000).toISOString() }).where('account_id', '=', acct.accountId).where('key', '=', 'k-busy').execute();
      const busy = await post('k-busy', sampleShipment, acct.apiKey);
      assert.equal(busy.statusCode, 409, busy.body);
      assert.equal(busy.headers['retry-after'], '1');
      assert.match(busy.json().message, /k-busy is still being processed; retry shortly \(if the service failed while carrying it out, the key is taken up again in (39|40) s\)$/);
    });

    it('a key whose work committed but whose answer was lost is refused for good, never worked again', async () => {
      const acct = await t.newAccount();
      assert.equal((await post('k-lost', sampleShipment, acct.apiKey)).statusCode, 201);
      await orphan(acct.accountId, 'k-lost');
      for (let i = 0; i < 2; i++) {
        const retry = await post('k-lost', sampleShipment, acct.apiKey);
        assert.equal(retry.statusCode, 409, retry.body);
        assert.equal(retry.json().code, 'CONFLICT');
        assert.match(retry.json().message, /k-lost was carried out.*not carried out again/);
      }
      assert.equal(await shipmentsOf(acct.accountId), 1, 'the retry created no second shipment');
      // A different body with the key is still 422, as for any key in use.
      assert.equal((await post('k-lost', { ...sampleShipment, reference: 'other' }, acct.apiKey)).statusCode, 422);
    });

    it('a key whose request committed nothing and never answered is worked again once abandoned', async () => {
      const acct = await t.newAccount();
      const validate = () =>
        t.app.inject({
          method: 'POST',
          url: '/v1/addresses/validate',
          headers: { 'x-api-key': acct.apiKey, 'idempotency-key': 'k-nothing' },
          payload: { addresses: [sampleShipment.to] },
        });
      const first = await validate();
      assert.equal(first.statusCode, 200, first.body);
      assert.equal((await rowOf(acct.accountId, 'k-nothing')).work_committed, 0);
      await orphan(acct.accountId, 'k-nothing');
      const again = await validate();
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.headers['idempotent-replayed'], undefined, 'done again, not replayed');
      assert.deepEqual(again.json(), first.json());
    });

    it('a transaction whose key mark changes no row (its claim taken over) rolls back with the refusal', async () => {
      const mark = t.ctx.db.updateTable('idempotency_keys').set({ work_committed: 1 }).where('key', '=', 'no-such-key').compile();
      const work = () => t.ctx.db.transaction().execute((tx) => nextCounter(tx, 'refused-commit'));
      await assert.rejects(withCommitStatement({ query: mark, refusal: new Error('taken over') }, work), /taken over/);
      assert.equal(await t.ctx.db.selectFrom('counters').selectAll().where('name', '=', 'refused-commit').executeTakeFirst(), undefined);
    });

    if (database.name === 'postgres') {
      it('a request so slow that a retry took its key over commits nothing: one shipment, the retry\'s', async () => {
        const acct = await t.newAccount();
        let release!: () => void;
        let locked!: () => void;
        const releasing = new Promise<void>((resolve) => (release = resolve));
        const holding = new Promise<void>((resolve) => (locked = resolve));
        // Another session holds the shipments table, so the first request waits inside its transaction.
        const holder = t.ctx.db.connection().execute(async (conn) => {
          await sql`begin`.execute(conn);
          await sql`lock table shipments in exclusive mode`.execute(conn);
          locked();
          await releasing;
          await sql`commit`.execute(conn);
        });
        await holding;
        const body = { ...sampleShipment, reference: 'SLOW-1' };
        const first = post('k-slow', body, acct.apiKey);
        /** Waits until `met` holds, failing the test after 10 s rather than hanging. */
        const until = async (what: string, met: () => Promise<boolean>) => {
          const deadline = Date.now() + 10_000;
          while (!(await met())) {
            assert.ok(Date.now() < deadline, `waited 10 s for ${what}`);
            await new Promise((r) => setTimeout(r, 10));
          }
        };
        const row = () => t.ctx.db.selectFrom('idempotency_keys').select('created_at').where('account_id', '=', acct.accountId).where('key', '=', 'k-slow').executeTakeFirst();
        await until('the first request to claim its key', async () => (await row()) !== undefined);
        // Past ABANDONED_MS with nothing committed: a retry takes the key over and waits for the table too.
        await t.ctx.db.updateTable('idempotency_keys').set({ created_at: new Date(Date.now() - 120_000).toISOString() }).where('account_id', '=', acct.accountId).where('key', '=', 'k-slow').execute();
        const retry = post('k-slow', body, acct.apiKey);
        await until('the retry to take the key over', async () => ((await row())?.created_at ?? '') > new Date(Date.now() - 60_000).toISOString());
        release();
        await holder;
        const [a, b] = await Promise.all([first, retry]);
        assert.equal(a.statusCode, 409, a.body);
        assert.match(a.json().message, /took it over; nothing it did was kept/);
        assert.equal(b.statusCode, 201, b.body);
        assert.equal(await shipmentsOf(acct.accountId), 1);
        assert.equal((await post('k-slow', body, acct.apiKey)).json().id, b.json().id, 'the key replays the retry\'s answer');
      });
    }

    it('two Idempotency-Key headers are 400, not one key joined from both', async () => {
      const acct = await t.newAccount();
      const res = await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': acct.apiKey, 'idempotency-key': ['k1', 'k2'] }, payload: sampleShipment });
      assert.equal(res.statusCode, 400);
      assert.match(res.json().message, /one Idempotency-Key/);
      assert.equal(await shipmentsOf(acct.accountId), 0);
    });

    it('a webhook and a print file, each one statement, mark their key too', async () => {
      const acct = await t.newAccount();
      const hook = await t.app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: { 'x-api-key': acct.apiKey, 'idempotency-key': 'k-hook' },
        payload: { url: 'https://hooks.example.com/shipping', events: ['shipment.created'] },
      });
      assert.equal(hook.statusCode, 201, hook.body);
      assert.equal((await rowOf(acct.accountId, 'k-hook')).work_committed, 1);
      const shipment = await post('k-ship', sampleShipment, acct.apiKey);
      const label = await t.app.inject({ method: 'POST', url: '/v1/labels', headers: { 'x-api-key': acct.apiKey }, payload: { shipmentId: shipment.json().id } });
      const file = await t.app.inject({
        method: 'POST',
        url: '/v1/print-files',
        headers: { 'x-api-key': acct.apiKey, 'idempotency-key': 'k-file' },
        payload: { labelIds: [label.json().id] },
      });
      assert.equal(file.statusCode, 201, file.body);
      assert.equal((await rowOf(acct.accountId, 'k-file')).work_committed, 1);
    });

    it('an unauthenticated request with a key stores nothing', async () => {
      const before = await countRows(t.ctx, 'idempotency_keys');
      const res = await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'idempotency-key': 'anon' }, payload: sampleShipment });
      assert.equal(res.statusCode, 401);
      assert.equal(await countRows(t.ctx, 'idempotency_keys'), before);
    });
  });
});

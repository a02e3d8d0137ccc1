// Delivery to a real receiver on 127.0.0.1 (development allows private targets): Standard Webhooks
// signatures checked by the official `standardwebhooks` package, retries, 410, Retry-After, redirects,
// timeouts, the final failure, auto-disable and redelivery. Retries run on a tiny schedule.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import { createShipment, forEachDatabase, startTestApp, type TestAccount, type TestApp } from '../helpers.ts';
import { startWorker, type Worker } from '../../src/worker.ts';
import { webhookJobs } from '../../src/webhooks/jobs.ts';
import { eventually, startReceiver, type Answer, type Receiver } from './receiver.ts';
import { Conformance } from '../core/support.ts';
import { createLabel, postEvents } from '../tracking/fixtures.ts';
import { EVENT_TYPES } from '../../src/db/events.ts';

const WHSEC = `whsec_${Buffer.from('a 32-byte key for signing hooks!').toString('base64')}`;
const PLAIN = 'pässwörd with spaces & ünïcode 🔑';

forEachDatabase((database) => {
  let t: TestApp;
  let worker: Worker;
  const receivers: Receiver[] = [];
  before(async () => {
    t = await startTestApp(database, { WEBHOOK_RETRY_SCHEDULE: '0,0', WEBHOOK_TIMEOUT_MS: '1000' });
    worker = startWorker(t.ctx, webhookJobs());
  });
  after(async () => {
    await worker.stop();
    for (const r of receivers) await r.close();
    await t.close();
  });

  /** A fresh account with one webhook pointing at a fresh receiver. */
  async function subscriber(answer?: (n: number) => Answer, hook: Record<string, unknown> = {}): Promise<{ acct: TestAccount; rx: Receiver; hookId: string }> {
    const rx = await startReceiver(answer);
    receivers.push(rx);
    const acct = await t.newAccount();
    const res = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': acct.apiKey }, payload: { url: `${rx.url}/hooks/shipping`, events: ['shipment.created'], ...hook } });
    assert.equal(res.statusCode, 201, res.body);
    return { acct, rx, hookId: res.json().id };
  }

  const get = async (acct: TestAccount, url: string) => (await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': acct.apiKey } })).json();
  const deliveries = (acct: TestAccount, hookId: string) => get(acct, `/v1/webhooks/${hookId}/deliveries`);
  const settled = (acct: TestAccount, hookId: string, status: string, attempts: number) =>
    eventually(async () => {
      const [d] = await deliveries(acct, hookId);
      return d && d.status === status && d.attempts.length === attempts ? d : null;
    }, 30_000, `a ${status} delivery with ${attempts} attempts`);

  describe('Standard Webhooks request', () => {
    it('POSTs {id, type, timestamp, data} with webhook-id, webhook-timestamp and a whsec_ signature the official package verifies', async () => {
      const { acct, rx, hookId } = await subscriber(undefined, { secret: WHSEC });
      const shipment = await createShipment(t, {}, acct.apiKey);
      const [req] = await rx.waitFor(1);
      assert.equal(req!.path, '/hooks/shipping');
      assert.match(String(req!.headers['content-type']), /^application\/json/);
      const payload = new Webhook(WHSEC).verify(req!.body, req!.headers as Record<string, string>) as Record<string, any>;
      const event = await t.ctx.db.selectFrom('domain_events').selectAll().where('shipment_id', '=', shipment.id).executeTakeFirstOrThrow();
      assert.deepEqual(payload, { id: event.id, type: 'shipment.created', timestamp: event.created_at, data: shipment });
      assert.equal(req!.headers['webhook-id'], event.id);
      assert.match(String(req!.headers['webhook-timestamp']), /^\d{10}$/);
      assert.ok(Math.abs(Number(req!.headers['webhook-timestamp']) - req!.at / 1000) < 60);
      assert.match(String(req!.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/);
      const d = await settled(acct, hookId, 'succeeded', 1);
      assert.equal(d.eventId, event.id);
      assert.equal(d.nextAttemptAt, null);
      assert.equal(d.attempts[0].responseStatus, 204);
      assert.equal(d.attempts[0].error, null);
      assert.equal(typeof d.attempts[0].durationMs, 'number');
      // A different key does not verify.
      assert.throws(() => new Webhook(`whsec_${Buffer.from('another key of thirty-two bytes!').toString('base64')}`).verify(req!.body, req!.headers as Record<string, string>));
    });

    it('every shipment event\'s request is what the OpenAPI document\'s `webhooks` describe, headers included', async () => {
      const { acct, rx } = await subscriber(undefined, { secret: WHSEC, events: ['shipment.created', 'shipment.in_transit', 'shipment.delivered', 'shipment.exception'] });
      const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
      const conformance = new Conformance(doc);
      const label = await createLabel(t, {}, acct.apiKey);
      const events = [
        { trackingNumber: label.trackingNumber, status: 'in_transit', timestamp: '2026-03-02T08:00:00Z', location: 'Memphis, TN' },
        { trackingNumber: label.trackingNumber, status: 'exception', timestamp: '2026-03-03T08:00:00Z', location: 'New York, NY' },
        { trackingNumber: label.trackingNumber, status: 'delivered', timestamp: '2026-03-04T08:00:00Z', location: 'New York, NY' },
      ];
      for (const e of events) assert.equal((await postEvents(t, [e], acct.apiKey)).statusCode, 202);
      const received = await rx.waitFor(4);
      const types = new Set<string>();
      for (const req of received) {
        const body = new Webhook(WHSEC).verify(req.body, req.headers as Record<string, string>) as { type: string };
        conformance.checkWebhook(body.type, body);
        for (const p of doc.webhooks[body.type].post.parameters) if (p.required) assert.ok(req.headers[p.name], `${body.type}: ${p.name}`);
        types.add(body.type);
      }
      assert.deepEqual([...types].sort(), ['shipment.created', 'shipment.delivered', 'shipment.exception', 'shipment.in_transit']);
      // Every event kind a webhook may list is described.
      assert.deepEqual(Object.keys(doc.webhooks).sort(), [...EVENT_TYPES].sort());
    });

    it('signs with the UTF-8 bytes of a plain secret', async () => {
      const { acct, rx } = await subscriber(undefined, { secret: PLAIN });
      await createShipment(t, {}, acct.apiKey);
      const [req] = await rx.waitFor(1);
      const payload = new Webhook(Buffer.from(PLAIN, 'utf8'), { format: 'raw' }).verify(req!.body, req!.headers as Record<string, string>) as { type: string };
      assert.equal(payload.type, 'shipment.created');
    });

    it('sends no signature without a secret, and follows secret changes made with PATCH', async () => {
      const { acct, rx, hookId } = await subscriber();
      const patch = (payload: object) => t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${hookId}`, headers: { 'x-api-key': acct.apiKey }, payload });
      await createShipment(t, {}, acct.apiKey);
      const [unsigned] = await rx.waitFor(1);
      assert.equal(unsigned!.headers['webhook-signature'], undefined);
      assert.ok(unsigned!.headers['webhook-id']);
      assert.ok(unsigned!.headers['webhook-timestamp']);
      assert.equal((await patch({ secret: WHSEC })).statusCode, 200);
      await createShipment(t, {}, acct.apiKey);
      const signed = (await rx.waitFor(2))[1]!;
      assert.ok(new Webhook(WHSEC).verify(signed.body, signed.headers as Record<string, string>));
      assert.equal((await patch({ secret: null })).statusCode, 200);
      await createShipment(t, {}, acct.apiKey);
      assert.equal((await rx.waitFor(3))[2]!.headers['webhook-signature'], undefined);
    });
  });

  describe('retries', () => {
    it('retries a failure with the same webhook-id and body until it succeeds', async () => {
      const { acct, rx, hookId } = await subscriber((n) => (n < 2 ? { status: 500 } : { status: 200 }), { secret: WHSEC });
      await createShipment(t, {}, acct.apiKey);
      const got = await rx.waitFor(3);
      assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 1);
      assert.equal(new Set(got.map((r) => r.body)).size, 1);
      for (const r of got) assert.ok(new Webhook(WHSEC).verify(r.body, r.headers as Record<string, string>));
      const d = await settled(acct, hookId, 'succeeded', 3);
      assert.deepEqual(d.attempts.map((a: any) => [a.responseStatus, a.error]), [[500, 'HTTP 500'], [500, 'HTTP 500'], [200, null]]);
      assert.equal(d.eventId, got[0]!.headers['webhook-id']);
    });

    it('marks the delivery failed after the last retry of the schedule and logs it', async () => {
      const { acct, rx, hookId } = await subscriber(() => ({ status: 500 }));
      await createShipment(t, {}, acct.apiKey);
      const d = await settled(acct, hookId, 'failed', 3);
      assert.equal(d.nextAttemptAt, null);
      assert.equal(rx.received.length, 3);
      const line = t.logs.find((l) => l.includes(d.id) && l.includes('failed after the last retry'));
      assert.ok(line, 'no log line for the final failure');
      assert.equal(JSON.parse(line).level, 40);
      assert.equal((await get(acct, `/v1/webhooks/${hookId}`)).active, true);
    });

    it('disables the webhook when the receiver answers 410, without retrying', async () => {
      const { acct, rx, hookId } = await subscriber(() => ({ status: 410 }));
      await createShipment(t, {}, acct.apiKey);
      const d = await settled(acct, hookId, 'failed', 1);
      assert.equal(d.attempts[0].responseStatus, 410);
      assert.equal((await get(acct, `/v1/webhooks/${hookId}`)).active, false);
      await createShipment(t, {}, acct.apiKey);
      // Once the fan-out has taken the new event, no delivery for the disabled webhook can appear any more.
      await eventually(async () => {
        const waiting = await t.ctx.db.selectFrom('domain_events').select('id').where('account_id', '=', acct.accountId).where('dispatched_at', 'is', null).execute();
        return waiting.length === 0;
      });
      assert.equal(rx.received.length, 1);
      assert.equal((await deliveries(acct, hookId)).length, 1);
    });

    it('waits at least as long as Retry-After on 429 and 503', async () => {
      const { acct, rx, hookId } = await subscriber((n) => (n === 0 ? { status: 429, headers: { 'retry-after': '1' } } : n === 1 ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 }));
      await createShipment(t, {}, acct.apiKey);
      const got = await rx.waitFor(3);
      assert.ok(got[1]!.at - got[0]!.at >= 950, `second attempt came ${got[1]!.at - got[0]!.at} ms after the first`);
      assert.ok(got[2]!.at - got[1]!.at >= 950, `third attempt came ${got[2]!.at - got[1]!.at} ms after the second`);
      const d = await settled(acct, hookId, 'succeeded', 3);
      assert.deepEqual(d.attempts.map((a: any) => a.responseStatus), [429, 503, 200]);
      assert.match(d.attempts[0].error, /Retry-After 1 s/);
    });

    it('does not follow redirects: a 3xx is a failed attempt and the Location is never contacted', async () => {
      const elsewhere = await startReceiver();
      receivers.push(elsewhere);
      const { acct, hookId } = await subscriber(() => ({ status: 307, headers: { location: `${elsewhere.url}/stolen` } }));
      await createShipment(t, {}, acct.apiKey);
      const d = await settled(acct, hookId, 'failed', 3);
      assert.equal(d.attempts[0].responseStatus, 307);
      assert.match(d.attempts[0].error, /redirects are not followed/);
      assert.equal(elsewhere.received.length, 0);
    });

    it('gives up on a receiver that does not answer within the timeout', async () => {
      const { acct, hookId } = await subscriber((n) => (n === 0 ? 'hang' : { status: 200 }));
      await createShipment(t, {}, acct.apiKey);
      const d = await settled(acct, hookId, 'succeeded', 2);
      assert.equal(d.attempts[0].responseStatus, null);
      assert.equal(d.attempts[0].error, 'timed out after 1000 ms');
    });

    it('records a refused connection as a failed attempt', async () => {
      const rx = await startReceiver();
      const url = rx.url;
      await rx.close();
      const acct = await t.newAccount();
      const res = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': acct.apiKey }, payload: { url, events: ['shipment.created'] } });
      await createShipment(t, {}, acct.apiKey);
      const d = await settled(acct, res.json().id, 'failed', 3);
      assert.deepEqual(d.attempts.map((a: any) => [a.responseStatus, a.error]), Array(3).fill([null, 'connection refused']));
    });
  });

  describe('stopping', () => {
    it('a stop lets the attempts in flight finish and be recorded, and starts no new one as slots free up', async () => {
      const own = await startTestApp(database, { WEBHOOK_RETRY_SCHEDULE: '60', WEBHOOK_TIMEOUT_MS: '800' });
      const rx = await startReceiver(() => 'hang');
      const ownWorker = startWorker(own.ctx, webhookJobs({ concurrency: 2 }));
      try {
        const res = await own.request({ method: 'POST', url: '/v1/webhooks', payload: { url: `${rx.url}/hooks`, events: ['shipment.created'] } });
        assert.equal(res.statusCode, 201, res.body);
        for (let i = 0; i < 4; i++) await createShipment(own);
        await rx.waitFor(2);
        await ownWorker.stop();
        const rows = await own.ctx.db.selectFrom('webhook_deliveries').select(['attempt_count']).execute();
        assert.equal(rx.received.length, 2, 'no attempt started after the stop');
        assert.deepEqual(rows.map((r) => Number(r.attempt_count)).sort(), [0, 0, 1, 1], 'the two in flight recorded, the other two still waiting');
      } finally {
        await ownWorker.stop();
        await rx.close();
        await own.close();
      }
    });
  });

  describe('auto-disable', () => {
    it('disables a webhook that has failed without a success for 5 days, pausing its deliveries; reactivating resumes them', async () => {
      let healthy = false;
      const { acct, rx, hookId } = await subscriber(() => (healthy ? { status: 200 } : { status: 500 }));
      const sixDaysAgo = new Date(Date.now() - 6 * 24 * 3600 * 1000).toISOString();
      await t.ctx.db.updateTable('webhooks').set({ failing_since: sixDaysAgo }).where('id', '=', hookId).execute();
      await createShipment(t, {}, acct.apiKey);
      await eventually(async () => (await get(acct, `/v1/webhooks/${hookId}`)).active === false, 30_000, 'the webhook to be disabled');
      const [paused] = await deliveries(acct, hookId);
      assert.equal(paused.status, 'pending');
      assert.equal(paused.nextAttemptAt, null);
      assert.equal(paused.attempts.length, 1);
      assert.ok(t.logs.some((l) => l.includes(hookId) && l.includes('failing without a success for 5 days')));
      healthy = true;
      const res = await t.app.inject({ method: 'PATCH', url: `/v1/webhooks/${hookId}`, headers: { 'x-api-key': acct.apiKey }, payload: { active: true } });
      assert.equal(res.json().active, true);
      await settled(acct, hookId, 'succeeded', 2);
      assert.equal(rx.received.length, 2);
      const row = await t.ctx.db.selectFrom('webhooks').select('failing_since').where('id', '=', hookId).executeTakeFirstOrThrow();
      assert.equal(row.failing_since, null);
    });

    it('remembers when failures began and forgets them after a success', async () => {
      const { acct, hookId } = await subscriber((n) => (n < 1 ? { status: 500 } : { status: 200 }));
      await createShipment(t, {}, acct.apiKey);
      await settled(acct, hookId, 'succeeded', 2);
      const row = await t.ctx.db.selectFrom('webhooks').select(['failing_since', 'active']).where('id', '=', hookId).executeTakeFirstOrThrow();
      assert.deepEqual({ ...row }, { failing_since: null, active: 1 });
    });
  });

  describe('redelivery', () => {
    it('sends a delivered event again with the same webhook-id and records the new attempt', async () => {
      const { acct, rx, hookId } = await subscriber(undefined, { secret: WHSEC });
      await createShipment(t, {}, acct.apiKey);
      const first = await settled(acct, hookId, 'succeeded', 1);
      const res = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${hookId}/deliveries/${first.id}/redeliver`, headers: { 'x-api-key': acct.apiKey } });
      assert.equal(res.statusCode, 202);
      const got = await rx.waitFor(2);
      assert.equal(got[1]!.headers['webhook-id'], got[0]!.headers['webhook-id']);
      assert.equal(got[1]!.body, got[0]!.body);
      assert.ok(new Webhook(WHSEC).verify(got[1]!.body, got[1]!.headers as Record<string, string>));
      const again = await settled(acct, hookId, 'succeeded', 2);
      assert.equal(again.id, first.id);
    });

    it('gives a failed delivery a fresh run of the retry schedule', async () => {
      let healthy = false;
      const { acct, rx, hookId } = await subscriber(() => (healthy ? { status: 200 } : { status: 500 }));
      await createShipment(t, {}, acct.apiKey);
      const failed = await settled(acct, hookId, 'failed', 3);
      healthy = true;
      const res = await t.app.inject({ method: 'POST', url: `/v1/webhooks/${hookId}/deliveries/${failed.id}/redeliver`, headers: { 'x-api-key': acct.apiKey } });
      assert.equal(res.statusCode, 202);
      const d = await settled(acct, hookId, 'succeeded', 4);
      assert.deepEqual(d.attempts.map((a: any) => a.responseStatus), [500, 500, 500, 200]);
      assert.equal(rx.received.length, 4);
    });
  });

  describe('many subscribers', () => {
    it('delivers every event to each of 20 subscribers exactly once', async () => {
      const rx = await startReceiver();
      receivers.push(rx);
      const acct = await t.newAccount();
      for (let i = 0; i < 20; i++) {
        const res = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': acct.apiKey }, payload: { url: `${rx.url}/s${i}`, events: ['shipment.created'] } });
        assert.equal(res.statusCode, 201);
      }
      for (let i = 0; i < 5; i++) await createShipment(t, {}, acct.apiKey);
      await rx.waitFor(100);
      const hooks = (await get(acct, '/v1/webhooks?limit=100')) as { id: string }[];
      const all = await eventually(async () => {
        const lists = (await Promise.all(hooks.map((h) => get(acct, `/v1/webhooks/${h.id}/deliveries`)))).flat();
        return lists.length === 100 && lists.every((d: any) => d.status === 'succeeded') ? lists : null;
      }, 30_000, '100 succeeded deliveries');
      assert.equal(new Set(rx.received.map((r) => `${r.path} ${r.headers['webhook-id']}`)).size, 100);
      // Exactly once, unless an attempt failed on this busy machine and was retried (at least once).
      const failed = all.flatMap((d: any) => d.attempts.filter((a: any) => a.error !== null));
      assert.ok(rx.received.length <= 100 + failed.length, `${rx.received.length} requests for 100 deliveries: ${JSON.stringify(failed)}`);
    });
  });
});

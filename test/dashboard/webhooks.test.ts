// The dashboard's webhook pages (§15, issue 19): the list and the add form, a webhook's page with the
// change form and the delivery log, redelivery; the API's messages beside refused fields, another
// account's webhook a 404, and no change without the form's CSRF token.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { createShipment, forEachDatabase, startTestApp, type TestAccount, type TestApp } from '../helpers.ts';
import { startWorker, type Worker } from '../../src/worker.ts';
import { webhookJobs } from '../../src/webhooks/jobs.ts';
import { EVENT_TYPES } from '../../src/db/events.ts';
import { eventually, startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { signedIn, type Visitor, noticeOf } from './support.ts';

/** The message shown beside a field (`<p class="error" id="f-url-error">`), or undefined. */
function messageBeside(body: string, name: string): string | undefined {
  return new RegExp(`<p class="error" id="f-${name}-error">([^<]*)</p>`).exec(body)?.[1];
}

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

  /** A new account and a user of it, signed in. */
  async function user(): Promise<{ acct: TestAccount; v: Visitor }> {
    const acct = await t.newAccount();
    return { acct, v: await signedIn(t, acct.accountId) };
  }
  const api = async (acct: TestAccount, url: string) => {
    const res = await t.app.inject({ method: 'GET', url, headers: { 'x-api-key': acct.apiKey } });
    assert.equal(res.statusCode, 200, res.body);
    return res.json();
  };
  const createdId = (res: LightMyRequestResponse): string => {
    assert.equal(res.statusCode, 303, res.body.slice(0, 1000));
    const m = /^\/dashboard\/webhooks\/([0-9a-f-]{36})$/.exec(String(res.headers.location));
    assert.ok(m, `redirected to ${res.headers.location}`);
    return m[1]!;
  };
  /** A form post with the visitor's cookies but without any CSRF token. */
  const postWithoutToken = (v: Visitor, url: string, fields: Record<string, string>) =>
    t.app.inject({ method: 'POST', url, headers: { cookie: [...v.cookies].map(([k, val]) => `${k}=${val}`).join('; '), 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString() });

  describe('GET /dashboard/webhooks', () => {
    it('shows the account\'s webhooks in a table and a form to add one, every field labelled', async () => {
      const { acct, v } = await user();
      const hook = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': acct.apiKey }, payload: { url: 'https://hooks.example.com/from-the-api', events: ['shipment.delivered'] } });
      assert.equal(hook.statusCode, 201);
      const res = await v.get('/dashboard/webhooks');
      assert.equal(res.statusCode, 200);
      assert.equal(res.body.match(/<h1[ >]/g)?.length, 1);
      assert.match(res.body, /<h2 id="webhooks-add">Add a webhook<\/h2>/);
      assert.match(res.body, /<caption>Webhooks, newest first<\/caption>/);
      assert.match(res.body, /<th scope="col">URL<\/th>/);
      assert.ok(res.body.includes(`<a href="/dashboard/webhooks/${hook.json().id}">https://hooks.example.com/from-the-api</a>`));
      assert.match(res.body, /<label for="f-url">URL<\/label><input type="url" id="f-url" name="url" required/);
      assert.match(res.body, /<fieldset id="f-events"[^>]*>\s*<legend>Events<\/legend>/);
      for (const e of EVENT_TYPES) assert.ok(res.body.includes(`<input type="checkbox" id="f-events-${e.replace('.', '-')}" name="events" value="${e}">`), e);
      assert.match(res.body, /<label for="f-active"><input type="checkbox" id="f-active" name="active" value="true" checked>/);
      assert.match(res.body, /<label for="f-secret">Signing secret <span class="optional">\(optional\)<\/span><\/label><input type="password" id="f-secret" name="secret"/);
      assert.match(res.body, /name="_csrf"/);
    });

  });

  describe('POST /dashboard/webhooks', () => {
    it('creates the webhook: 303 to its page, then in the list and in GET /v1/webhooks', async () => {
      const { acct, v } = await user();
      const res = await v.post('/dashboard/webhooks', { url: 'https://hooks.example.com/dashboard', events: ['shipment.created', 'shipment.delivered'], active: 'true', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }, '/dashboard/webhooks');
      const id = createdId(res);
      const page = await v.get(String(res.headers.location));
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<p class="notice" role="status"[^>]*>Webhook added\.<\/p>/);
      assert.match(page.body, /<h1>Webhook https:\/\/hooks\.example\.com\/dashboard<\/h1>/);
      assert.ok(!page.body.includes('MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'), 'the secret is never shown');
      const list = await v.get('/dashboard/webhooks');
      assert.ok(list.body.includes(`<a href="/dashboard/webhooks/${id}">https://hooks.example.com/dashboard</a>`));
      const hooks = await api(acct, '/v1/webhooks');
      assert.equal(hooks.length, 1);
      assert.deepEqual({ id: hooks[0].id, url: hooks[0].url, events: hooks[0].events, active: hooks[0].active }, { id, url: 'https://hooks.example.com/dashboard', events: ['shipment.created', 'shipment.delivered'], active: true });
    });

    it('creates an inactive webhook when Active is not ticked', async () => {
      const { acct, v } = await user();
      createdId(await v.post('/dashboard/webhooks', { url: 'http://10.0.0.5:8080/hook', events: 'batch.completed' }, '/dashboard/webhooks'));
      const [hook] = await api(acct, '/v1/webhooks');
      assert.equal(hook.active, false);
      assert.deepEqual(hook.events, ['batch.completed']);
    });

    it('refuses a non-URL and no events: 400, the messages beside both fields, the values kept, nothing created', async () => {
      const { acct, v } = await user();
      const res = await v.post('/dashboard/webhooks', { url: 'not a url', active: 'true', secret: 'a secret never echoed' }, '/dashboard/webhooks');
      assert.equal(res.statusCode, 400);
      assert.equal(messageBeside(res.body, 'url'), 'must be an absolute URL, like https://example.com/hooks');
      assert.equal(messageBeside(res.body, 'events'), 'is required');
      assert.match(res.body, /<div class="field invalid"><label for="f-url">URL<\/label><input type="url" id="f-url" name="url" required aria-describedby="f-url-hint f-url-error" aria-invalid="true" value="not a url">/);
      assert.match(res.body, /<fieldset id="f-events" class="checks invalid" aria-describedby="f-events-error">/);
      assert.match(res.body, /<div class="error-summary" role="alert"[^>]*>.*<a href="#f-url">URL: /s);
      assert.ok(!res.body.includes('a secret never echoed'));
      assert.deepEqual(await api(acct, '/v1/webhooks'), []);
    });

    const refused: [string, Record<string, string | string[]>, string, string][] = [
      ['an unknown event type', { url: 'https://hooks.example.com/', events: ['shipment.created', 'shipment.lost'] }, 'events', `must be one of ${EVENT_TYPES.join(', ')}`],
      ['the same event twice', { url: 'https://hooks.example.com/', events: ['shipment.created', 'shipment.created'] }, 'events', 'must not repeat an item (items 0 and 1 are the same)'],
      ['an ftp URL (the service\'s rule)', { url: 'ftp://hooks.example.com/x', events: 'shipment.created' }, 'url', 'must use http or https'],
      ['credentials in the URL (the service\'s rule)', { url: 'https://user:pw@hooks.example.com/', events: 'shipment.created' }, 'url', 'must not contain user:password'],
      ['a whsec_ secret that is not base64 (the service\'s rule)', { url: 'https://hooks.example.com/', events: 'shipment.created', secret: 'whsec_!!!' }, 'secret', 'a secret starting with whsec_ must continue with non-empty standard base64'],
      ['a URL longer than 2048 characters', { url: `https://hooks.example.com/${'a'.repeat(2048)}`, events: 'shipment.created' }, 'url', 'must have at most 2048 characters'],
    ];
    for (const [what, fields, name, message] of refused) {
      it(`refuses ${what} with the API's message beside ${name}`, async () => {
        const { acct, v } = await user();
        const res = await v.post('/dashboard/webhooks', fields, '/dashboard/webhooks');
        assert.equal(res.statusCode, 400, res.body.slice(0, 500));
        assert.equal(messageBeside(res.body, name)?.replace(/&#(\d+);/g, (_m, c) => String.fromCharCode(Number(c))), message);
        assert.deepEqual(await api(acct, '/v1/webhooks'), []);
        // The API says the same about the same body.
        const body = { url: fields.url, events: [fields.events].flat(), ...(fields.secret ? { secret: fields.secret } : {}) };
        const viaApi = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': acct.apiKey }, payload: body });
        assert.equal(viaApi.statusCode, 400);
        assert.deepEqual(viaApi.json().details.map((p: { field: string; message: string }) => p.message), [message]);
      });
    }

    it('the same form sent again (two at once, or again later) adds no second webhook and leads to the one it made', async () => {
      const { acct, v } = await user();
      const keyOf = (body: string) => /<input type="hidden" name="formKey" value="([0-9a-f-]{36})">/.exec(body)?.[1];
      const formKey = keyOf((await v.get('/dashboard/webhooks')).body);
      assert.ok(formKey, 'the add form carries a key of its own');
      assert.notEqual(keyOf((await v.get('/dashboard/webhooks')).body), formKey, 'a new one each time it is shown');
      const fields = { url: 'https://hooks.example.com/twice', events: 'shipment.created', active: 'true', formKey };
      // Refused first: the form comes back with the same key, and nothing is kept for it.
      const refused = await v.post('/dashboard/webhooks', { ...fields, url: 'ftp://hooks.example.com/twice' }, '/dashboard/webhooks');
      assert.equal(refused.statusCode, 400);
      assert.equal(keyOf(refused.body), formKey);
      // A double click: both answers lead to the one webhook made.
      const both = await Promise.all([0, 1].map(() => v.post('/dashboard/webhooks', fields, '/dashboard/webhooks')));
      const id = createdId(both[0]!);
      assert.equal(createdId(both[1]!), id);
      assert.deepEqual(both.map((r) => noticeOf(r)).sort(), ['This form was already sent: this is the webhook it made. Nothing new was created.', 'Webhook added.']);
      // Back and submit, later: the same.
      const later = await v.post('/dashboard/webhooks', fields, '/dashboard/webhooks');
      assert.equal(createdId(later), id);
      assert.equal(noticeOf(later), 'This form was already sent: this is the webhook it made. Nothing new was created.');
      assert.deepEqual((await api(acct, '/v1/webhooks')).map((h: { id: string }) => h.id), [id]);
      // The page shown again has a new key: the same fields sent with it add a second webhook, as asked.
      const next = keyOf((await v.get('/dashboard/webhooks')).body);
      assert.notEqual(createdId(await v.post('/dashboard/webhooks', { ...fields, formKey: next! }, '/dashboard/webhooks')), id);
      assert.equal((await api(acct, '/v1/webhooks')).length, 2);
    });

    it('shows the service\'s rules with the schema\'s problems, all at once', async () => {
      const { acct, v } = await user();
      const res = await v.post('/dashboard/webhooks', { url: 'ftp://x', active: 'true', secret: 'whsec_!!!' }, '/dashboard/webhooks');
      assert.equal(res.statusCode, 400);
      assert.equal(messageBeside(res.body, 'url'), 'must use http or https');
      assert.equal(messageBeside(res.body, 'events'), 'is required');
      assert.equal(messageBeside(res.body, 'secret'), 'a secret starting with whsec_ must continue with non-empty standard base64');
      const summary = [...res.body.matchAll(/<li><a href="#f-[^"]+">([^<]*)<\/a><\/li>/g)].map((m) => m[1]);
      assert.deepEqual(summary, ['URL: must use http or https', 'Events: is required', 'Signing secret: a secret starting with whsec_ must continue with non-empty standard base64']);
      assert.deepEqual(await api(acct, '/v1/webhooks'), []);
    });

    it('without the form\'s CSRF token is 403 and creates nothing', async () => {
      const { acct, v } = await user();
      await v.get('/dashboard/webhooks');
      const res = await postWithoutToken(v, '/dashboard/webhooks', { url: 'https://hooks.example.com/', events: 'shipment.created', active: 'true' });
      assert.equal(res.statusCode, 403);
      assert.match(res.body, /security token/);
      const forged = await v.post('/dashboard/webhooks', { _csrf: 'forged-token', url: 'https://hooks.example.com/', events: 'shipment.created' });
      assert.equal(forged.statusCode, 403);
      assert.deepEqual(await api(acct, '/v1/webhooks'), []);
    });
  });

  describe('GET and POST /dashboard/webhooks/{id}', () => {
    it('shows the change form filled in; saving changes the URL, the events and active', async () => {
      const { acct, v } = await user();
      const id = createdId(await v.post('/dashboard/webhooks', { url: 'https://hooks.example.com/old', events: 'shipment.created', active: 'true' }, '/dashboard/webhooks'));
      const page = await v.get(`/dashboard/webhooks/${id}`);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<h2 id="webhook-edit">Change the webhook<\/h2>/);
      assert.match(page.body, /<h2 id="webhook-deliveries">Deliveries<\/h2>/);
      assert.match(page.body, /value="https:\/\/hooks\.example\.com\/old"/);
      assert.ok(page.body.includes('name="events" value="shipment.created" checked>'));
      assert.ok(page.body.includes('name="events" value="shipment.delivered">'));
      assert.match(page.body, /<p class="empty">No deliveries yet/);

      const res = await v.post(`/dashboard/webhooks/${id}`, { url: 'https://hooks.example.com/new', events: ['shipment.delivered', 'shipment.exception'] }, `/dashboard/webhooks/${id}`);
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, `/dashboard/webhooks/${id}`);
      assert.equal(noticeOf(res), 'Webhook saved.');
      const hook = await api(acct, `/v1/webhooks/${id}`);
      assert.deepEqual([hook.url, hook.events, hook.active], ['https://hooks.example.com/new', ['shipment.delivered', 'shipment.exception'], false]);
      const after = await v.get(String(res.headers.location));
      assert.match(after.body, /Webhook saved\./);
      assert.match(after.body, /The webhook is inactive/);
    });

    it('refuses a bad change with the messages beside the fields (400) and changes nothing', async () => {
      const { acct, v } = await user();
      const id = createdId(await v.post('/dashboard/webhooks', { url: 'https://hooks.example.com/keep', events: 'shipment.created', active: 'true' }, '/dashboard/webhooks'));
      const res = await v.post(`/dashboard/webhooks/${id}`, { url: 'javascript:alert(1)', active: 'true' }, `/dashboard/webhooks/${id}`);
      assert.equal(res.statusCode, 400);
      assert.equal(messageBeside(res.body, 'events'), 'is required');
      assert.match(res.body, /value="javascript:alert\(1\)"/);
      const secretBoth = await v.post(`/dashboard/webhooks/${id}`, { url: 'https://hooks.example.com/keep', events: 'shipment.created', active: 'true', secret: 'new secret', removeSecret: 'true' }, `/dashboard/webhooks/${id}`);
      assert.equal(secretBoth.statusCode, 400);
      assert.equal(messageBeside(secretBoth.body, 'secret'), 'give a new secret or remove it, not both');
      const bad = await v.post(`/dashboard/webhooks/${id}`, { url: 'ftp://hooks.example.com/x', events: 'shipment.created', active: 'true' }, `/dashboard/webhooks/${id}`);
      assert.equal(bad.statusCode, 400);
      assert.equal(messageBeside(bad.body, 'url'), 'must use http or https');
      const hook = await api(acct, `/v1/webhooks/${id}`);
      assert.deepEqual([hook.url, hook.events, hook.active], ['https://hooks.example.com/keep', ['shipment.created'], true]);
    });

    it('shows every problem of a change at once, each under its field\'s label', async () => {
      const { acct, v } = await user();
      const id = createdId(await v.post('/dashboard/webhooks', { url: 'https://hooks.example.com/keep', events: 'shipment.created', active: 'true' }, '/dashboard/webhooks'));
      const res = await v.post(`/dashboard/webhooks/${id}`, { url: 'ftp://x', active: 'true', secret: 'new secret', removeSecret: 'true' }, `/dashboard/webhooks/${id}`);
      assert.equal(res.statusCode, 400);
      const summary = [...res.body.matchAll(/<li><a href="#f-[^"]+">([^<]*)<\/a><\/li>/g)].map((m) => m[1]);
      assert.deepEqual(summary, ['URL: must use http or https', 'Events: is required', 'New signing secret: give a new secret or remove it, not both']);
      assert.equal(messageBeside(res.body, 'url'), 'must use http or https');
      assert.equal(messageBeside(res.body, 'events'), 'is required');
      assert.equal(messageBeside(res.body, 'secret'), 'give a new secret or remove it, not both');
      const hook = await api(acct, `/v1/webhooks/${id}`);
      assert.deepEqual([hook.url, hook.events, hook.active], ['https://hooks.example.com/keep', ['shipment.created'], true]);
    });

    it('without the form\'s CSRF token is 403 and changes nothing', async () => {
      const { acct, v } = await user();
      const id = createdId(await v.post('/dashboard/webhooks', { url: 'https://hooks.example.com/keep', events: 'shipment.created', active: 'true' }, '/dashboard/webhooks'));
      const res = await postWithoutToken(v, `/dashboard/webhooks/${id}`, { url: 'https://evil.example.com/', events: 'shipment.created' });
      assert.equal(res.statusCode, 403);
      assert.equal((await api(acct, `/v1/webhooks/${id}`)).url, 'https://hooks.example.com/keep');
    });

    it('answers 404 for another account\'s webhook, and neither changes nor redelivers it', async () => {
      const { v } = await user();
      const other = await t.newAccount();
      const created = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': other.apiKey }, payload: { url: 'https://hooks.example.com/theirs', events: ['shipment.created'] } });
      const id = created.json().id;
      const page = await v.get(`/dashboard/webhooks/${id}`);
      assert.equal(page.statusCode, 404);
      assert.match(page.body, /<h1>Not found<\/h1>/);
      assert.ok(!page.body.includes('hooks.example.com/theirs'));
      assert.equal((await v.get(`/dashboard/webhooks/${randomUUID()}`)).statusCode, 404);
      const edit = await v.post(`/dashboard/webhooks/${id}`, { url: 'https://evil.example.com/', events: 'shipment.created', active: 'true' }, '/dashboard/webhooks');
      assert.equal(edit.statusCode, 404);
      assert.equal((await api(other, `/v1/webhooks/${id}`)).url, 'https://hooks.example.com/theirs');
      const again = await v.post(`/dashboard/webhooks/${id}/deliveries/${randomUUID()}/redeliver`, {}, '/dashboard/webhooks');
      assert.equal(again.statusCode, 404);
    });
  });

  describe('the delivery log and POST /dashboard/webhooks/{id}/deliveries/{deliveryId}/redeliver', () => {
    it('shows each delivery with its attempts; Redeliver sends it again and adds an attempt', async () => {
      const rx = await startReceiver();
      receivers.push(rx);
      const { acct, v } = await user();
      const id = createdId(await v.post('/dashboard/webhooks', { url: `${rx.url}/hooks/shipping`, events: 'shipment.created', active: 'true' }, '/dashboard/webhooks'));
      const shipment = await createShipment(t, {}, acct.apiKey);
      await rx.waitFor(1);
      const [delivery] = await eventually(async () => {
        const list = await api(acct, `/v1/webhooks/${id}/deliveries`);
        return list[0]?.status === 'succeeded' ? list : null;
      }, 30_000, 'a succeeded delivery');

      const page = await v.get(`/dashboard/webhooks/${id}`);
      assert.equal(page.statusCode, 200);
      assert.ok(page.body.includes(`<h3 id="delivery-${delivery.id}"><code>shipment.created</code> <span class="status">succeeded</span></h3>`));
      assert.ok(page.body.includes(`<code>${delivery.eventId}</code>`));
      assert.ok(page.body.includes(`<dt>About</dt><dd><a href="/dashboard/shipments/${shipment.id}">Shipment ${shipment.reference}</a></dd>`), 'the delivery names its shipment by its reference, linked');
      // Once the shipment has a label, its tracking number too.
      const label = await t.app.inject({ method: 'POST', url: '/v1/labels', headers: { 'x-api-key': acct.apiKey }, payload: { shipmentId: shipment.id } });
      assert.equal(label.statusCode, 201, label.body);
      assert.ok((await v.get(`/dashboard/webhooks/${id}`)).body.includes(`Shipment ${shipment.reference}, ${label.json().trackingNumber}</a>`));
      assert.match(page.body, /<caption>Attempts of delivery 1 on this page \(shipment\.created\), oldest first<\/caption>/);
      for (const h of ['Time', 'Response status', 'Duration', 'Error']) assert.ok(page.body.includes(`<th scope="col">${h}</th>`), h);
      const attemptRows = (body: string) => [...body.matchAll(/<tr><td><time datetime="[^"]+">[^<]+<\/time><\/td><td>(\d+|no answer)<\/td><td>(\d+) ms<\/td><td>([^<]*)<\/td><\/tr>/g)].map((m) => [m[1], m[3]]);
      assert.deepEqual(attemptRows(page.body), [['204', '—']]);
      const action = `/dashboard/webhooks/${id}/deliveries/${delivery.id}/redeliver`;
      assert.ok(page.body.includes(`<form method="post" action="${action}" class="inline">`));

      const res = await v.post(action, {}, `/dashboard/webhooks/${id}`);
      assert.equal(res.statusCode, 303);
      assert.match(String(res.headers.location), new RegExp(`^/dashboard/webhooks/${id}$`));
      await rx.waitFor(2);
      assert.equal(rx.received[1]!.headers['webhook-id'], delivery.eventId);
      await eventually(async () => {
        const [d] = await api(acct, `/v1/webhooks/${id}/deliveries`);
        return d.status === 'succeeded' && d.attempts.length === 2;
      }, 30_000, 'the second attempt');
      const later = await v.get(String(res.headers.location));
      assert.match(later.body, /<p class="notice" role="status"[^>]*>The delivery is sent again shortly\.<\/p>/);
      assert.deepEqual(attemptRows(later.body), [['204', '—'], ['204', '—']]);
    });

    it('shows a failed attempt\'s status and error; an inactive webhook offers no Redeliver and refuses one with 409', async () => {
      const rx = await startReceiver(() => ({ status: 500 }));
      receivers.push(rx);
      const { acct, v } = await user();
      const id = createdId(await v.post('/dashboard/webhooks', { url: `${rx.url}/down`, events: 'shipment.created', active: 'true' }, '/dashboard/webhooks'));
      await createShipment(t, {}, acct.apiKey);
      const [delivery] = await eventually(async () => {
        const list = await api(acct, `/v1/webhooks/${id}/deliveries`);
        return list[0]?.status === 'failed' ? list : null;
      }, 30_000, 'a failed delivery');
      const page = await v.get(`/dashboard/webhooks/${id}`);
      assert.match(page.body, /<span class="status">failed<\/span>/);
      assert.match(page.body, /<td>500<\/td><td>\d+ ms<\/td><td>HTTP 500<\/td>/);

      // Deactivated in another tab: the button goes, and an old page's button is answered on the webhook's page.
      const token = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;
      assert.equal((await v.post(`/dashboard/webhooks/${id}`, { url: `${rx.url}/down`, events: 'shipment.created' }, `/dashboard/webhooks/${id}`)).statusCode, 303);
      const inactive = await v.get(`/dashboard/webhooks/${id}`);
      assert.ok(!inactive.body.includes('/redeliver"'));
      const res = await v.post(`/dashboard/webhooks/${id}/deliveries/${delivery.id}/redeliver`, { _csrf: token });
      assert.equal(res.statusCode, 409);
      assert.match(res.body, /The webhook is inactive: activate it/);
    });

    it('without the form\'s CSRF token is 403 and sends nothing', async () => {
      const rx = await startReceiver();
      receivers.push(rx);
      const { acct, v } = await user();
      const id = createdId(await v.post('/dashboard/webhooks', { url: `${rx.url}/x`, events: 'shipment.created', active: 'true' }, '/dashboard/webhooks'));
      await createShipment(t, {}, acct.apiKey);
      const [delivery] = await eventually(async () => {
        const list = await api(acct, `/v1/webhooks/${id}/deliveries`);
        return list[0]?.status === 'succeeded' ? list : null;
      }, 30_000, 'a succeeded delivery');
      const res = await postWithoutToken(v, `/dashboard/webhooks/${id}/deliveries/${delivery.id}/redeliver`, {});
      assert.equal(res.statusCode, 403);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(rx.received.length, 1);
      assert.equal((await api(acct, `/v1/webhooks/${id}/deliveries`))[0].attempts.length, 1);
    });
  });

  describe('POST /dashboard/webhooks/{id}/delete', () => {
    it('asks first, naming the webhook; then deletes it with its deliveries, and the list says so', async () => {
      const { acct, v } = await user();
      const id = createdId(await v.post('/dashboard/webhooks', { url: 'https://hooks.example.com/old-shop', events: 'shipment.created', active: 'true' }, '/dashboard/webhooks'));
      const page = await v.get(`/dashboard/webhooks/${id}`);
      assert.match(page.body, /<h2 id="webhook-delete">Delete the webhook<\/h2>/);
      assert.match(page.body, new RegExp(`<form method="post" action="/dashboard/webhooks/${id}/delete" class="inline">`));
      const asked = await v.post(`/dashboard/webhooks/${id}/delete`, {}, `/dashboard/webhooks/${id}`);
      assert.equal(asked.statusCode, 200);
      assert.match(asked.body, /<h1>Delete the webhook https:\/\/hooks.example.com\/old-shop\?<\/h1>/);
      assert.match(asked.body, /its deliveries and their history are deleted with it/);
      assert.equal((await api(acct, `/v1/webhooks/${id}`)).url, 'https://hooks.example.com/old-shop', 'nothing deleted before the second press');
      const done = await v.post(`/dashboard/webhooks/${id}/delete`, { confirmed: 'yes' }, `/dashboard/webhooks/${id}`);
      assert.equal(done.statusCode, 303, done.body.slice(0, 500));
      assert.equal(done.headers.location?.split('?')[0], '/dashboard/webhooks');
      assert.equal(noticeOf(done), 'The webhook https://hooks.example.com/old-shop is deleted.');
      const gone = await t.app.inject({ method: 'GET', url: `/v1/webhooks/${id}`, headers: { 'x-api-key': acct.apiKey } });
      assert.equal(gone.statusCode, 404);
      assert.equal((await v.get(`/dashboard/webhooks/${id}`)).statusCode, 404);
      // A tab left open on it: the list, saying it is gone.
      const stale = await v.post(`/dashboard/webhooks/${id}/delete`, { confirmed: 'yes' }, '/dashboard/webhooks');
      assert.equal(stale.statusCode, 303);
      assert.equal(noticeOf(stale, true), 'That webhook does not exist (any more): it was deleted, perhaps in another tab.');
    });

    it("another account's webhook is one that does not exist, and stays; without the form's CSRF token is 403 and deletes nothing", async () => {
      const { acct, v } = await user();
      const other = await t.newAccount();
      const theirs = (await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { 'x-api-key': other.apiKey }, payload: { url: 'https://hooks.example.com/theirs', events: ['shipment.created'] } })).json().id;
      const foreign = await v.post(`/dashboard/webhooks/${theirs}/delete`, { confirmed: 'yes' }, '/dashboard/webhooks');
      assert.equal(foreign.statusCode, 303);
      assert.match(noticeOf(foreign, true) ?? '', /^That webhook does not exist/);
      assert.equal((await api(other, `/v1/webhooks/${theirs}`)).url, 'https://hooks.example.com/theirs');
      const mine = createdId(await v.post('/dashboard/webhooks', { url: 'https://hooks.example.com/mine', events: 'shipment.created', active: 'true' }, '/dashboard/webhooks'));
      assert.equal((await postWithoutToken(v, `/dashboard/webhooks/${mine}/delete`, { confirmed: 'yes' })).statusCode, 403);
      assert.equal((await api(acct, `/v1/webhooks/${mine}`)).url, 'https://hooks.example.com/mine');
    });
  });
});

// The typed client (clients/typescript/): regenerated from the live document it matches the
// committed file byte for byte, and the README walkthrough runs through it against a listening
// service, on both databases.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { liveDocument, TYPES_FILE, typesOf } from '../../clients/typescript/generate.ts';
import { createShippingClient, type ShippingClient } from '../../clients/typescript/index.ts';
import { startWorker, type Worker } from '../../src/worker.ts';
import { forEachDatabase, startTestApp, type TestApp } from '../helpers.ts';
import { eventually, startReceiver, type Receiver } from '../webhooks/receiver.ts';
import { freePort } from './support.ts';

describe('clients/typescript/openapi.ts', () => {
  it('is what `npm run client` generates from the live document (run it after changing the API)', async () => {
    const expected = await typesOf(await liveDocument());
    assert.ok(readFileSync(TYPES_FILE, 'utf8') === expected, 'clients/typescript/openapi.ts is out of date: run `npm run client` and commit the result');
  });
});

async function download(url: string): Promise<Buffer> {
  const res = await fetch(url);
  assert.equal(res.status, 200, url);
  return Buffer.from(await res.arrayBuffer());
}

const exec = promisify(execFile);

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

forEachDatabase((database) => {
  describe('the README walkthrough through the typed client', () => {
    let t: TestApp;
    let base: string;
    let api: ShippingClient;
    let worker: Worker;
    let receiver: Receiver;

    before(async () => {
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      t = await startTestApp(database, { PUBLIC_BASE_URL: base, PORT: String(port), SANDBOX_TRACKING: '0' });
      await t.app.listen({ host: '127.0.0.1', port });
      worker = startWorker(t.ctx);
      receiver = await startReceiver();
      api = createShippingClient({ baseUrl: base, apiKey: t.apiKey });
    });
    after(async () => {
      await worker.stop();
      await receiver.close();
      await t.close();
    });

    it('health, shipment, label in two formats, tracking, stamps, webhooks and an OAuth token', async () => {
      const health = await api.GET('/v1/health');
      assert.equal(health.data?.status, 'ok');

      const { data: shipment, error } = await api.POST('/v1/shipments', {
        body: {
          carrier: 'UPS',
          service: 'worldwide_saver',
          from: { name: 'Jürgen Müller', street1: 'Hauptstraße 5', city: 'Berlin', postalCode: '10115', country: 'DE' },
          to: { name: 'Ada Lovelace', street1: '350 Fifth Avenue', city: 'New York', state: 'NY', postalCode: '10118', country: 'US' },
          parcel: { weight: { value: 1.2, unit: 'kg' } },
          reference: 'Order #1001',
          customs: {
            contentsType: 'merchandise', signer: 'Jürgen Müller',
            items: [{ description: 'Ceramic mug', quantity: 2, netWeight: { value: 0.8, unit: 'kg' }, value: { amount: 40, currency: 'EUR' }, hsCode: '691200', originCountry: 'DE' }],
          },
        },
      });
      assert.equal(error, undefined);
      assert.ok(shipment);
      assert.equal(shipment.status, 'created');

      const label = (await api.POST('/v1/labels', { body: { shipmentId: shipment.id, format: 'PDF', size: '4x6' } })).data;
      assert.ok(label);
      assert.match(label.trackingNumber, /^1Z/);
      assert.equal((await download(label.url)).subarray(0, 5).toString('latin1'), '%PDF-');
      // Or through the client, as the README says: bytes with parseAs (without it the client reads JSON and throws).
      const signed = new URL(label.url).searchParams;
      const bytes = await api.GET('/v1/downloads/labels/{id}', {
        params: { path: { id: label.id }, query: { format: 'PDF', expires: signed.get('expires')!, sig: signed.get('sig')! } },
        parseAs: 'arrayBuffer',
      });
      assert.equal(Buffer.from(bytes.data as unknown as ArrayBuffer).subarray(0, 5).toString('latin1'), '%PDF-');
      const png = (await api.GET('/v1/labels/{id}', { params: { path: { id: label.id }, query: { format: 'PNG' } } })).data;
      assert.ok(png);
      assert.equal((await download(png.url)).subarray(1, 4).toString('latin1'), 'PNG');

      const reported = await api.POST('/v1/tracking/events', {
        body: { events: [{ trackingNumber: label.trackingNumber, status: 'in_transit', timestamp: new Date().toISOString(), location: 'Louisville, KY, US', description: 'Departed facility' }] },
      });
      assert.deepEqual(reported.data, { accepted: 1 });
      const detailed = (await api.GET('/v1/labels/{id}/trackingnumber', { params: { path: { id: label.id }, query: { format: 'detailed' } } })).data;
      assert.equal(detailed?.status, 'in_transit');
      assert.equal(detailed?.events?.length, 1);
      const carrierSpecific = (await api.GET('/v1/labels/{id}/trackingnumber', { params: { path: { id: label.id }, query: { format: 'carrier-specific', sort: 'oldest_first', limit: 5 } } })).data;
      assert.equal(carrierSpecific?.carrierDetails?.carrier, 'UPS');

      const stamp = (await api.POST('/v1/stamps', { body: { shipmentId: shipment.id, format: 'PNG' } })).data;
      assert.ok(stamp);
      assert.equal((await download(stamp.url)).subarray(1, 4).toString('latin1'), 'PNG');
      assert.deepEqual((await api.POST('/v1/stamps/verify', { body: { indicium: stamp.indicium } })).data, { genuine: true, status: 'active', stampId: stamp.id });
      // Two ids (a duplicate is fine) go as one comma-joined parameter, as the document's explode: false says.
      const invalidated = await api.PUT('/v1/stamps/{id}/invalid', { params: { path: { id: stamp.id }, query: { ids: [stamp.id, stamp.id] } } });
      assert.equal(invalidated.response.status, 204);
      assert.equal((await api.POST('/v1/stamps/verify', { body: { indicium: stamp.indicium } })).data?.status, 'invalidated');

      const hook = (await api.POST('/v1/webhooks', { body: { url: `${receiver.url}/hook`, events: ['shipment.created'], secret: SECRET } })).data;
      assert.ok(hook);
      const second = (
        await api.POST('/v1/shipments', {
          body: {
            carrier: 'USPS',
            service: 'priority_mail',
            from: { name: 'A B', street1: '1100 Congress Ave', city: 'Austin', state: 'TX', postalCode: '78701', country: 'US' },
            to: { name: 'C D', street1: '1 Ashburton Pl', city: 'Boston', state: 'MA', postalCode: '02108', country: 'US' },
            parcel: { weight: { value: 12, unit: 'oz' } },
          },
        })
      ).data;
      assert.ok(second);
      const deliveries = await eventually(async () => {
        const { data } = await api.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id: hook.id } } });
        return data?.some((d) => d.status === 'succeeded') ? data : undefined;
      });
      assert.equal(deliveries[0]?.type, 'shipment.created');
      const arrived = receiver.received[0]!;
      const payload = new Webhook(SECRET).verify(arrived.body, arrived.headers as Record<string, string>) as { data: { id: string } };
      assert.equal(payload.data.id, second.id);

      const { clientId, clientSecret } = await t.newClient(t.accountId, ['read:shipments', 'read:labels']);
      const token = await api.POST('/oauth/token', {
        body: { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'read:shipments' },
        bodySerializer: (body) => new URLSearchParams(body as Record<string, string>).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      assert.ok(token.data, JSON.stringify(token.error));
      const withToken = createShippingClient({ baseUrl: base, accessToken: token.data.access_token });
      const listed = await withToken.GET('/v1/shipments');
      assert.equal(listed.data?.length, 2);
      const refused = await withToken.POST('/v1/shipments', { body: { carrier: 'UPS', service: 'worldwide_saver', from: shipment.from, to: shipment.to, parcel: shipment.parcel } });
      assert.equal(refused.response.status, 403);
      assert.equal(refused.error?.code, 'FORBIDDEN');
    });

    it("the README's TypeScript example runs as written (its import path aside), with BASE, KEY and TOKEN as the walkthrough exports them", async () => {
      const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
      const section = readme.slice(readme.indexOf('## The same walkthrough with the typed TypeScript client'));
      const block = /```ts\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
      assert.ok(block?.includes("from './clients/typescript/index.ts'"), 'the README imports the client from a checkout');
      const code = block
        .replace("'./clients/typescript/index.ts'", JSON.stringify(new URL('../../clients/typescript/index.ts', import.meta.url).href));
      const dir = mkdtempSync(join(tmpdir(), 'readme-client-'));
      try {
        writeFileSync(join(dir, 'walkthrough.ts'), code);
        const { clientId, clientSecret } = await t.newClient(t.accountId, ['read:shipments', 'read:labels']);
        const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'read:shipments' });
        const token = (await (await fetch(`${base}/oauth/token`, { method: 'POST', body: form })).json()) as { access_token: string };
        const { stdout } = await exec(process.execPath, ['--disable-warning=ExperimentalWarning', join(dir, 'walkthrough.ts')], { env: { ...process.env, BASE: `${base}/v1`, KEY: t.apiKey, TOKEN: token.access_token } });
        // It prints the new shipment's id, its label's tracking status and how many shipments the token reads.
        const [id, status, count] = stdout.trim().split(' ');
        assert.match(id!, /^[0-9a-f-]{36}$/);
        assert.equal(status, 'in_transit');
        assert.ok(Number(count) >= 1, stdout);
        const created = await api.GET('/v1/shipments/{id}', { params: { path: { id: id! } } });
        assert.equal(created.data?.reference, 'Order #1001');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});

// RFC 9110 §10.2.2: every answer that creates a resource names it in `Location`, replays included.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase, sampleShipment, withTestApp } from '../helpers.ts';

forEachDatabase((database) => {
  const t = withTestApp(database);

  describe('Location on what a POST created', () => {
    it('names the new shipment, label, return, stamp, webhook, batch and manifest, whose GET answers it; a replay names the same', async () => {
      const acct = await t.newAccount();
      const headers = { 'x-api-key': acct.apiKey };
      const base = t.ctx.config.publicBaseUrl;
      let request = 0;
      const created = async (url: string, payload: object, collection: string, status = 201) => {
        const key = `k-${++request}`;
        const res = await t.app.inject({ method: 'POST', url, headers: { ...headers, 'idempotency-key': key }, payload });
        assert.equal(res.statusCode, status, `${url}: ${res.body}`);
        const id = res.json().id as string;
        assert.equal(res.headers.location, `${base}/v1/${collection}/${id}`, url);
        const got = await t.app.inject({ method: 'GET', url: new URL(String(res.headers.location)).pathname, headers });
        assert.equal(got.statusCode, 200, `GET ${res.headers.location}`);
        assert.equal(got.json().id, id);
        const replay = await t.app.inject({ method: 'POST', url, headers: { ...headers, 'idempotency-key': key }, payload });
        assert.equal(replay.headers['idempotent-replayed'], 'true');
        assert.equal(replay.headers.location, res.headers.location, `${url} replayed`);
        return id;
      };
      const shipment = await created('/v1/shipments', sampleShipment, 'shipments');
      await created('/v1/labels', { shipmentId: shipment }, 'labels');
      await created(`/v1/shipments/${shipment}/returns`, {}, 'shipments');
      const domestic = await created('/v1/shipments', { ...sampleShipment, service: 'ground', from: { ...sampleShipment.to, name: 'A Sender' }, customs: undefined, reference: 'stamp' }, 'shipments');
      await created('/v1/stamps', { shipmentId: domestic }, 'stamps');
      await created('/v1/webhooks', { url: 'https://hooks.example.com/shipping', events: ['shipment.created'] }, 'webhooks');
      await created('/v1/batches', { items: [{ shipment: sampleShipment }] }, 'batches', 202);
      await created('/v1/manifests', { carrier: 'UPS' }, 'manifests');
    });

    it('is absent from an answer that created nothing', async () => {
      const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, carrier: 'nobody' } });
      assert.equal(res.statusCode, 400);
      assert.equal(res.headers.location, undefined);
    });
  });
});

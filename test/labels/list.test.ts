// GET /v1/labels: the account's labels, newest first, with filters and cursor pagination, on both databases.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { forEachDatabase, sampleShipment, withTestApp, US_SENDER } from '../helpers.ts';

forEachDatabase((database) => {
  describe('GET /v1/labels', () => {
    const t = withTestApp(database);

    it("lists this account's labels newest first, as GET /v1/labels/{id} shows them, filtered and paginated", async () => {
      const acct = await t.newAccount();
      const as = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => t.app.inject({ method, url, headers: { 'x-api-key': acct.apiKey }, ...(payload ? { payload } : {}) });
      const made: { id: string; carrier: string; createdAt: string }[] = [];
      for (const [carrier, service] of [['UPS', 'worldwide_saver'], ['USPS', 'priority_mail'], ['UPS', 'worldwide_expedited'], ['FedEx', 'international_economy']] as const) {
        const shipment = (await as('POST', '/v1/shipments', { ...sampleShipment, carrier, service, ...(carrier === 'USPS' ? { from: US_SENDER } : {}) })).json();
        const label = await as('POST', '/v1/labels', { shipmentId: shipment.id, format: 'ZPL' });
        assert.equal(label.statusCode, 201, label.body);
        made.push(label.json());
      }
      await as('PUT', `/v1/labels/${made[0]!.id}/invalidate`);
      // Another account's label is never listed.
      const other = (await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment })).json();
      await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: other.id } });

      const all = await as('GET', '/v1/labels');
      assert.equal(all.statusCode, 200);
      assert.deepEqual(all.json().map((l: { id: string }) => l.id), made.map((l) => l.id).reverse());
      const one = (await as('GET', `/v1/labels/${made[1]!.id}`)).json();
      assert.deepEqual({ ...all.json()[2], url: undefined }, { ...one, url: undefined });
      assert.equal(all.json()[2].format, 'PDF');

      const ids = async (query: string) => (await as('GET', `/v1/labels?${query}`)).json().map((l: { id: string }) => l.id);
      assert.deepEqual(await ids('status=invalidated'), [made[0]!.id]);
      assert.deepEqual(await ids('status=active&carrier=UPS'), [made[2]!.id]);
      assert.deepEqual(await ids(`created_after=${encodeURIComponent(made[1]!.createdAt)}`), [made[3]!.id, made[2]!.id].filter((id) => made.find((m) => m.id === id)!.createdAt > made[1]!.createdAt));
      assert.deepEqual(await ids(`created_before=${encodeURIComponent('2000-01-01T00:00:00+01:00')}`), []);
      // An unencoded + (which arrives as a space) is the offset's sign, as in events_since.
      assert.deepEqual(await ids('created_before=2000-01-01T00:00:00+01:00'), []);
      assert.equal((await ids('created_after=2000-01-01T00:00:00+01:00')).length, made.length);
      // A bound past the year 9999 in UTC is the last moment the stored form holds: every label is before it.
      assert.equal((await ids(`created_before=${encodeURIComponent('9999-12-31T23:59:59-01:00')}`)).length, made.length);

      // Pages of 3 and 1, through the Link header.
      const first = await as('GET', '/v1/labels?limit=3');
      assert.equal(first.json().length, 3);
      const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))![1]!;
      const second = await as('GET', new URL(next).pathname + new URL(next).search);
      assert.deepEqual(second.json().map((l: { id: string }) => l.id), [made[0]!.id]);
      assert.equal(second.headers.link, undefined);
    });

    it('refuses bad filters with 400 naming them', async () => {
      for (const [query, field] of [['status=lost', 'status'], ['carrier=TNT', 'carrier'], ['created_after=yesterday', 'created_after'], ['created_before=2026-01-01T00:00:00', 'created_before'], ['created_after=2026-11-28z', 'created_after'], ['created_after=2026-02-30T00:00:00Z', 'created_after'], ['created_after=2026-11-28T00:00Z', 'created_after'], [`created_after=${encodeURIComponent('28 Nov 2026 00:00 Z')}`, 'created_after'], ['limit=0', 'limit'], ['x=1', 'x']]) {
        const res = await t.request({ method: 'GET', url: `/v1/labels?${query}` });
        assert.equal(res.statusCode, 400, query);
        assert.ok(res.json().details.some((d: { field: string }) => d.field === field), `${query}: ${res.body}`);
      }
      // In words: which part of the request, and a parameter given twice said to be so.
      for (const [query, message] of [['limit=5&limit=5', 'query parameter limit must be given once'], ['limit=500', 'query parameter limit must be at most 100'], ['status=active&status=invalidated', 'query parameter status must be given once']]) {
        const res = await t.request({ method: 'GET', url: `/v1/labels?${query}` });
        assert.equal(res.statusCode, 400, query);
        assert.equal(res.json().message, message);
      }
      const path = await t.request({ method: 'GET', url: '/v1/labels/not-a-label' });
      assert.equal(path.json().message, 'path parameter id must be a UUID (in lower case, as ids are issued)');
    });
  });
});

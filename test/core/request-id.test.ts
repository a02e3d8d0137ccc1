// Every answer names its request id in x-request-id: ours (a UUID), or the client's when it sent a safe one.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { InjectOptions } from 'fastify';
import { createShipment, forEachDatabase, withTestApp } from '../helpers.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

forEachDatabase((database) => {
  const t = withTestApp(database);

  describe('x-request-id', () => {
    it('is on every kind of answer: public, authenticated, 400, 401, 403, 404 (unknown id and unknown route), 413, 415', async () => {
      const shipment = await createShipment(t);
      const readOnly = await t.newAccount(['read:labels']);
      const cases: [string, InjectOptions, number][] = [
        ['public route', { method: 'GET', url: '/v1/health' }, 200],
        ['authenticated read', { method: 'GET', url: `/v1/shipments/${shipment.id}`, headers: { 'x-api-key': t.apiKey } }, 200],
        ['bad id', { method: 'GET', url: '/v1/shipments/nope', headers: { 'x-api-key': t.apiKey } }, 400],
        ['no credentials', { method: 'GET', url: `/v1/shipments/${shipment.id}` }, 401],
        ['missing scope', { method: 'GET', url: `/v1/shipments/${shipment.id}`, headers: { 'x-api-key': readOnly.apiKey } }, 403],
        ['unknown id', { method: 'GET', url: '/v1/shipments/01900000-0000-7000-8000-000000000000', headers: { 'x-api-key': t.apiKey } }, 404],
        ['unknown route', { method: 'GET', url: '/v1/nothing-here' }, 404],
        ['oversized body', { method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' }, payload: `{"reference":"${'x'.repeat(1024 * 1024)}"}` }, 413],
        ['wrong content type', { method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': t.apiKey, 'content-type': 'application/xml' }, payload: '<a/>' }, 415],
      ];
      for (const [name, request, status] of cases) {
        const res = await t.app.inject(request);
        assert.equal(res.statusCode, status, `${name}: ${res.body}`);
        assert.match(String(res.headers['x-request-id']), UUID, name);
      }
    });

    it("echoes the client's id when it is safe, and replaces one that is not", async () => {
      const mine = await t.app.inject({ method: 'GET', url: '/v1/health', headers: { 'x-request-id': 'order-1234.retry:2' } });
      assert.equal(mine.headers['x-request-id'], 'order-1234.retry:2');
      const unsafe = await t.app.inject({ method: 'GET', url: '/v1/health', headers: { 'x-request-id': 'a"b<script>' } });
      assert.match(String(unsafe.headers['x-request-id']), UUID);
      // A credential sent as an id (a client's mistake) is neither echoed nor logged.
      // Refresh tokens and authorization codes are prefixed (rt_, ac_) so that they are known too.
      for (const credential of [t.apiKey, 'cs_0123456789abcdef', 'whsec_0123456789abcdefghij', `rt_${'Ab3'.repeat(21)}x`, `ac_${'Zy9'.repeat(14)}q`]) {
        const sent = await t.app.inject({ method: 'GET', url: '/v1/health', headers: { 'x-request-id': credential } });
        assert.match(String(sent.headers['x-request-id']), UUID, credential.slice(0, 6));
      }
      const twice = await Promise.all([0, 1].map(() => t.app.inject({ method: 'GET', url: '/v1/health' })));
      assert.notEqual(twice[0]!.headers['x-request-id'], twice[1]!.headers['x-request-id']);
    });
  });
});

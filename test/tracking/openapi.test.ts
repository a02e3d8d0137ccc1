// The tracking routes in GET /v1/openapi.json, and real responses of every form conforming to it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { forEachDatabase, startTestApp, type TestApp } from '../helpers.ts';
import { createLabel, lookup, postEvents } from './fixtures.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

forEachDatabase((database) => {
  let t: TestApp;
  let doc: Record<string, any>;
  let ajv: Ajv2020;
  before(async () => {
    t = await startTestApp(database);
    doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(doc, 'openapi');
  });
  after(async () => t.close());

  const conforms = (path: string, method: string, res: LightMyRequestResponse) => {
    const op = doc.paths[path][method];
    const declared = op.responses[String(res.statusCode)];
    assert.ok(declared, `${method} ${path} → ${res.statusCode} is not declared`);
    const pointer = ['paths', path, method, 'responses', String(res.statusCode), 'content', 'application/json', 'schema'].map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    const validate = ajv.compile({ $ref: `openapi#/${pointer}` });
    assert.ok(validate(res.json()), `${method} ${path} → ${res.statusCode}: ${ajv.errorsText(validate.errors)}\n${res.body.slice(0, 300)}`);
  };

  describe('OpenAPI: tracking', () => {
    it('documents both routes with their scopes and every query parameter', () => {
      const get = doc.paths['/v1/labels/{id}/trackingnumber'].get;
      assert.deepEqual(get.security.find((s: Record<string, string[]>) => s.oauth2).oauth2, ['read:labels']);
      assert.deepEqual(get.parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name).sort(), ['carrier', 'events_since', 'format', 'limit', 'sort']);
      const limit = get.parameters.find((p: { name: string }) => p.name === 'limit').schema;
      assert.deepEqual([limit.minimum, limit.maximum, limit.default], [1, 100, 10]);
      const post = doc.paths['/v1/tracking/events'].post;
      assert.deepEqual(post.security.find((s: Record<string, string[]>) => s.oauth2).oauth2, ['write:tracking']);
      assert.ok(post.responses['202'] && post.responses['404'] && post.responses['400']);
    });

    it('real answers of every form, and the errors, conform to the document', async () => {
      const label = await createLabel(t);
      const ingest = '/v1/tracking/events';
      conforms(ingest, 'post', await postEvents(t, [{ trackingNumber: label.trackingNumber, status: 'returned', timestamp: '2026-03-02T08:00:00+01:00', location: '' }]));
      conforms(ingest, 'post', await postEvents(t, [{ trackingNumber: '1Z999AA10123456784', status: 'returned', timestamp: '2026-03-02T08:00:00Z', location: 'x' }]));
      conforms(ingest, 'post', await postEvents(t, [{ trackingNumber: label.trackingNumber, status: 'lost', timestamp: '2026-03-02T08:00:00Z', location: 'x' }]));
      const path = '/v1/labels/{id}/trackingnumber';
      for (const query of ['', 'format=basic', 'format=detailed', 'format=carrier-specific&limit=100', 'limit=0', 'events_since=soon']) {
        conforms(path, 'get', await lookup(t, label.id, query));
      }
      // estimatedDelivery is null once returned; an unused label has a time.
      assert.equal((await lookup(t, label.id, 'format=detailed')).json().estimatedDelivery, null);
      conforms(path, 'get', await lookup(t, (await createLabel(t)).id, 'format=carrier-specific'));
      conforms(path, 'get', await lookup(t, '01890a5d-ac96-774b-bcce-b302099a8057'));
    });
  });
});

// Contract §9: GET /v1/openapi.json is a valid OpenAPI 3.1 document of every route, and real responses
// conform to the schemas it declares.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { LightMyRequestResponse } from 'fastify';
import { ALL_SCOPES } from '../../src/auth/scopes.ts';
import { answersChecked, createShipment, forEachDatabase, sampleShipment, startTestApp, type TestApp } from '../helpers.ts';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorSchema } from '../../src/http/schemas.ts';
import { accessToken, Conformance, concreteUrl, openApiPath, ROOT, routesOf, tokenRequest } from './support.ts';

/** Routes left out of the API's description on purpose: the dashboard's pages are for people, not clients (docs/dashboard.md). */
const UNDOCUMENTED = { has: (route: string) => / \/dashboard(\/|$)/.test(route) };

forEachDatabase((database) => {
  let t: TestApp;
  let doc: Record<string, any>;
  let conformance: Conformance;
  before(async () => {
    t = await startTestApp(database);
    const res = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    assert.equal(res.statusCode, 200);
    doc = res.json();
    conformance = new Conformance(doc);
  });
  after(async () => t.close());

  describe('GET /v1/openapi.json', () => {
    it('is a valid OpenAPI 3.1 document, info.version 3.0.0, needing no credentials', async () => {
      assert.match(doc.openapi, /^3\.1\./);
      assert.equal(doc.info.version, '3.0.0');
      const validator = new Validator();
      const result = await validator.validate(structuredClone(doc));
      assert.ok(result.valid, JSON.stringify(result.errors, null, 1)?.slice(0, 3000));
    });

    it('describes every route of the app', () => {
      const missing = routesOf(t.app)
        .filter((r) => !UNDOCUMENTED.has(`${r.method} ${r.url}`))
        .filter((r) => !doc.paths[openApiPath(r.url)]?.[r.method.toLowerCase()])
        .map((r) => `${r.method} ${r.url}`);
      assert.deepEqual(missing, []);
    });

    it('declares credentials on every operation: none for public ones, 401 and 403 wherever a credential is needed', () => {
      for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
        for (const [method, op] of Object.entries<Record<string, any>>(item)) {
          assert.ok(Array.isArray(op.security), `${method} ${path} has no security`);
          if (op.security.length === 0) continue;
          assert.ok(op.responses['401'], `${method} ${path} does not declare 401`);
          const scope = op.security.find((s: Record<string, string[]>) => s.oauth2)?.oauth2?.[0];
          if (scope) {
            assert.ok(op.responses['403'], `${method} ${path} does not declare 403`);
            assert.ok((ALL_SCOPES as readonly string[]).includes(scope), `${method} ${path}: unknown scope ${scope}`);
          }
        }
      }
    });

    it('names the challenges the service sends: realm "shipping", insufficient_scope with the scope on 403, Basic on the token endpoint', async () => {
      const challenge = (path: string, method: string, status: string) => doc.paths[path][method].responses[status].headers['www-authenticate'].description as string;
      assert.match(challenge('/v1/labels', 'get', '401'), /`Bearer realm="shipping"`/);
      assert.match(challenge('/v1/labels', 'get', '403'), /`Bearer realm="shipping", error="insufficient_scope", scope="read:labels"`/);
      assert.match(challenge('/oauth/token', 'post', '401'), /`Basic realm="shipping"`/);
      assert.ok(!JSON.stringify(doc).includes('realm=\\"api\\"'), 'no other realm');
      // And what the service really sends.
      const refused = await t.app.inject({ method: 'GET', url: '/v1/labels', headers: { 'x-api-key': (await t.newAccount(['read:shipments'])).apiKey } });
      assert.equal(refused.headers['www-authenticate'], 'Bearer realm="shipping", error="insufficient_scope", scope="read:labels"');
    });

    it('every test app checks each answer of the API and the token endpoint against this document (test/helpers.ts)', async () => {
      const before = answersChecked();
      await t.request({ method: 'GET', url: '/v1/shipments' });
      await t.request({ method: 'PUT', url: '/v1/labels/01890000-0000-7000-8000-000000000000/invalidate' });
      await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=client_credentials' });
      assert.equal(answersChecked() - before, 3);
    });

    it('declares 415 and 413 on every method that may carry a body, and 409 and 422 on every keyed POST', async () => {
      for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
        for (const [method, op] of Object.entries<Record<string, any>>(item)) {
          if (!['post', 'put', 'patch', 'delete'].includes(method) || path.startsWith('/oauth/')) continue;
          for (const status of ['413', '415']) assert.ok(op.responses[status], `${method} ${path} does not declare ${status}`);
          if (method === 'post' && op.parameters?.some((p: { name: string }) => p.name === 'idempotency-key')) {
            for (const status of ['409', '422']) assert.ok(op.responses[status], `${method} ${path} does not declare ${status}`);
          }
        }
      }
      // What the service really answers (and the test app checks against the document).
      const text = { 'content-type': 'text/plain' };
      assert.equal((await t.request({ method: 'DELETE', url: '/v1/webhooks/01890000-0000-7000-8000-000000000000', headers: text, payload: 'x' })).statusCode, 415);
      assert.equal((await t.request({ method: 'PUT', url: '/v1/labels/01890000-0000-7000-8000-000000000000/invalidate', headers: text, payload: 'x' })).statusCode, 415);
    });

    it('says which bodies may be left out: a return takes none, a shipment needs one', () => {
      assert.equal(doc.paths['/v1/shipments/{id}/returns'].post.requestBody.required, false);
      assert.equal(doc.paths['/v1/shipments'].post.requestBody.required, true);
    });
  });

  it('Error.code lists every code the service answers with (each error class and AppError in src/)', () => {
    const sources = readdirSync(join(ROOT, 'src'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => readFileSync(join(e.parentPath, e.name), 'utf8'));
    // Made by an error class, an AppError, or written out whole (the answer to a request Node's parser refused).
    const used = new Set(sources.flatMap((text) => [...text.matchAll(/(?:super|AppError)\(\d{3}, '([A-Z_]+)'|JSON\.stringify\(\{ code: '([A-Z_]+)'/g)].map((m) => (m[1] ?? m[2])!)));
    assert.ok(used.size >= 10, [...used].join(' '));
    assert.deepEqual([...used].filter((code) => !(errorSchema.properties.code.enum as readonly string[]).includes(code)), []);
  });

  describe('GET /v1/docs', () => {
    it('is an HTML reference page listing the operations by tag, each with its operationId', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/docs' });
      assert.equal(res.statusCode, 200);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /<!doctype html>/i);
      assert.match(res.body, /\/v1\/shipments\/\{id\}/);
      assert.match(res.body, /read:shipments/);
      // Tags in the document's order, each heading the operations that carry it.
      const headings = [...res.body.matchAll(/<h2 id="tag-([a-z]+)">/g)].map((m) => m[1]);
      assert.deepEqual(headings, ['shipments', 'addresses', 'labels', 'batches', 'manifests', 'stamps', 'tracking', 'webhooks', 'oauth', 'service']);
      const labels = res.body.slice(res.body.indexOf('id="tag-labels"'), res.body.indexOf('id="tag-batches"'));
      assert.match(labels, /<section id="createLabel">/);
      assert.match(labels, /<section id="invalidateLabel">/);
      assert.doesNotMatch(labels, /id="createStamp"/);
    });

    it('says what each operation takes and answers: parameters with their types, bodies with their fields and example, answers, every schema and webhook event', async () => {
      const page = (await t.app.inject({ method: 'GET', url: '/v1/docs' })).body;
      const section = (id: string) => page.slice(page.indexOf(`<section id="${id}">`), page.indexOf('</section>', page.indexOf(`<section id="${id}">`)));
      // What every call shares, once, at the top.
      assert.match(page, /<h2 id="using">Using the API<\/h2>/);
      for (const rule of ['X-API-Key', 'Idempotency-Key', 'IDEMPOTENCY_KEY_REUSED', 'rel="next"', 'Retry-After', 'If-None-Match']) assert.ok(page.includes(rule), rule);
      // A list's parameters with their range and default, and what they are.
      assert.match(section('listShipments'), /<code>limit<\/code> <span class="meta">query<\/span><\/td><td>integer, 1–100, default <code>20<\/code><\/td><td>Page size, 1 to 100\.<\/td>/);
      // A body's fields, required ones marked, another schema linked, and its example.
      const create = section('createShipment');
      assert.match(create, /<h4>Body: <code>application\/json<\/code><\/h4>/);
      assert.match(create, /<code>carrier<\/code> <span class="req">required<\/span><\/td><td>string, one of <code>UPS<\/code>, <code>USPS<\/code>, <code>FedEx<\/code>, <code>DHL<\/code>/);
      assert.match(create, /<code>to<\/code> <span class="req">required<\/span><\/td><td><a href="#schema-Address">Address<\/a>/);
      assert.match(create, /Example:<\/p><pre>\{\n {2}&#34;carrier&#34;: &#34;UPS&#34;/);
      assert.match(create, /<li><b>201<\/b> [^<]*: <a href="#schema-Shipment">Shipment<\/a><\/li>/);
      // Every schema a link names is on the page, and so is every webhook event.
      for (const [, name] of page.matchAll(/href="#schema-(\w+)"/g)) assert.ok(page.includes(`<section id="schema-${name}">`), name);
      assert.match(page, /<h2 id="webhooks">Webhook events<\/h2>/);
      assert.match(page, /<section id="shipmentCreatedEvent">/);
    });
  });

  describe('real responses conform to the document', () => {
    it('shipments: 201, 200 get, 200 list, 400, 401, 403, 404, 413, 415, 422', async () => {
      const c = conformance;
      const created = await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment });
      c.check('POST', '/v1/shipments', created);
      c.check('GET', '/v1/shipments/:id', await t.request({ method: 'GET', url: `/v1/shipments/${created.json().id}` }));
      await createShipment(t, { reference: undefined, to: { ...sampleShipment.to, street2: undefined } });
      const list = await t.request({ method: 'GET', url: '/v1/shipments?limit=1' });
      assert.ok(list.headers.link);
      c.check('GET', '/v1/shipments', list);
      c.check('GET', '/v1/shipments', await t.request({ method: 'GET', url: '/v1/shipments' }));
      c.check('POST', '/v1/shipments', await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, carrier: 'TNT' } }));
      c.check('POST', '/v1/shipments', await t.request({ method: 'POST', url: '/v1/shipments', headers: { 'content-type': 'text/csv' }, payload: 'a,b' }));
      c.check('POST', '/v1/shipments', await t.request({ method: 'POST', url: '/v1/shipments', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ reference: 'x'.repeat(1024 * 1024) }) }));
      c.check('POST', '/v1/shipments', await t.app.inject({ method: 'POST', url: '/v1/shipments', payload: sampleShipment }));
      const readOnly = await t.newAccount(['read:shipments']);
      c.check('POST', '/v1/shipments', await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': readOnly.apiKey }, payload: sampleShipment }));
      c.check('GET', '/v1/shipments/:id', await t.request({ method: 'GET', url: '/v1/shipments/01890000-0000-7000-8000-000000000000' }));
      c.check('GET', '/v1/shipments/:id', await t.request({ method: 'GET', url: '/v1/shipments/nope' }));
      c.check('GET', '/v1/shipments', await t.request({ method: 'GET', url: '/v1/shipments?limit=0' }));
      await t.request({ method: 'POST', url: '/v1/shipments', headers: { 'idempotency-key': 'oa-1' }, payload: sampleShipment });
      const reused = await t.request({ method: 'POST', url: '/v1/shipments', headers: { 'idempotency-key': 'oa-1' }, payload: { ...sampleShipment, reference: 'other' } });
      assert.equal(reused.statusCode, 422);
      c.check('POST', '/v1/shipments', reused);
      c.check('GET', '/v1/shipments', await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `Bearer ${await accessToken(t, t.accountId, ['read:shipments'])}` } }));
    });

    it('the conformance check itself rejects an undeclared status, a wrong content type and a body off its schema', () => {
      const fake = (statusCode: number, body: unknown, type = 'application/json; charset=utf-8') =>
        ({ statusCode, headers: { 'content-type': type }, body: JSON.stringify(body), json: () => body }) as unknown as LightMyRequestResponse;
      assert.throws(() => conformance.check('GET', '/v1/shipments/:id', fake(404, { code: 'NOT_FOUND' })), /does not match/);
      assert.throws(() => conformance.check('GET', '/v1/shipments/:id', fake(200, { id: 'x' })), /does not match/);
      assert.throws(() => conformance.check('GET', '/v1/shipments/:id', fake(418, { code: 'X', message: 'y' })), /not declared/);
      assert.throws(() => conformance.check('GET', '/v1/shipments/:id', fake(404, { code: 'X', message: 'y' }, 'text/html')), /sent text\/html/);
      conformance.check('GET', '/v1/shipments/:id', fake(404, { code: 'NOT_FOUND', message: 'shipment x not found' }));
    });

    it('health, JWKS, metadata and the token endpoint (success and every error)', async () => {
      const c = conformance;
      c.check('GET', '/v1/health', await t.app.inject({ method: 'GET', url: '/v1/health' }));
      c.check('GET', '/.well-known/jwks.json', await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' }));
      c.check('GET', '/.well-known/oauth-authorization-server', await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' }));
      const client = await t.newClient(t.accountId, ['read:shipments']);
      const creds = { client_id: client.clientId, client_secret: client.clientSecret };
      const ok = await tokenRequest(t, { grant_type: 'client_credentials', ...creds });
      assert.equal(ok.statusCode, 200);
      c.check('POST', '/oauth/token', ok);
      for (const res of [
        await tokenRequest(t, { ...creds }),
        await tokenRequest(t, { grant_type: 'password', ...creds }),
        await tokenRequest(t, { grant_type: 'client_credentials', ...creds, scope: 'write:stamps' }),
        await tokenRequest(t, { grant_type: 'client_credentials', client_id: client.clientId, client_secret: 'wrong' }),
        await t.app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials' } }),
      ]) {
        assert.ok(res.statusCode === 400 || res.statusCode === 401);
        c.check('POST', '/oauth/token', res);
      }
    });

    it('every route: without credentials, without its scope, and with unknown ids and an empty body', async () => {
      const c = conformance;
      const noScopes = await t.newAccount([]);
      for (const route of routesOf(t.app)) {
        if (UNDOCUMENTED.has(`${route.method} ${route.url}`)) continue;
        const op = doc.paths[openApiPath(route.url)][route.method.toLowerCase()];
        const url = concreteUrl(route.url);
        const method = route.method as 'GET';
        const payload = ['POST', 'PUT', 'PATCH'].includes(method) ? {} : undefined;
        if (op.security.length > 0) {
          c.check(method, route.url, await t.app.inject({ method, url, payload }));
          const res = await t.app.inject({ method, url, payload, headers: { 'x-api-key': noScopes.apiKey } });
          c.check(method, route.url, res);
        }
        if (route.url.includes('/oauth/authorize')) continue; // a browser page; its tests live with it
        c.check(method, route.url, await t.request({ method, url, payload }));
      }
    });

    after(() => {
      assert.ok(conformance.checked > 20, `only ${conformance.checked} JSON bodies checked`);
    });
  });

  describe('GET /v1/health', () => {
    it('200 {status: "ok", version} when the database answers', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/health' });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { status: 'ok', version: t.ctx.config.version });
      assert.equal(res.json().version, '0.0.0-test');
    });

    it('503 {status: "unavailable", version} when the database does not answer, conforming to the document', async () => {
      const broken = await startTestApp(database);
      const { sql } = await import('kysely');
      const schema = database.name === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(broken.ctx.db)).rows[0]!.s : undefined;
      await broken.ctx.storage.close();
      try {
        const res = await broken.app.inject({ method: 'GET', url: '/v1/health' });
        assert.equal(res.statusCode, 503);
        assert.deepEqual(res.json(), { status: 'unavailable', version: '0.0.0-test' });
        conformance.check('GET', '/v1/health', res);
      } finally {
        await broken.app.close();
        if (schema) await (await import('../helpers.ts')).dropSchema(schema);
      }
    });
  });
});

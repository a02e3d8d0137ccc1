// What an outside API tester (Schemathesis, Prism) found, each pinned by a test that fails without
// its fix, on both databases.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EMAIL_PATTERN } from '../../src/http/schemas.ts';
import { createShipment, forEachDatabase, sampleShipment, withTestApp } from '../helpers.ts';

function assertInvalid(res: { statusCode: number; json(): any }, field: string): void {
  assert.equal(res.statusCode, 400, JSON.stringify(res.json()));
  assert.equal(res.json().code, 'INVALID_INPUT');
  assert.ok(res.json().details.some((d: { field: string }) => d.field === field), JSON.stringify(res.json()));
}

forEachDatabase((database) => {
  const t = withTestApp(database);

  describe('control characters never reach the database', () => {
    it('NUL in a tracking number of POST /v1/tracking/events is 400 naming the field', async () => {
      const res = await t.request({ method: 'POST', url: '/v1/tracking/events', payload: { events: [{ trackingNumber: '1Z\u0000', status: 'in_transit', timestamp: '2026-01-01T00:00:00Z', location: 'X' }] } });
      assertInvalid(res, 'events[0].trackingNumber');
    });

    it('in a query string, a path parameter and an OAuth form field too', async () => {
      assertInvalid(await t.request({ method: 'GET', url: '/v1/shipments?cursor=%00' }), 'cursor');
      const path = await t.request({ method: 'GET', url: '/v1/shipments/%00' });
      assert.equal(path.statusCode, 400);
      const token = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=client_credentials&client_id=a%00&client_secret=b' });
      assert.equal(token.statusCode, 400);
      assert.equal(token.json().error, 'invalid_request');
    });

    it('a body nested deeper than any request needs is 400, never a stack overflow', async () => {
      const deep = `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
      const res = await t.request({ method: 'POST', url: '/v1/shipments', headers: { 'content-type': 'application/json' }, payload: deep });
      assert.equal(res.statusCode, 400, res.body.slice(0, 200));
      assert.equal(res.json().code, 'INVALID_INPUT');
    });

    it('an unpaired surrogate (no character, not writable as UTF-8) is 400 naming the field, and nothing is stored', async () => {
      const before = (await t.request({ method: 'GET', url: '/v1/shipments?limit=100' })).json().length;
      const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, from: { ...sampleShipment.from, name: '\ud800x' } } });
      assertInvalid(res, 'from.name');
      assert.match(res.json().message, /from\.name must be well-formed Unicode/);
      assert.equal((await t.request({ method: 'GET', url: '/v1/shipments?limit=100' })).json().length, before);
      // A pair is a character like any other.
      assert.equal((await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, from: { ...sampleShipment.from, name: 'Ada \ud83d\udce6' } } })).statusCode, 201);
      assertInvalid(await t.request({ method: 'POST', url: '/v1/webhooks', payload: { url: 'https://hooks.example.com/x', events: ['shipment.created'], secret: 'abc\udfffdef' } }), 'secret');
    });

    it('a required text that would print nothing (only spaces, a zero-width space, a BOM) is 400 naming the field', async () => {
      const cases: [object, string][] = [
        [{ ...sampleShipment, messages: ['   '] }, 'messages[0]'],
        [{ ...sampleShipment, messages: ['Fragile', '\u200b'] }, 'messages[1]'],
        [{ ...sampleShipment, to: { ...sampleShipment.to, name: '\ufeff ' } }, 'to.name'],
        [{ ...sampleShipment, customs: { ...sampleShipment.customs, signer: ' ' } }, 'customs.signer'],
        [{ ...sampleShipment, to: { ...sampleShipment.to, name: '\u00ad\ufe0f\u0301' } }, 'to.name'],
      ];
      for (const [payload, field] of cases) {
        const res = await t.request({ method: 'POST', url: '/v1/shipments', payload });
        assertInvalid(res, field);
        assert.equal(res.json().message, `${field} must hold a printable character, not only spaces or invisible ones`);
      }
      // Spaces around a printable text, and text in any script, are fine.
      assert.equal((await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, messages: [' Fragile ', '東京都'] } })).statusCode, 201);
    });

    it('names every bad string and every problem the schema finds in the same 400, and stores nothing', async () => {
      const before = (await t.request({ method: 'GET', url: '/v1/shipments?limit=100' })).json().length;
      const { carrier: _carrier, ...noCarrier } = sampleShipment;
      const res = await t.request({
        method: 'POST',
        url: '/v1/shipments',
        payload: { ...noCarrier, from: { ...sampleShipment.from, name: 'A\u0007' }, parcel: { ...sampleShipment.parcel, weight: { value: 1, unit: 'st' } }, messages: ['x'.repeat(36), 'a\u0007'] },
      });
      assert.equal(res.statusCode, 400, res.body);
      const fields = res.json().details.map((d: { field: string }) => d.field);
      for (const field of ['from.name', 'messages[1]', 'carrier', 'parcel.weight.unit', 'messages[0]']) assert.ok(fields.includes(field), `${field} in ${res.body}`);
      assert.equal(new Set(fields).size, fields.length, res.body);
      assert.equal(res.json().message, 'from.name must not contain control characters');
      assert.equal((await t.request({ method: 'GET', url: '/v1/shipments?limit=100' })).json().length, before);
      // The schema is checked on what the route's own hooks made of the request, as it would be:
      // a return's absent body is {}, stamp ids are split at commas, a `+` sent as a space is put back.
      const id = '0195f3a0-7c4e-7d2a-9b1e-3f5a6c7d8e9f';
      for (const [method, url, field] of [
        ['POST', '/v1/shipments/%07/returns', 'id'],
        ['PUT', `/v1/stamps/%07/invalid?ids=${id},${id}`, 'id'],
        ['GET', '/v1/labels/lbl_%07/trackingnumber?events_since=2026-01-01T10:00:00+02:00', 'id'],
      ] as const) {
        const only = await t.request({ method, url });
        assert.equal(only.statusCode, 400, only.body);
        assert.deepEqual(only.json().details.map((d: { field: string }) => d.field), [field], `${method} ${url}: ${only.body}`);
      }
    });

    it('names at most 100 problems, every bad string first', async () => {
      const addresses = Array.from({ length: 150 }, (_, i) => ({ ...sampleShipment.to, name: `A\u0007${i}` }));
      const res = await t.request({ method: 'POST', url: '/v1/addresses/validate', payload: { addresses } });
      assert.equal(res.statusCode, 400);
      const fields = res.json().details.map((d: { field: string }) => d.field);
      assert.equal(fields.length, 100);
      assert.deepEqual(fields.slice(0, 3), ['addresses[0].name', 'addresses[1].name', 'addresses[2].name']);
    });

    it('and in a key of a JSON object', async () => {
      const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, 'x\u0001': 1 } });
      assert.equal(res.statusCode, 400);
    });
  });

  describe('a body is taken as sent', () => {
    it('a Content-Encoding is 415, not parsed as if it were absent; JSON in another charset than UTF-8 is 415', async () => {
      const body = JSON.stringify(sampleShipment);
      const gzip = await t.request({ method: 'POST', url: '/v1/shipments', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, payload: body });
      assert.equal(gzip.statusCode, 415, gzip.body);
      assert.equal(gzip.json().message, 'Content-Encoding gzip is not supported; send the body unencoded');
      const latin1 = await t.request({ method: 'POST', url: '/v1/shipments', headers: { 'content-type': 'application/json; charset=latin1' }, payload: body });
      assert.equal(latin1.statusCode, 415, latin1.body);
      assert.equal(latin1.json().message, 'charset latin1 is not supported; send JSON in UTF-8');
      for (const type of ['application/json; charset=utf-8', 'application/json; charset="UTF-8"', 'application/json']) {
        assert.equal((await t.request({ method: 'POST', url: '/v1/shipments', headers: { 'content-type': type, 'content-encoding': 'identity' }, payload: body })).statusCode, 201, type);
      }
    });
  });

  describe('methods', () => {
    it('a method a path does not take is 404 NOT_FOUND (§9: an unknown route) with Allow naming the methods it takes; an unknown path is 404 without', async () => {
      const res = await t.request({ method: 'DELETE', url: '/v1/shipments' });
      assert.equal(res.statusCode, 404);
      assert.equal(res.headers.allow, 'GET, HEAD, POST');
      assert.equal(res.json().code, 'NOT_FOUND');
      assert.match(res.json().message, /DELETE \/v1\/shipments not found; \/v1\/shipments takes GET, HEAD, POST/);
      const item = await t.request({ method: 'PUT', url: '/v1/shipments/01936f5e-8a2b-7c3d-9e4f-5a6b7c8d9e0f' });
      assert.equal(item.statusCode, 404);
      assert.equal(item.headers.allow, 'GET, HEAD');
      const unknown = await t.request({ method: 'GET', url: '/v1/nothing-here' });
      assert.equal(unknown.statusCode, 404);
      assert.equal(unknown.headers.allow, undefined);
    });
  });

  describe('e-mail addresses: the document states what is taken', () => {
    it('the service takes exactly what EMAIL_PATTERN matches', async () => {
      const pattern = new RegExp(EMAIL_PATTERN);
      for (const email of ['ada@example.org', 'a.b+c@x-y.co.uk', 'a@localhost', '0@com', 'a@-x.com', 'a b@x.com', 'ü@example.org']) {
        const res = await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, to: { ...sampleShipment.to, email } } });
        assert.equal(res.statusCode, pattern.test(email) ? 201 : 400, email);
      }
    });
  });

  describe('unknown query parameters are refused everywhere, downloads included', () => {
    it('a download link with a parameter added is 400', async () => {
      const shipment = await createShipment(t);
      const label = (await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: shipment.id, format: 'ZPL' } })).json();
      const url = new URL(label.url);
      assert.equal((await t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` })).statusCode, 200);
      assertInvalid(await t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}&utm_source=mail` }), 'utm_source');
      assertInvalid(await t.request({ method: 'GET', url: `/v1/labels/${label.id}?format=PDF&x=1` }), 'x');
    });
  });
});

describe('the document declares what the service does', () => {
  const t = withTestApp();
  let doc: Record<string, any>;
  const op = (method: string, path: string) => doc.paths[path][method];

  it('Idempotency-Key on every authenticated POST, Idempotent-Replayed on its 2xx answers', async () => {
    doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    let posts = 0;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      const post = item.post;
      if (!post || post.security?.length === 0) continue;
      posts++;
      assert.ok(post.parameters?.some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'idempotency-key'), `POST ${path}`);
      for (const [status, response] of Object.entries(post.responses as Record<string, any>)) {
        if (status.startsWith('2')) assert.ok(response.headers?.['idempotent-replayed'], `POST ${path} ${status}`);
      }
    }
    assert.ok(posts >= 7, `${posts} authenticated POSTs`);
  });

  it('a body that is not JSON gets a status every bodied operation declares (400)', async () => {
    let checked = 0;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const method of ['post', 'put', 'patch', 'delete']) {
        const operation = item[method];
        if (!operation || operation.security?.length === 0) continue;
        const url = path.replace(/\{[^}]+\}/g, () => crypto.randomUUID());
        const res = await t.app.inject({ method: method.toUpperCase() as 'POST', url, headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' }, payload: '{' });
        assert.equal(res.statusCode, 400, `${method.toUpperCase()} ${path}: ${res.body}`);
        assert.ok(operation.responses['400'], `${method.toUpperCase()} ${path} declares 400`);
        checked++;
      }
    }
    assert.ok(checked >= 15, `${checked} operations`);
  });

  it('every GET has its HEAD: the same answers and headers, no body, an operation id of its own', async () => {
    let gets = 0;
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      if (!item.get) continue;
      gets++;
      const head = item.head;
      assert.ok(head, `HEAD ${path}`);
      assert.equal(head.operationId, `${item.get.operationId}Head`);
      assert.deepEqual(Object.keys(head.responses).sort(), Object.keys(item.get.responses).sort(), path);
      for (const [status, response] of Object.entries(head.responses as Record<string, any>)) {
        assert.equal(response.content, undefined, `HEAD ${path} ${status} has no body`);
        assert.deepEqual(Object.keys(response.headers ?? {}).sort(), Object.keys(item.get.responses[status].headers ?? {}).sort(), `HEAD ${path} ${status}`);
      }
    }
    assert.ok(gets >= 15, `${gets} GETs`);
    const res = await t.app.inject({ method: 'HEAD', url: '/v1/shipments', headers: { 'x-api-key': t.apiKey } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '');
    assert.ok(res.headers['x-request-id'], 'the headers the document declares');
  });

  it('each carrier\'s services', () => {
    const body = op('post', '/v1/shipments').requestBody.content['application/json'].schema;
    assert.deepEqual(body.properties.service['x-services-by-carrier'].UPS, ['ground', '3_day_select', '2nd_day_air', 'next_day_air', 'worldwide_saver', 'worldwide_expedited', 'return', 'worldwide_return']);
    assert.ok(body.properties.service.enum.includes('priority_mail'));
    assert.match(body.properties.service.description, /USPS: ground_advantage, priority_mail, priority_mail_express, ground_advantage_return/);
  });

  it('Link on lists, WWW-Authenticate on 401, ETag on downloads, x-request-id on every answer', () => {
    assert.ok(op('get', '/v1/shipments').responses['200'].headers.link);
    assert.ok(op('get', '/v1/webhooks').responses['200'].headers.link);
    assert.ok(op('get', '/v1/shipments/{id}').responses['401'].headers['www-authenticate']);
    assert.ok(op('get', '/v1/downloads/labels/{id}').responses['200'].headers.etag);
    assert.ok(op('get', '/v1/downloads/stamps/{id}').responses['304'].headers.etag);
    for (const item of Object.values(doc.paths as Record<string, Record<string, any>>)) {
      for (const operation of Object.values(item)) {
        for (const response of Object.values(operation.responses as Record<string, any>)) assert.ok(response.headers?.['x-request-id'], operation.operationId);
      }
    }
  });

  it('/v1/openapi.json and /v1/docs are in it', () => {
    assert.equal(op('get', '/v1/openapi.json').operationId, 'getOpenApiDocument');
    assert.equal(op('get', '/v1/docs').operationId, 'getApiReference');
  });

  it('the e-mail of an address is a pattern, not a format', () => {
    const email = doc.components.schemas.Address.properties.email;
    assert.equal(email.format, undefined);
    assert.equal(email.pattern, EMAIL_PATTERN);
  });
});

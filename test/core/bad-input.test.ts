// Bad input: random JSON, strings and bytes never reach a 5xx, always get the error shape,
// and change nothing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { countRows, forEachDatabase, sampleShipment, startTestApp, type TestApp } from '../helpers.ts';
import { FORM } from './support.ts';

const RUNS = 80;

const contentTypes = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x', '', 'application/octet-stream', 'application/merge-patch+json');

/** A sample shipment with one field, somewhere, replaced by an arbitrary JSON value (or removed). */
const mutatedShipment = fc
  .tuple(
    fc.constantFrom<(string | null)[]>(['carrier'], ['service'], ['from'], ['to', 'name'], ['to', 'country'], ['to', 'postalCode'], ['from', 'email'], ['parcel'], ['parcel', 'weight'], ['parcel', 'weight', 'value'], ['parcel', 'weight', 'unit'], ['parcel', 'length'], ['reference'], ['extra'], ['to', 'extra']),
    fc.option(fc.jsonValue({ maxDepth: 3 }), { nil: undefined }),
  )
  .map(([path, value]) => {
    const copy = structuredClone(sampleShipment) as Record<string, any>;
    let node = copy;
    for (const key of path.slice(0, -1)) node = node[key!];
    if (value === undefined) delete node[path.at(-1)!];
    else node[path.at(-1)!] = value;
    return copy;
  });

function assertErrorShape(res: { statusCode: number; body: string; json(): any }, where: string): void {
  assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${where}: ${res.statusCode} ${res.body}`);
  const body = res.json();
  assert.equal(typeof body.code, 'string', res.body);
  assert.equal(typeof body.message, 'string', res.body);
  assert.doesNotMatch(res.body, /\bat .*\.ts:\d+|node_modules|SELECT |INSERT /i, 'no stack traces or SQL');
}

forEachDatabase((database) => {
  let t: TestApp;
  const rows = async () => ({ shipments: await countRows(t.ctx, 'shipments'), events: await countRows(t.ctx, 'domain_events'), keys: await countRows(t.ctx, 'idempotency_keys') });
  before(async () => {
    t = await startTestApp(database);
  });
  after(async () => t.close());

  describe('POST /v1/shipments with random input', () => {
    it('random JSON: 4xx {code, message}, no row written', async () => {
      const before = await rows();
      await fc.assert(
        fc.asyncProperty(fc.jsonValue(), async (value) => {
          const res = await t.request({ method: 'POST', url: '/v1/shipments', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(value) });
          assertErrorShape(res, JSON.stringify(value).slice(0, 200));
        }),
        { numRuns: RUNS },
      );
      assert.deepEqual(await rows(), before);
    });

    it('random strings and bytes under random content types: 4xx {code, message}, no row written', async () => {
      const before = await rows();
      await fc.assert(
        fc.asyncProperty(fc.oneof(fc.string({ unit: 'binary' }), fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a))), contentTypes, async (payload, type) => {
          const headers: Record<string, string> = type ? { 'content-type': type } : {};
          const res = await t.request({ method: 'POST', url: '/v1/shipments', headers, payload });
          assertErrorShape(res, `${type} ${JSON.stringify(String(payload)).slice(0, 200)}`);
        }),
        { numRuns: RUNS },
      );
      assert.deepEqual(await rows(), before);
    });

    it('a valid shipment with one field replaced by random JSON: 4xx and nothing written, or 201 and exactly one shipment and one event', async () => {
      await fc.assert(
        fc.asyncProperty(mutatedShipment, fc.boolean(), async (body, withKey) => {
          const before = await rows();
          const headers: Record<string, string> = withKey ? { 'idempotency-key': `k-${Math.random()}` } : {};
          const res = await t.request({ method: 'POST', url: '/v1/shipments', headers, payload: body });
          const after = await rows();
          if (res.statusCode === 201) {
            assert.equal(after.shipments, before.shipments + 1);
            assert.equal(after.events, before.events + 1);
          } else {
            assertErrorShape(res, JSON.stringify(body).slice(0, 300));
            assert.equal(after.shipments, before.shipments);
            assert.equal(after.events, before.events);
            // A 4xx from the handler is remembered under its Idempotency-Key to be replayed (docs/authentication.md).
            assert.ok(after.keys - before.keys <= (withKey ? 1 : 0));
          }
        }),
        { numRuns: RUNS },
      );
    });
  });

  describe('GET /v1/shipments with random query strings', () => {
    it('200 with an array, or 4xx {code, message}', async () => {
      const param = fc.oneof(fc.constantFrom('limit', 'cursor', 'limit[]', '__proto__', 'constructor'), fc.string({ maxLength: 10 }));
      const query = fc.array(fc.tuple(param, fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), fc.integer().map(String), fc.constant(''))), { maxLength: 4 });
      await fc.assert(
        fc.asyncProperty(query, fc.boolean(), async (pairs, raw) => {
          const qs = raw ? pairs.map(([k, v]) => `${k}=${v}`).join('&') : new URLSearchParams(pairs).toString();
          const res = await t.request({ method: 'GET', url: `/v1/shipments?${qs}` });
          if (res.statusCode === 200) assert.ok(Array.isArray(res.json()));
          else assertErrorShape(res, qs);
        }),
        { numRuns: RUNS },
      );
    });

    it('a body with a __proto__ or constructor.prototype key: 400 saying so, not "not valid JSON", and nothing written', async () => {
      for (const payload of ['{"__proto__": {"admin": true}}', '{"carrier": "UPS", "from": {"constructor": {"prototype": {}}}}']) {
        const res = await t.request({ method: 'POST', url: '/v1/shipments', headers: { 'content-type': 'application/json' }, payload });
        assert.equal(res.statusCode, 400, res.body);
        assert.deepEqual(res.json(), { code: 'INVALID_INPUT', message: 'malformed request: a key named __proto__, or constructor holding prototype, is not accepted in a body' });
      }
    });

    it('a number in the query is plain decimal: hexadecimal, binary, exponents and spaces are 400 naming it', async () => {
      for (const limit of ['0x10', '0b11', '0o5', '1e1', '%202', '2%20', '+5', '5.0', '']) {
        const res = await t.request({ method: 'GET', url: `/v1/shipments?limit=${limit}` });
        assert.equal(res.statusCode, 400, `limit=${limit}: ${res.body}`);
        assert.match(res.json().message, /limit/);
      }
      for (const [url, name] of [['/v1/labels?limit=1e1', 'limit'], ['/v1/webhooks?limit=0x2', 'limit']]) {
        const res = await t.request({ method: 'GET', url: url! });
        assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
        assert.match(res.json().message, new RegExp(name!));
      }
      const ok = await t.request({ method: 'GET', url: '/v1/shipments?limit=007' });
      assert.equal(ok.statusCode, 200, ok.body);
    });

    it('random path segments after /v1/shipments/, encoded or raw, short or long: 4xx {code, message}', async () => {
      const segment = fc.oneof(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }).map(encodeURIComponent),
        fc.string({ unit: 'binary', minLength: 1, maxLength: 60 }).map(encodeURIComponent).map((s) => s.repeat(5)),
        fc.stringMatching(/^[A-Za-z0-9%._~-]{1,40}$/),
      ).filter((s) => !/^\.+$/.test(s)); // `.` and `..` are path navigation, not an id
      await fc.assert(
        fc.asyncProperty(segment, async (s) => {
          const res = await t.request({ method: 'GET', url: `/v1/shipments/${s}` });
          assertErrorShape(res, s);
          assert.ok(res.headers['x-request-id']);
        }),
        { numRuns: RUNS },
      );
      for (const s of ['%zz', '%', 'a'.repeat(500), '%E0%A4%A']) {
        const res = await t.request({ method: 'GET', url: `/v1/shipments/${s}` });
        assert.equal(res.statusCode, 400, `${s}: ${res.body}`);
        assert.equal(res.json().code, 'INVALID_INPUT');
      }
    });
  });

  describe('POST /oauth/token with random input', () => {
    const OAUTH_ERRORS = ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope'];
    function assertOAuthErrorOrToken(res: { statusCode: number; body: string; json(): any }, where: string): void {
      assert.ok(res.statusCode < 500, `${where}: ${res.statusCode} ${res.body}`);
      const body = res.json();
      if (res.statusCode === 200) {
        assert.equal(typeof body.access_token, 'string');
        return;
      }
      assert.ok([400, 401].includes(res.statusCode), `${where}: ${res.statusCode}`);
      assert.ok(OAUTH_ERRORS.includes(body.error), `${where}: ${res.body}`);
      assert.equal(typeof body.error_description, 'string');
    }

    it('random JSON bodies: 400 invalid_request', async () => {
      await fc.assert(
        fc.asyncProperty(fc.jsonValue(), async (value) => {
          const res = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(value) });
          assertOAuthErrorOrToken(res, JSON.stringify(value).slice(0, 200));
          assert.equal(res.statusCode, 400);
        }),
        { numRuns: RUNS },
      );
    });

    it('random forms, some with real credentials, random Basic headers and raw bytes: a token or an RFC 6749 error, never a 5xx', async () => {
      const client = await t.newClient(t.accountId, ['read:shipments', 'write:labels']);
      const before = { clients: await countRows(t.ctx, 'oauth_clients'), keys: await countRows(t.ctx, 'signing_keys') };
      const name = fc.constantFrom('grant_type', 'client_id', 'client_secret', 'scope', 'code', 'redirect_uri', 'refresh_token', 'code_verifier', '__proto__', 'constructor', 'x');
      const value = fc.oneof(
        fc.constantFrom('client_credentials', client.clientId, client.clientSecret, 'read:shipments', 'shipments:read labels:write', 'write:stamps', '', ' '),
        fc.string({ unit: 'binary', maxLength: 40 }),
      );
      const body = fc.oneof(
        fc.array(fc.tuple(name, value), { maxLength: 6 }).map((pairs) => new URLSearchParams(pairs).toString()),
        fc.string({ unit: 'binary', maxLength: 200 }),
        fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
      );
      const authorization = fc.option(
        fc.oneof(
          fc.constant(`Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`),
          fc.string({ maxLength: 40 }).map((s) => `Basic ${Buffer.from(s).toString('base64')}`),
          fc.string({ maxLength: 40 }).map((s) => `Basic ${s}`),
          fc.string({ maxLength: 40 }).map((s) => `Bearer ${s}`),
        ),
        { nil: undefined },
      );
      await fc.assert(
        fc.asyncProperty(body, authorization, fc.constantFrom(FORM, `${FORM}; charset=utf-8`, 'text/plain', 'application/json', ''), async (payload, auth, type) => {
          const headers: Record<string, string> = {};
          if (type) headers['content-type'] = type;
          if (auth) headers.authorization = auth.replace(/[^\x20-\x7e]/g, '');
          const res = await t.app.inject({ method: 'POST', url: '/oauth/token', headers, payload });
          assertOAuthErrorOrToken(res, `${type} ${auth} ${String(payload).slice(0, 200)}`);
        }),
        { numRuns: RUNS * 2 },
      );
      assert.deepEqual({ clients: await countRows(t.ctx, 'oauth_clients'), keys: await countRows(t.ctx, 'signing_keys') }, before);
    });
  });
});

// Property-based conformance, on both databases: for every operation of the live OpenAPI document,
// requests generated from its own schemas (valid ones and ones broken in one place; fast-check,
// seeded) go to the running service, and every answer must be declared for that operation, match its
// schema, and never be a 5xx. The OAuth token endpoint and the authorization pages (forms and HTML for
// a browser, with CSRF tokens and cookies a generator cannot make) are driven by the hand-written cases
// of test/oauth/ and test/core/token-endpoint.test.ts instead.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import fc from 'fast-check';
import { createShipment, forEachDatabase, withTestApp } from '../helpers.ts';
import { broken, changedAt, stringLeaves, valid } from './schema-arbitrary.ts';
import { Conformance } from './support.ts';

const BY_HAND = new Set(['/oauth/token', '/oauth/authorize', '/oauth/authorize/sign-in', '/oauth/authorize/consent']);
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const RUNS = Number(process.env.CONFORMANCE_RUNS ?? 30);
const SEED = 20261124;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required?: boolean;
  schema: Record<string, any>;
}

interface GeneratedRequest {
  path: Record<string, string>;
  query: Record<string, unknown>;
  body?: unknown;
}

function queryString(query: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    for (const item of Array.isArray(v) ? v : [v]) if (item !== undefined) q.append(k, typeof item === 'object' ? JSON.stringify(item) : String(item));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

forEachDatabase((database) => {
  describe('every operation answers generated requests as its document says', () => {
    const t = withTestApp(database, { SANDBOX_TRACKING: '0' });
    let doc: Record<string, any>;
    let conformance: Conformance;
    /** Ids of things that exist, so generated requests reach past the 404s too. */
    const real: string[] = [];

    before(async () => {
      doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
      conformance = new Conformance(doc);
      const shipment = await createShipment(t);
      real.push(shipment.id, (await createShipment(t)).id);
      real.push((await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: shipment.id, format: 'ZPL' } })).json().id);
      real.push((await t.request({ method: 'POST', url: '/v1/stamps', payload: { shipmentId: real[1], format: 'PDF' } })).json().id);
      real.push((await t.request({ method: 'POST', url: '/v1/webhooks', payload: { url: 'http://127.0.0.1:9/hook', events: ['shipment.created'] } })).json().id);
      assert.ok(real.every((id) => typeof id === 'string'));
    });

    it('valid and broken requests, every operation: declared answers matching their schemas, no 5xx', async () => {
      let operations = 0;
      let requests = 0;
      const statuses = new Map<string, Set<number>>();
      for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
        if (BY_HAND.has(path)) continue;
        for (const [method, op] of Object.entries(item)) {
          if (!METHODS.includes(method)) continue;
          operations++;
          const params: Parameter[] = op.parameters ?? [];
          const pathParams = params.filter((p) => p.in === 'path');
          const queryParams = params.filter((p) => p.in === 'query');
          const media = op.requestBody?.content?.['application/json'];
          const bodySchema = media?.schema;
          // The document's own example is a valid body too, and one that gets past the rules a schema cannot state.
          const validBody = bodySchema && (media.example !== undefined ? fc.oneof(fc.constant(media.example), valid(bodySchema, doc)) : valid(bodySchema, doc));
          const querySchema = {
            type: 'object',
            properties: Object.fromEntries(queryParams.map((p) => [p.name, p.schema])),
            required: queryParams.filter((p) => p.required).map((p) => p.name),
          };
          const request: fc.Arbitrary<GeneratedRequest> = fc.record({
            path: fc.record(Object.fromEntries(pathParams.map((p) => [p.name, fc.oneof(fc.constantFrom(...real), valid(p.schema, doc).map(String))]))) as fc.Arbitrary<Record<string, string>>,
            query: fc.oneof({ weight: 3, arbitrary: valid(querySchema, doc) }, { weight: 1, arbitrary: broken(querySchema, doc) }) as fc.Arbitrary<Record<string, unknown>>,
            ...(bodySchema ? { body: fc.oneof({ weight: 3, arbitrary: validBody }, { weight: 2, arbitrary: broken(bodySchema, doc) }) } : {}),
          });
          const seen = new Set<number>();
          statuses.set(`${method.toUpperCase()} ${path}`, seen);
          await fc.assert(
            fc.asyncProperty(request, async (r) => {
              const url = path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(r.path[name] ?? '')) + queryString(r.query ?? {});
              const res = await t.app.inject({
                method: method.toUpperCase() as 'GET',
                url,
                headers: { 'x-api-key': t.apiKey, ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}) },
                ...(r.body !== undefined ? { payload: JSON.stringify(r.body) } : {}),
              });
              requests++;
              seen.add(res.statusCode);
              assert.ok(res.statusCode < 500, `${method.toUpperCase()} ${url} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
              conformance.check(method.toUpperCase(), path, res);
            }),
            { numRuns: RUNS, seed: SEED, endOnFailure: true },
          );
        }
      }
      if (process.env.CONFORMANCE_VERBOSE) console.log(requests, [...statuses].map(([k, s]) => `${k}: ${[...s].sort().join(",")}`).join("\n"));
      assert.ok(operations >= 25, `${operations} operations`);
      assert.ok(requests >= operations * RUNS);
      // The generator reaches past validation: some operations answered a success to generated input.
      const succeeded = [...statuses].filter(([, s]) => [...s].some((code) => code < 300));
      assert.ok(succeeded.length >= 10, `operations with a 2xx: ${succeeded.map(([k]) => k).join(', ')}`);
      const refused = [...statuses].filter(([, s]) => s.has(400));
      assert.ok(refused.length >= 15, `operations with a 400: ${refused.length}`);
    });

    it('a NUL in any string of a request, however deep, is 400 (in an indicium to verify: not genuine) and never reaches the database', async () => {
      let checked = 0;
      for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
        if (BY_HAND.has(path)) continue;
        for (const [method, op] of Object.entries(item)) {
          if (!METHODS.includes(method)) continue;
          // An indicium is text a scanner sends: one holding a NUL is no stamp's, 200 not genuine (docs/stamps.md), and reaches no database either.
          const expected = path === '/v1/stamps/verify' ? 200 : 400;
          const send = async (url: string, body?: unknown) => {
            const res = await t.app.inject({
              method: method.toUpperCase() as 'GET',
              url,
              headers: { 'x-api-key': t.apiKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
              ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
            });
            assert.equal(res.statusCode, expected, `${method.toUpperCase()} ${url} ${JSON.stringify(body)?.slice(0, 200)} answered ${res.statusCode}: ${res.body.slice(0, 200)}`);
            if (expected === 200) assert.equal(res.json().genuine, false);
            conformance.check(method.toUpperCase(), path, res);
            checked++;
          };
          const base = path.replace(/\{(\w+)\}/g, () => real[0]!);
          const example = op.requestBody?.content?.['application/json']?.example;
          if (example !== undefined) {
            for (const leaf of stringLeaves(example)) await send(base, changedAt(example, leaf, (s) => `${s}\u0000`));
          }
          for (const p of (op.parameters ?? []) as { in: string; name: string }[]) {
            if (p.in === 'query') await send(`${base}?${p.name}=a%00`, example);
            if (p.in === 'path') await send(path.replace(/\{(\w+)\}/g, (_m, name: string) => (name === p.name ? '%00' : real[0]!)), example);
          }
        }
      }
      assert.ok(checked >= 60, `${checked} requests`);
    });
  });
});

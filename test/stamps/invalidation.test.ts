import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fakeClock, forEachDatabase, withTestApp } from '../helpers.ts';
import { createStamp } from './support.ts';

const UNKNOWN = '01890000-0000-7000-8000-00000000abcd';

forEachDatabase((database) => {
  const t = withTestApp(database);

  const stamps = async (n: number) => Promise.all(Array.from({ length: n }, () => createStamp(t)));
  const statuses = async (ids: string[]) => {
    const rows = await t.ctx.db.selectFrom('stamps').select(['id', 'status', 'invalidated_at']).where('id', 'in', ids).execute();
    return ids.map((id) => rows.find((r) => r.id === id)!.status);
  };
  const put = (path: string, apiKey?: string) => t.app.inject({ method: 'PUT', url: path, headers: { 'x-api-key': apiKey ?? t.apiKey } });

  describe('PUT /v1/stamps/{id}/invalid?ids=…', () => {
    it('invalidates the path id together with every id in ids (comma-joined) and answers 204 with no body', async () => {
      const [a, b, c, d] = await stamps(4);
      const res = await put(`/v1/stamps/${a!.id}/invalid?ids=${b!.id},${c!.id}`);
      assert.equal(res.statusCode, 204);
      assert.equal(res.body, '');
      assert.deepEqual(await statuses([a!.id, b!.id, c!.id, d!.id]), ['invalidated', 'invalidated', 'invalidated', 'active']);
      const row = await t.ctx.db.selectFrom('stamps').select('invalidated_at').where('id', '=', a!.id).executeTakeFirstOrThrow();
      assert.match(row.invalidated_at!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    });

    it('accepts commas percent-encoded, the path id repeated in ids, and stamps already invalidated (204 again)', async () => {
      const [a, b] = await stamps(2);
      assert.equal((await put(`/v1/stamps/${a!.id}/invalid?ids=${a!.id}%2C${b!.id}`)).statusCode, 204);
      assert.equal((await put(`/v1/stamps/${a!.id}/invalid?ids=${b!.id}`)).statusCode, 204);
      assert.deepEqual(await statuses([a!.id, b!.id]), ['invalidated', 'invalidated']);
    });

    it('keeps the first invalidation time when invalidated again', async (tc) => {
      const [a] = await stamps(1);
      await put(`/v1/stamps/${a!.id}/invalid?ids=${a!.id}`);
      const first = await t.ctx.db.selectFrom('stamps').select('invalidated_at').where('id', '=', a!.id).executeTakeFirstOrThrow();
      fakeClock(tc).tick(5);
      await put(`/v1/stamps/${a!.id}/invalid?ids=${a!.id}`);
      const second = await t.ctx.db.selectFrom('stamps').select('invalidated_at').where('id', '=', a!.id).executeTakeFirstOrThrow();
      assert.equal(second.invalidated_at, first.invalidated_at);
    });

    // Each with what its message says: the reason, not only the field.
    const badQueries: [string, (a: string, b: string) => string, RegExp][] = [
      ['ids missing', () => '', /ids/],
      ['ids empty', () => '?ids=', /^query parameter ids must not be empty$/],
      ['a value that is not a uuid', (_a, b) => `?ids=${b},not-a-uuid`, /ids\[1\]/],
      ['an empty value between commas', (_a, b) => `?ids=${b},,${b}`, /ids\[1\]/],
      ['a trailing comma', (_a, b) => `?ids=${b},`, /ids\[1\]/],
      ['more than 100 ids', (_a, b) => `?ids=${Array(101).fill(b).join(',')}`, /^query parameter ids must have at most 100 items$/],
      ['ids given twice', (_a, b) => `?ids=${b}&ids=${b}`, /^ids must be given once/],
      ['an unknown query parameter', (_a, b) => `?ids=${b}&force=1`, /force/],
    ];
    for (const [name, query, message] of badQueries) {
      it(`answers 400 INVALID_INPUT for ${name}, and invalidates nothing`, async () => {
        const [a, b] = await stamps(2);
        const res = await put(`/v1/stamps/${a!.id}/invalid${query(a!.id, b!.id)}`);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(res.json().code, 'INVALID_INPUT');
        assert.match(res.json().message, message);
        assert.deepEqual(await statuses([a!.id, b!.id]), ['active', 'active']);
      });
    }

    it('answers 400 for a path id that is not a uuid', async () => {
      const [a] = await stamps(1);
      const res = await put(`/v1/stamps/nope/invalid?ids=${a!.id}`);
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().code, 'INVALID_INPUT');
    });

    it('answers 404 NOT_FOUND naming an unknown id in ids, and invalidates none of the others', async () => {
      const [a, b, c] = await stamps(3);
      const res = await put(`/v1/stamps/${a!.id}/invalid?ids=${b!.id},${UNKNOWN},${c!.id}`);
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { code: 'NOT_FOUND', message: `stamp ${UNKNOWN} not found` });
      assert.deepEqual(await statuses([a!.id, b!.id, c!.id]), ['active', 'active', 'active']);
    });

    it('answers 404 naming an unknown path id, and invalidates none of ids', async () => {
      const [a] = await stamps(1);
      const res = await put(`/v1/stamps/${UNKNOWN}/invalid?ids=${a!.id}`);
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { code: 'NOT_FOUND', message: `stamp ${UNKNOWN} not found` });
      assert.deepEqual(await statuses([a!.id]), ['active']);
    });

    it('treats another account\'s stamp exactly like an unknown one: 404 and nothing invalidated on either side', async () => {
      const [mine] = await stamps(1);
      const other = await t.newAccount();
      const theirs = await createStamp(t, {}, other.apiKey);
      const res = await put(`/v1/stamps/${mine!.id}/invalid?ids=${theirs.id}`);
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { code: 'NOT_FOUND', message: `stamp ${theirs.id} not found` });
      assert.deepEqual(await statuses([mine!.id, theirs.id]), ['active', 'active']);
    });

    it('refuses ids repeated as separate parameters (ids=a&ids=b), which the spec rules out, naming ids and invalidating nothing', async () => {
      const [a, b, c] = await stamps(3);
      const res = await put(`/v1/stamps/${a!.id}/invalid?ids=${b!.id}&ids=${c!.id}`);
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().code, 'INVALID_INPUT');
      assert.equal(res.json().details[0].field, 'ids');
      assert.deepEqual(await statuses([a!.id, b!.id, c!.id]), ['active', 'active', 'active']);
      assert.equal((await put(`/v1/stamps/${a!.id}/invalid?ids=${b!.id},${c!.id}`)).statusCode, 204);
    });

    it('is described in the OpenAPI document as an array of uuids in form style without explode', async () => {
      const doc = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
      const ids = doc.paths['/v1/stamps/{id}/invalid'].put.parameters.find((p: { name: string }) => p.name === 'ids');
      assert.equal(ids.in, 'query');
      assert.equal(ids.required, true);
      assert.equal(ids.style, 'form');
      assert.equal(ids.explode, false);
      assert.equal(ids.schema.type, 'array');
      assert.equal(ids.schema.items.format, 'uuid');
    });

    it('needs write:stamps', async () => {
      const [a] = await stamps(1);
      const reader = await t.newAccount(['read:stamps']);
      const res = await put(`/v1/stamps/${a!.id}/invalid?ids=${a!.id}`, reader.apiKey);
      assert.equal(res.statusCode, 403);
      assert.match(res.json().message, /write:stamps/);
    });

    it('runs two overlapping batches at the same time: both 204, every stamp invalidated, no error', async () => {
      for (let round = 0; round < 4; round++) {
        const s = await stamps(7);
        const ids = s.map((x) => x.id);
        // A = 0..4 and B = 2..6 share 2, 3, 4; B lists them in the opposite order.
        const a = put(`/v1/stamps/${ids[0]}/invalid?ids=${ids.slice(1, 5).join(',')}`);
        const b = put(`/v1/stamps/${ids[6]}/invalid?ids=${ids.slice(2, 6).reverse().join(',')}`);
        const [ra, rb] = await Promise.all([a, b]);
        assert.equal(ra.statusCode, 204, ra.body);
        assert.equal(rb.statusCode, 204, rb.body);
        assert.deepEqual(await statuses(ids), Array(7).fill('invalidated'));
      }
    });

    it('runs an overlapping batch with an unknown id beside a good one: the good one wins alone', async () => {
      const s = await stamps(4);
      const ids = s.map((x) => x.id);
      const [good, bad] = await Promise.all([
        put(`/v1/stamps/${ids[0]}/invalid?ids=${ids[1]}`),
        put(`/v1/stamps/${ids[1]}/invalid?ids=${ids[2]},${ids[3]},${UNKNOWN}`),
      ]);
      assert.equal(good.statusCode, 204);
      assert.equal(bad.statusCode, 404);
      assert.deepEqual(await statuses(ids), ['invalidated', 'invalidated', 'active', 'active']);
    });
  });
});

// §15's dashboard sign-in: the session cookie, CSRF tokens bound to the session, sign-out, the sign-in
// limits shared with the consent page, and pages that never show another account's data.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { countRows, forEachDatabase, sampleShipment, startTestApp, type TestApp } from '../helpers.ts';
import { createUser, disableUser } from '../../src/oauth/users.ts';
import { MAX_FAILURES_PER_EMAIL } from '../../src/oauth/service.ts';
import { purgeSessions } from '../../src/dashboard/service.ts';
import { csrfOf, noticeOf, PASSWORD, signedIn, visitor } from './support.ts';

forEachDatabase((database) => {
  describe('dashboard sessions', () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(database);
    });
    after(async () => t.close());

    describe('GET /dashboard/sign-in and POST /dashboard/sign-in', () => {
      it('serves the page with its security headers and a CSRF cookie scoped to /dashboard', async () => {
        const res = await visitor(t).get('/dashboard/sign-in');
        assert.equal(res.statusCode, 200);
        assert.match(String(res.headers['content-type']), /^text\/html; charset=utf-8/);
        assert.match(String(res.headers['content-security-policy']), /default-src 'none'; script-src 'self'; style-src 'self'/);
        assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
        assert.equal(res.headers['x-frame-options'], 'DENY');
        assert.equal(res.headers['cache-control'], 'no-store');
        const csrf = res.cookies.find((c) => c.name === 'dashboard_csrf')!;
        assert.equal(csrf.path, '/dashboard');
        assert.equal(csrf.httpOnly, true);
        assert.equal(csrf.sameSite, 'Lax');
        assert.match(res.body, /<label for="f-email">Email address<\/label><input type="email" id="f-email" name="email" required autocomplete="username"/);
      });

      it('opens a session: an HttpOnly, SameSite=Lax cookie on /dashboard (not Secure in development), then the page asked for', async () => {
        const email = `ann-${database.name}@example.com`;
        await createUser(t.ctx.db, t.accountId, email, PASSWORD);
        const v = visitor(t);
        const first = await v.get('/dashboard/shipments?status=created');
        assert.equal(first.statusCode, 303);
        assert.equal(first.headers.location, '/dashboard/sign-in?next=%2Fdashboard%2Fshipments%3Fstatus%3Dcreated');
        const res = await v.post('/dashboard/sign-in', { email: email.toUpperCase(), password: PASSWORD, next: '/dashboard/shipments?status=created' }, '/dashboard/sign-in');
        assert.equal(res.statusCode, 303);
        assert.equal(res.headers.location, '/dashboard/shipments?status=created');
        const session = res.cookies.find((c) => c.name === 'dashboard_session')!;
        assert.equal(session.httpOnly, true);
        assert.equal(session.sameSite, 'Lax');
        assert.equal(session.path, '/dashboard');
        assert.equal(session.secure, undefined);
        // Only the token's hash is stored.
        const rows = await t.ctx.db.selectFrom('dashboard_sessions').select('id').execute();
        assert.ok(rows.every((r) => r.id !== session.value && /^[0-9a-f]{64}$/.test(r.id)));
        assert.equal((await v.get('/dashboard/shipments')).statusCode, 200);
      });

      it('never sends the browser elsewhere after signing in', async () => {
        const email = `next-${database.name}@example.com`;
        await createUser(t.ctx.db, t.accountId, email, PASSWORD);
        for (const next of ['//evil.example/dashboard/x', 'https://evil.example/', '/v1/shipments', '/dashboard/\\evil', '/dashboard/../../evil', '/dashboard/%2e%2e/v1/shipments', '/dashboard/./../oauth/authorize']) {
          const v = visitor(t);
          const res = await v.post('/dashboard/sign-in', { email, password: PASSWORD, next }, '/dashboard/sign-in');
          assert.equal(res.headers.location, '/dashboard/shipments', next);
        }
        // A path inside the dashboard is returned to as the browser would resolve it.
        const v = visitor(t);
        const inside = await v.post('/dashboard/sign-in', { email, password: PASSWORD, next: '/dashboard/keys/../shipments?status=created' }, '/dashboard/sign-in');
        assert.equal(inside.headers.location, '/dashboard/shipments?status=created');
      });

      it('refuses a wrong password with the same message as an unknown email, 400, no session', async () => {
        const email = `bob-${database.name}@example.com`;
        await createUser(t.ctx.db, t.accountId, email, PASSWORD);
        for (const [e, p] of [[email, 'wrong password!'], [`nobody-${database.name}@example.com`, PASSWORD]] as const) {
          const v = visitor(t);
          const res = await v.post('/dashboard/sign-in', { email: e, password: p }, '/dashboard/sign-in');
          assert.equal(res.statusCode, 400);
          assert.match(res.body, /The email address or password is not correct\./);
          assert.ok(!v.cookies.has('dashboard_session'));
          assert.ok(!res.body.includes(p), 'the password is not echoed');
        }
      });

      it(`locks an email out after ${MAX_FAILURES_PER_EMAIL} failures: 429 with Retry-After, even with the right password`, async () => {
        const email = `carol-${database.name}@example.com`;
        await createUser(t.ctx.db, t.accountId, email, PASSWORD);
        const v = visitor(t);
        for (let i = 0; i < MAX_FAILURES_PER_EMAIL; i++) assert.equal((await v.post('/dashboard/sign-in', { email, password: `wrong ${i} password` }, '/dashboard/sign-in')).statusCode, 400);
        const res = await v.post('/dashboard/sign-in', { email, password: PASSWORD }, '/dashboard/sign-in');
        assert.equal(res.statusCode, 429);
        assert.ok(Number(res.headers['retry-after']) > 0);
        assert.match(res.body, /Too many failed sign-in attempts/);
        assert.ok(!v.cookies.has('dashboard_session'));
      });

      it('ends the session of a disabled user at the next request', async () => {
        const v = await signedIn(t);
        await disableUser(t.ctx.db, v.email);
        const res = await v.get('/dashboard/shipments');
        assert.equal(res.statusCode, 303);
        assert.match(String(res.headers.location), /^\/dashboard\/sign-in/);
      });
    });

    describe('purge-dashboard-sessions', () => {
      it('deletes expired sessions and keeps the others', async () => {
        const v = await signedIn(t);
        const user = await t.ctx.db.selectFrom('users').select(['id', 'account_id']).where('email', '=', v.email).executeTakeFirstOrThrow();
        await t.ctx.db.insertInto('dashboard_sessions').values({ id: 'f'.repeat(64), user_id: user.id, account_id: user.account_id, created_at: '2026-01-01T00:00:00.000Z', expires_at: '2026-01-01T12:00:00.000Z' }).execute();
        assert.ok((await purgeSessions(t.ctx)) >= 1);
        const left = await t.ctx.db.selectFrom('dashboard_sessions').select('id').where('user_id', '=', user.id).execute();
        assert.equal(left.length, 1, 'the live session stays');
        assert.equal((await v.get('/dashboard/shipments')).statusCode, 200);
      });
    });

    describe('CSRF', () => {
      it('refuses a form without its token, or with a token of another session, and changes nothing', async () => {
        const a = await signedIn(t);
        const b = await signedIn(t);
        const before = await countRows(t.ctx, 'api_keys');
        const none = await a.post('/dashboard/keys', { _csrf: '' });
        assert.equal(none.statusCode, 403);
        assert.match(none.body, /Form expired/);
        const foreign = await a.post('/dashboard/keys', { _csrf: await b.csrf('/dashboard/keys') });
        assert.equal(foreign.statusCode, 403);
        const signInToken = csrfOf((await visitor(t).get('/dashboard/sign-in')).body);
        assert.equal((await a.post('/dashboard/keys', { _csrf: signInToken })).statusCode, 403);
        assert.equal(await countRows(t.ctx, 'api_keys'), before);
        assert.equal((await a.post('/dashboard/keys', { name: 'Printer', scopes: 'read:shipments' }, '/dashboard/keys')).statusCode, 303, 'the page\'s own token works');
      });
    });

    describe('POST /dashboard/sign-out', () => {
      it('ends the session: the old cookie no longer opens a page', async () => {
        const v = await signedIn(t);
        const token = v.cookies.get('dashboard_session')!;
        const res = await v.post('/dashboard/sign-out', {}, '/dashboard/shipments');
        assert.equal(res.statusCode, 303);
        assert.match(String(res.headers.location), /^\/dashboard\/sign-in/);
        assert.ok(!v.cookies.has('dashboard_session'));
        const replay = await t.app.inject({ method: 'GET', url: '/dashboard/shipments', headers: { cookie: `dashboard_session=${token}` } });
        assert.equal(replay.statusCode, 303);
      });

      it('a form sent after the session ended does nothing, and signing in says so and leads back to its page', async () => {
        const v = await signedIn(t);
        const token = await v.csrf('/dashboard/shipments/new');
        const session = v.cookies.get('dashboard_session')!;
        await v.post('/dashboard/sign-out', {}, '/dashboard/shipments');
        const before = await countRows(t.ctx, 'shipments');
        const res = await t.app.inject({
          method: 'POST',
          url: '/dashboard/shipments/new',
          headers: { cookie: `dashboard_session=${session}`, referer: 'http://localhost/dashboard/shipments/new', 'content-type': 'application/x-www-form-urlencoded' },
          payload: new URLSearchParams({ _csrf: token, carrier: 'UPS' }).toString(),
        });
        assert.equal(res.statusCode, 303);
        assert.equal(res.headers.location, '/dashboard/sign-in?next=%2Fdashboard%2Fshipments%2Fnew');
        assert.match(noticeOf(res, true) ?? '', /^Your session had ended, so the form was not sent and nothing was done\. Sign in, then send it again\.$/);
        assert.equal(await countRows(t.ctx, 'shipments'), before);
        // From a confirmation page (which only a POST answers): back to the page it confirms for.
        for (const [from, next] of [['/dashboard/shipments/0190aaaa-0000-7000-8000-000000000001/invalidate', '/dashboard/shipments/0190aaaa-0000-7000-8000-000000000001'], ['/dashboard/keys/0190aaaa-0000-7000-8000-000000000002/revoke', '/dashboard/keys']]) {
          const confirmed = await t.app.inject({
            method: 'POST',
            url: from,
            headers: { cookie: `dashboard_session=${session}`, referer: `http://localhost${from}`, 'content-type': 'application/x-www-form-urlencoded' },
            payload: new URLSearchParams({ _csrf: token, confirmed: 'yes' }).toString(),
          });
          assert.equal(confirmed.headers.location, `/dashboard/sign-in?next=${encodeURIComponent(next)}`, from);
        }
      });
    });

    describe('hostile forms', () => {
      it('reads only the form\'s own fields: __proto__ paths, huge indexes and clashing names change nothing', async () => {
        const v = await signedIn(t);
        const before = await countRows(t.ctx, 'shipments');
        const hostile: Record<string, string>[] = [
          { '__proto__.polluted': 'yes', 'constructor.prototype.polluted2': 'yes' },
          { 'customs.items[99999999].description': 'x', 'customs.items[5000].hsCode': '1' },
          { to: 'x', 'to.name': 'y', 'customs.items[0]': 'x', 'customs.items[0].description': 'y' },
        ];
        for (const fields of hostile) {
          const res = await v.post('/dashboard/shipments/new', fields, '/dashboard/shipments/new');
          assert.equal(res.statusCode, 400, JSON.stringify(fields));
          assert.ok(res.body.length < 200_000);
        }
        assert.equal(({} as Record<string, unknown>).polluted, undefined);
        assert.equal(({} as Record<string, unknown>).polluted2, undefined);
        assert.equal(await countRows(t.ctx, 'shipments'), before);
        assert.equal((await t.request({ method: 'GET', url: '/v1/shipments' })).statusCode, 200);
      });

      it('shows no message a link brings: notices travel in a cookie the service sets', async () => {
        const v = await signedIn(t);
        const res = await v.get('/dashboard/shipments?notice=Your%20session%20expired%2C%20sign%20in%20at%20evil.example');
        assert.equal(res.statusCode, 200);
        assert.ok(!res.body.includes('evil.example'));
        // A notice cookie the service did not sign (set by a sibling host, say) is not shown either.
        v.cookies.set('dashboard_notice', encodeURIComponent('Sign in again at evil.example'));
        const planted = await v.get('/dashboard/shipments');
        assert.ok(!planted.body.includes('evil.example'));
        v.cookies.set('dashboard_notice', `${encodeURIComponent('Sign in again at evil.example')}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`);
        assert.ok(!(await v.get('/dashboard/shipments')).body.includes('evil.example'));
      });

      it('refuses a file upload on every form but the batch upload, before reading it: 415', async () => {
        const v = await signedIn(t);
        const before = await countRows(t.ctx, 'api_keys');
        const res = await v.upload('/dashboard/keys', { scopes: 'read:shipments' }, { name: 'f', filename: 'x.csv', type: 'text/csv', content: 'x'.repeat(1000) }, '/dashboard/keys');
        assert.equal(res.statusCode, 415);
        assert.match(res.body, /does not take a file upload/);
        assert.equal(await countRows(t.ctx, 'api_keys'), before);
        const anon = await visitor(t).upload('/dashboard/sign-in', { email: 'a@example.com', password: 'x' }, { name: 'f', filename: 'x', type: 'text/plain', content: 'x' }, '/dashboard/sign-in');
        assert.equal(anon.statusCode, 415);
      });

      it('gives every element of a shipment\'s page its own id', async () => {
        const v = await signedIn(t);
        const shipment = (await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment })).json();
        await t.request({ method: 'POST', url: '/v1/labels', payload: { shipmentId: shipment.id, format: 'PDF' } });
        const page = await v.get(`/dashboard/shipments/${shipment.id}`);
        const ids = [...page.body.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]!);
        assert.deepEqual(ids.filter((id, i) => ids.indexOf(id) !== i), []);
      });

      it('signing in again ends the session the browser had', async () => {
        const v = await signedIn(t);
        const old = v.cookies.get('dashboard_session')!;
        // A signed-in page's form token answers the sign-in form too (another tab, say).
        const res = await v.post('/dashboard/sign-in', { email: v.email, password: PASSWORD }, '/dashboard/shipments');
        assert.equal(res.statusCode, 303);
        assert.notEqual(v.cookies.get('dashboard_session'), old);
        const replay = await t.app.inject({ method: 'GET', url: '/dashboard/shipments', headers: { cookie: `dashboard_session=${old}` } });
        assert.equal(replay.statusCode, 303);
      });
    });

    describe('another account', () => {
      it("answers 404 for its shipment, and its label's downloads, print file, return and invalidate", async () => {
        const other = await t.newAccount();
        const shipment = (await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': other.apiKey }, payload: sampleShipment })).json();
        const label = (await t.app.inject({ method: 'POST', url: '/v1/labels', headers: { 'x-api-key': other.apiKey }, payload: { shipmentId: shipment.id, format: 'PDF' } })).json();
        const v = await signedIn(t);
        const page = await v.get(`/dashboard/shipments/${shipment.id}`);
        assert.equal(page.statusCode, 404);
        assert.ok(!page.body.includes(sampleShipment.to.name), 'nothing of it is shown');
        assert.equal((await v.get(`/dashboard/labels/${label.id}/download?format=PDF`)).statusCode, 404);
        for (const action of ['invalidate', 'return', 'print-file']) {
          const fields: Record<string, string> = action === 'invalidate' ? { label: label.id, confirmed: 'yes' } : {};
          assert.equal((await v.post(`/dashboard/shipments/${shipment.id}/${action}`, fields, '/dashboard/shipments')).statusCode, 404, action);
        }
        const after = (await t.app.inject({ method: 'GET', url: `/v1/shipments/${shipment.id}`, headers: { 'x-api-key': other.apiKey } })).json();
        assert.equal(after.label.id, label.id, 'its label is still active');
        const list = await v.get(`/dashboard/shipments?q=${encodeURIComponent(label.trackingNumber)}`);
        assert.match(list.body, /No shipment matches\./);
      });
    });
  });

  describe('the sign-in form\'s rate limit (per client address, §15)', () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(database, { RATE_LIMIT_PER_SECOND: '0.01', RATE_LIMIT_BURST: '2' });
    });
    after(async () => t.close());

    it('answers 429 with Retry-After and the RateLimit fields once the bucket is empty, as an HTML page', async () => {
      const v = visitor(t);
      const statuses: number[] = [];
      let last: Awaited<ReturnType<typeof v.get>> | undefined;
      for (let i = 0; i < 3; i++) {
        last = await v.post('/dashboard/sign-in', { email: 'x@example.com', password: 'not it at all' }, '/dashboard/sign-in');
        statuses.push(last.statusCode);
        assert.equal(last.headers['ratelimit-limit'], '2');
      }
      assert.deepEqual(statuses, [400, 400, 429]);
      assert.ok(Number(last!.headers['retry-after']) > 0);
      assert.equal(last!.headers['ratelimit-remaining'], '0');
      assert.match(String(last!.headers['content-type']), /^text\/html/);
      assert.match(last!.body, /<h1>Too many requests<\/h1>/);
      // The page itself is not limited: only the form's answers are.
      assert.equal((await v.get('/dashboard/sign-in')).statusCode, 200);
    });
  });

  describe('a signed-in user\'s rate limit (§15)', () => {
    let t: TestApp;
    before(async () => {
      t = await startTestApp(database, { RATE_LIMIT_PER_SECOND: '0.01', RATE_LIMIT_BURST: '4' });
    });
    after(async () => t.close());

    it('charges every page to the user\'s own bucket, with the RateLimit fields, then 429; never the stylesheet or sign-out', async () => {
      const v = await signedIn(t);
      const token = await v.csrf('/dashboard/shipments');
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await v.get('/dashboard/shipments');
        statuses.push(res.statusCode);
        assert.equal(res.headers['ratelimit-limit'], '4');
      }
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      assert.equal((await v.get('/dashboard/assets/dashboard.css')).statusCode, 200);
      const out = await v.post('/dashboard/sign-out', { _csrf: token });
      assert.equal(out.statusCode, 303, 'a limited user can still sign out');
      assert.ok(!v.cookies.has('dashboard_session'));
      // Another user of the same address has a bucket of their own.
      const other = await signedIn(t);
      assert.equal((await other.get('/dashboard/shipments')).statusCode, 200);
    });
  });
});

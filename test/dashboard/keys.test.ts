// The dashboard's API key pages (§15, issue 19; keys as §2 describes them): the list (display prefix
// only), a new key shown once in the answer to its form, revocation of the account's own keys only,
// and no change without the form's CSRF token.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { forEachDatabase, type TestAccount, withTestApp } from '../helpers.ts';
import { listApiKeys, revokeAccountApiKey } from '../../src/auth/credentials.ts';
import { ALL_SCOPES, SCOPE_DESCRIPTIONS } from '../../src/auth/scopes.ts';
import { NotFound } from '../../src/errors.ts';
import { noticeOf, signedIn, type Visitor } from './support.ts';

const KEY = /<p class="secret" id="new-key"><code>(sk_test_[A-Za-z0-9_-]+)<\/code><\/p>/;

forEachDatabase((database) => {
  const t = withTestApp(database);

  async function user(): Promise<{ acct: TestAccount; v: Visitor }> {
    const acct = await t.newAccount();
    return { acct, v: await signedIn(t, acct.accountId) };
  }
  const withKey = (key: string, url = '/v1/shipments') => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
  const postWithoutToken = (v: Visitor, url: string, fields: Record<string, string>) =>
    t.app.inject({ method: 'POST', url, headers: { cookie: [...v.cookies].map(([k, val]) => `${k}=${val}`).join('; '), 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString() });
  /** Creates a key through the form and answers it as the page showed it. */
  async function createKey(v: Visitor, scopes: string | string[] = [...ALL_SCOPES]): Promise<string> {
    const posted = await v.post('/dashboard/keys', { name: 'Packing station 2', scopes }, '/dashboard/keys');
    assert.equal(posted.statusCode, 303, posted.body.slice(0, 500));
    const res = await v.get('/dashboard/keys/new');
    assert.equal(res.statusCode, 200, res.body.slice(0, 500));
    const m = KEY.exec(res.body);
    assert.ok(m, 'the new key is on the page');
    return m[1]!;
  }

  describe('GET /dashboard/keys', () => {
    it('lists the account\'s keys by prefix and offers a form with every scope ticked', async () => {
      const { acct, v } = await user();
      const res = await v.get('/dashboard/keys');
      assert.equal(res.statusCode, 200);
      assert.equal(res.body.match(/<h1[ >]/g)?.length, 1);
      assert.match(res.body, /<h2 id="keys-create">Create a key<\/h2>/);
      assert.match(res.body, /<caption>API keys, oldest first<\/caption>/);
      for (const h of ['Name', 'Key', 'Scopes', 'Created', 'State', 'Action']) assert.ok(res.body.includes(`<th scope="col">${h}</th>`), h);
      // The account's key from the test set-up: its prefix, never the key.
      assert.match(res.body, new RegExp(`<code id="key-[0-9a-f-]{36}">${acct.apiKey.slice(0, 16)}…</code>`));
      assert.ok(!res.body.includes(acct.apiKey));
      assert.match(res.body, /<fieldset id="f-scopes" class="checks">\s*<legend>Scopes<\/legend>/);
      for (const s of ALL_SCOPES) {
        const id = `f-scopes-${s.replace(':', '-')}`;
        assert.ok(res.body.includes(`<label for="${id}"><input type="checkbox" id="${id}" name="scopes" value="${s}" checked> <span><code>${s}</code>: ${SCOPE_DESCRIPTIONS[s]}</span></label>`), s);
      }
    });
  });

  describe('POST /dashboard/keys', () => {
    it('shows the new key once, on the page the form redirects to, and the key works against the API', async () => {
      const { acct, v } = await user();
      const posted = await v.post('/dashboard/keys', { name: '  The store <checkout>  ', scopes: [...ALL_SCOPES] }, '/dashboard/keys');
      assert.equal(posted.statusCode, 303);
      assert.equal(posted.headers.location, '/dashboard/keys/new');
      const res = await v.get('/dashboard/keys/new');
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.match(res.body, /it will not be shown again/);
      assert.match(res.body, /<h2 id="new-key-heading">Your new API key, The store &#60;checkout&#62;<\/h2>/, 'named, trimmed and escaped');
      const key = KEY.exec(res.body)![1]!;
      assert.match(key, /^sk_test_/);
      assert.equal((await withKey(key)).statusCode, 200);
      assert.equal((await withKey(key, '/v1/webhooks')).statusCode, 200);

      // Afterwards: the prefix in the list, the key nowhere (nor in the logs).
      const list = await v.get('/dashboard/keys');
      assert.match(list.body, new RegExp(`<code id="key-[0-9a-f-]{36}">${key.slice(0, 16)}…</code>`));
      assert.ok(!list.body.includes(key));
      assert.ok(!KEY.test(list.body));
      assert.ok(!t.logs.join('').includes(key), 'the key is not logged');
      assert.match(list.body, new RegExp(`<td>The store &#60;checkout&#62;</td><td><code id="key-[0-9a-f-]{36}">${key.slice(0, 16)}…</code></td><td>all scopes</td>`));
      const stored = await listApiKeys(t.ctx.db, acct.accountId);
      assert.equal(stored.length, 2);
      assert.equal(stored[1]!.prefix, key.slice(0, 16));
      assert.equal(stored[1]!.name, 'The store <checkout>');
      // The set-up key has no name: a dash.
      assert.match(list.body, new RegExp(`<td>—</td><td><code id="key-[0-9a-f-]{36}">${acct.apiKey.slice(0, 16)}…</code></td>`));
    });

    it('refreshing the page of the new key never makes another key, nor shows the key again', async () => {
      const { acct, v } = await user();
      const key = await createKey(v);
      const again = await v.get('/dashboard/keys/new');
      assert.equal(again.statusCode, 303);
      assert.equal(again.headers.location, '/dashboard/keys');
      const list = await v.get('/dashboard/keys');
      assert.match(list.body, /A new key is shown once/);
      assert.ok(!list.body.includes(key));
      assert.equal((await listApiKeys(t.ctx.db, acct.accountId)).length, 2, 'the set-up key and the one made');
    });

    it('the same form sent twice at once makes one key; the second answer shows it while the browser holds the first\'s, else names it', async () => {
      const { acct, v } = await user();
      const keyOf = (body: string) => /<input type="hidden" name="formKey" value="([0-9a-f-]{36})">/.exec(body)?.[1];
      const formKey = keyOf((await v.get('/dashboard/keys')).body);
      assert.ok(formKey, 'the create form carries a key of its own');
      assert.notEqual(keyOf((await v.get('/dashboard/keys')).body), formKey, 'a new one each time it is shown');
      const fields = { name: 'Checkout', scopes: [...ALL_SCOPES], formKey };
      // A refused form comes back with its key, and nothing is kept for it.
      const refused = await v.post('/dashboard/keys', { ...fields, scopes: [] }, '/dashboard/keys');
      assert.equal(refused.statusCode, 400);
      assert.equal(keyOf(refused.body), formKey);

      // A double click whose first answer reached the browser too: its page shows the key, saying the form was sent twice.
      const both = await Promise.all([0, 1].map(() => v.post('/dashboard/keys', fields, '/dashboard/keys')));
      assert.deepEqual(both.map((r) => [r.statusCode, r.headers.location]), [[303, '/dashboard/keys/new'], [303, '/dashboard/keys/new']], both[1]!.body.slice(0, 500));
      const keys = await listApiKeys(t.ctx.db, acct.accountId);
      assert.equal(keys.length, 2, 'the set-up key and one made by the form');
      const shown = await v.get('/dashboard/keys/new');
      assert.equal(shown.statusCode, 200);
      const key = KEY.exec(shown.body)?.[1];
      assert.equal(key?.slice(0, 16), keys[1]!.prefix);
      assert.match(shown.body, /<p class="notice" role="status"[^>]*>This form was already sent: this is the key it made\. Nothing new was created\.<\/p>/);

      // Sent again later (Back and submit): nothing new, and the key named, its secret not shown again.
      const later = await v.post('/dashboard/keys', fields, '/dashboard/keys');
      assert.equal(later.headers.location, '/dashboard/keys/new');
      const named = await v.get('/dashboard/keys/new');
      assert.equal(named.statusCode, 303);
      assert.equal(named.headers.location, `/dashboard/keys#key-${keys[1]!.id}`);
      assert.equal(noticeOf(named), `This form was already sent: it made the key “Checkout” (${keys[1]!.prefix}…), whose secret was shown once, on the first answer. Nothing new was created. If you did not copy it, revoke it and create another.`);
      const list = await v.get('/dashboard/keys');
      assert.ok(list.body.includes(`<code id="key-${keys[1]!.id}">${keys[1]!.prefix}…</code>`), 'the address names the key\'s row');
      assert.ok(!list.body.includes(key!));

      // A double click whose first answer the browser dropped (it showed the second): the key named, never shown from a stored answer.
      const other = { ...fields, name: 'Printer', formKey: keyOf((await v.get('/dashboard/keys')).body)! };
      await Promise.all([0, 1].map(() => v.post('/dashboard/keys', other, '/dashboard/keys')));
      v.cookies.delete('dashboard_once');
      const dropped = await v.get('/dashboard/keys/new');
      assert.equal(dropped.statusCode, 303);
      const printer = (await listApiKeys(t.ctx.db, acct.accountId)).find((k) => k.name === 'Printer')!;
      assert.equal(dropped.headers.location, `/dashboard/keys#key-${printer.id}`);
      assert.match(noticeOf(dropped) ?? '', new RegExp(`^This form was already sent: it made the key “Printer” \\(${printer.prefix}…\\), whose secret was shown once`));
      assert.equal((await listApiKeys(t.ctx.db, acct.accountId)).length, 3);
      assert.ok(!t.logs.join('').includes(key!), 'the key is not logged');
    });

    it('gives the key only the scopes ticked', async () => {
      const { v } = await user();
      const key = await createKey(v, 'read:webhooks');
      assert.equal((await withKey(key, '/v1/webhooks')).statusCode, 200);
      assert.equal((await withKey(key, '/v1/shipments')).statusCode, 403);
      const list = await v.get('/dashboard/keys');
      assert.match(list.body, new RegExp(`<code id="key-[0-9a-f-]{36}">${key.slice(0, 16)}…</code></td><td>read:webhooks</td>`));
    });

    it('refuses a form without scopes, or with an unknown one: 400, the message beside the scopes, no key', async () => {
      const { acct, v } = await user();
      const none = await v.post('/dashboard/keys', { name: 'Printer' }, '/dashboard/keys');
      assert.equal(none.statusCode, 400);
      assert.match(none.body, /<p class="error" id="f-scopes-error">choose at least one scope<\/p>/);
      assert.match(none.body, /<fieldset id="f-scopes" class="checks invalid" aria-describedby="f-scopes-error">/);
      assert.ok(!none.body.includes(' checked>'), 'the form comes back as it was sent');
      const unknown = await v.post('/dashboard/keys', { name: 'Printer', scopes: ['read:shipments', 'admin:everything'] }, '/dashboard/keys');
      assert.equal(unknown.statusCode, 400);
      assert.match(unknown.body, /<p class="error" id="f-scopes-error">must be one of read:labels/);
      assert.ok(!KEY.test(none.body) && !KEY.test(unknown.body));
      assert.equal((await listApiKeys(t.ctx.db, acct.accountId)).length, 1);
    });

    it('refuses a key without a name, or with one too long: 400, the message beside the name, the form as sent, no key', async () => {
      const { acct, v } = await user();
      const cases: [string, RegExp][] = [
        ['   ', /is required: say what uses the key/],
        ['x'.repeat(101), /must be at most 100 characters/],
      ];
      for (const [name, message] of cases) {
        const res = await v.post('/dashboard/keys', { name, scopes: 'read:labels' }, '/dashboard/keys');
        assert.equal(res.statusCode, 400, JSON.stringify(name));
        assert.match(res.body, new RegExp(`<p class="error" id="f-name-error">${message.source}`));
        assert.match(res.body, /<a href="#f-name">Name: /, 'in the summary');
        assert.match(res.body, /value="read:labels" checked>/, 'the scopes as sent');
        assert.ok(!KEY.test(res.body));
      }
      assert.equal((await listApiKeys(t.ctx.db, acct.accountId)).length, 1);
    });

    it('refuses the name of another unrevoked key of the account, in any case; a revoked key\'s name is free again', async () => {
      const { acct, v } = await user();
      const key = await createKey(v);
      const res = await v.post('/dashboard/keys', { name: ' packing   STATION 2 ', scopes: 'read:labels' }, '/dashboard/keys');
      assert.equal(res.statusCode, 400);
      assert.match(res.body, new RegExp(`<p class="error" id="f-name-error">is already the name of key ${key.slice(0, 16)}…: give this one another name, or revoke that one first</p>`));
      assert.equal((await listApiKeys(t.ctx.db, acct.accountId)).length, 2);
      // Another account's key of that name is no matter.
      const other = await user();
      assert.equal((await other.v.post('/dashboard/keys', { name: 'Packing station 2', scopes: 'read:labels' }, '/dashboard/keys')).statusCode, 303);
      const [row] = (await listApiKeys(t.ctx.db, acct.accountId)).filter((k) => k.name === 'Packing station 2');
      await revokeAccountApiKey(t.ctx.db, acct.accountId, row!.id);
      assert.equal((await v.post('/dashboard/keys', { name: 'Packing station 2', scopes: 'read:labels' }, '/dashboard/keys')).statusCode, 303);
    });

    it('without the form\'s CSRF token is 403 and creates no key', async () => {
      const { acct, v } = await user();
      await v.get('/dashboard/keys');
      const res = await postWithoutToken(v, '/dashboard/keys', { scopes: 'read:shipments' });
      assert.equal(res.statusCode, 403);
      assert.ok(!res.body.includes('sk_test_'));
      assert.equal((await listApiKeys(t.ctx.db, acct.accountId)).length, 1);
    });
  });

  describe('POST /dashboard/keys/{id}/revoke', () => {
    it('revokes the key: 303 to the list with a notice, and the API answers 401 for it', async () => {
      const { acct, v } = await user();
      const key = await createKey(v);
      assert.equal((await withKey(key)).statusCode, 200);
      const { id } = (await listApiKeys(t.ctx.db, acct.accountId)).find((k) => k.prefix === key.slice(0, 16))!;
      const page = await v.get('/dashboard/keys');
      assert.ok(page.body.includes(`<form method="post" action="/dashboard/keys/${id}/revoke" class="inline">`));
      // The button asks first: a page naming the key, with the real button and a way back; nothing revoked yet.
      const asked = await v.post(`/dashboard/keys/${id}/revoke`, {}, '/dashboard/keys');
      assert.equal(asked.statusCode, 200);
      assert.match(asked.body, new RegExp(`<h1>Revoke the key “Packing station 2” \\(${key.slice(0, 16)}…\\)\\?</h1>`));
      assert.match(asked.body, /This cannot be undone/);
      assert.match(asked.body, /<input type="hidden" name="confirmed" value="yes"><button type="submit" class="danger">Revoke /);
      assert.match(asked.body, /<a href="\/dashboard\/keys">Cancel<\/a>/);
      assert.equal((await withKey(key)).statusCode, 200);
      const res = await v.post(`/dashboard/keys/${id}/revoke`, { confirmed: 'yes' }, '/dashboard/keys');
      assert.equal(res.statusCode, 303);
      assert.match(String(res.headers.location), /^\/dashboard\/keys$/);
      assert.equal((await withKey(key)).statusCode, 401);
      // The account's other key still works.
      assert.equal((await withKey(acct.apiKey)).statusCode, 200);
      const after = await v.get(String(res.headers.location));
      assert.match(after.body, new RegExp(`<p class="notice" role="status"[^>]*>The key “Packing station 2” ${key.slice(0, 16)}… is revoked: requests with it are refused from now on\\.</p>`));
      assert.ok(!String(res.headers.location).includes('sk_'), 'no part of the key in the URL');
      assert.match(after.body, new RegExp(`<code id="key-[0-9a-f-]{36}">${key.slice(0, 16)}…</code></td><td>[^<]*</td><td><time[^>]*>[^<]*</time></td><td>Revoked <time`));
      assert.ok(!after.body.includes(`/dashboard/keys/${id}/revoke`), 'no button for a revoked key');
      // Again, from a page shown before: nothing changes, 303 to the list saying so.
      const again = await v.post(`/dashboard/keys/${id}/revoke`, {}, '/dashboard/keys');
      assert.equal(again.statusCode, 303);
      assert.match((await v.get(String(again.headers.location))).body, new RegExp(`The key ${key.slice(0, 16)}… was already revoked\\.`));
      assert.equal((await v.post(`/dashboard/keys/${id}/revoke`, { confirmed: 'yes' }, '/dashboard/keys')).statusCode, 303);
    });

    it('answers 404 for another account\'s key, which keeps working', async () => {
      const { v } = await user();
      const other = await t.newAccount();
      const [theirs] = await listApiKeys(t.ctx.db, other.accountId);
      for (const fields of [{}, { confirmed: 'yes' }] as Record<string, string>[]) {
        const res = await v.post(`/dashboard/keys/${theirs!.id}/revoke`, fields, '/dashboard/keys');
        assert.equal(res.statusCode, 404);
        assert.match(res.body, /<h1>Not found<\/h1>/);
      }
      assert.equal((await withKey(other.apiKey)).statusCode, 200);
      assert.equal((await listApiKeys(t.ctx.db, other.accountId))[0]!.revoked_at, null);
      assert.equal((await v.post(`/dashboard/keys/${randomUUID()}/revoke`, {}, '/dashboard/keys')).statusCode, 404);
      // An address whose id is not one names nothing: 404 like an unknown id.
      assert.equal((await v.post('/dashboard/keys/not-an-id/revoke', {}, '/dashboard/keys')).statusCode, 404);
    });

    it('without the form\'s CSRF token is 403 and the key keeps working', async () => {
      const { acct, v } = await user();
      const [mine] = await listApiKeys(t.ctx.db, acct.accountId);
      await v.get('/dashboard/keys');
      const res = await postWithoutToken(v, `/dashboard/keys/${mine!.id}/revoke`, { confirmed: 'yes' });
      assert.equal(res.statusCode, 403);
      assert.equal((await withKey(acct.apiKey)).statusCode, 200);
    });
  });

  describe('revokeAccountApiKey', () => {
    it('revokes only a key of the given account and forgets the remembered check at once', async () => {
      const a = await t.newAccount();
      const b = await t.newAccount();
      const [keyA] = await listApiKeys(t.ctx.db, a.accountId);
      // The key was checked a moment ago, so this process remembers it.
      assert.equal((await withKey(a.apiKey)).statusCode, 200);
      await assert.rejects(revokeAccountApiKey(t.ctx.db, b.accountId, keyA!.id), NotFound);
      assert.equal((await withKey(a.apiKey)).statusCode, 200);
      assert.deepEqual(await revokeAccountApiKey(t.ctx.db, a.accountId, keyA!.id), { prefix: a.apiKey.slice(0, 16), name: '' });
      assert.equal((await withKey(a.apiKey)).statusCode, 401);
    });
  });
});

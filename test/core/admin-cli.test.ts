// Contract §1: the admin command line, scriptable with --json, on the same database as a running app.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { forEachDatabase, startTestApp, type TestApp } from '../helpers.ts';
import { runAdmin, sharedDatabaseUrl, spawnChild, tokenRequest } from './support.ts';

/** stdout must be exactly one JSON object on one line. */
function oneJsonObject(stdout: string): Record<string, any> {
  const lines = stdout.split('\n').filter((l) => l !== '');
  assert.equal(lines.length, 1, `one line on stdout, got: ${stdout}`);
  const value = JSON.parse(lines[0]!);
  assert.equal(typeof value, 'object');
  assert.ok(value !== null && !Array.isArray(value), `an object, got ${lines[0]}`);
  return value;
}

forEachDatabase((database) => {
  let t: TestApp;
  let dir: string | undefined;
  let env: Record<string, string>;
  before(async () => {
    // Another process must see the same data: SQLite goes to a file for these tests.
    if (database.name === 'sqlite') dir = mkdtempSync(join(tmpdir(), 'admin-cli-'));
    t = await startTestApp(dir ? { name: 'sqlite', url: `sqlite:${join(dir, 'shipping.db')}` } : database);
    env = { DATABASE_URL: await sharedDatabaseUrl(t), APP_ENV: 'development' };
  });
  after(async () => {
    await t.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('npm run admin -- … --json', () => {
    it('account create, key create and client create print one JSON object each; what they create works', async () => {
      const name = `acme-${Date.now()}`;
      const account = await runAdmin(['account', 'create', name, '--json'], env);
      assert.equal(account.code, 0, account.stderr);
      const { id } = oneJsonObject(account.stdout);
      assert.match(id, /^[0-9a-f-]{36}$/);

      const [key, client] = await Promise.all([
        runAdmin(['key', 'create', '--account', name, '--scopes', 'shipments:read', '--json'], env),
        runAdmin(['client', 'create', '--account', id, '--scopes', 'read:shipments write:shipments', '--json'], env),
      ]);
      assert.equal(key.code, 0, key.stderr);
      const created = oneJsonObject(key.stdout);
      assert.deepEqual(Object.keys(created), ['key']);
      assert.match(created.key, /^sk_test_/);
      const read = await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': created.key } });
      assert.equal(read.statusCode, 200);
      const write = await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': created.key }, payload: {} });
      assert.equal(write.statusCode, 403, 'the key holds only the scopes asked for');

      assert.equal(client.code, 0, client.stderr);
      const c = oneJsonObject(client.stdout);
      assert.deepEqual(Object.keys(c).sort(), ['clientId', 'clientSecret']);
      const token = await tokenRequest(t, { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret });
      assert.equal(token.statusCode, 200, token.body);
      assert.equal(token.json().scope, 'read:shipments write:shipments');
    });

    it('key revoke through npm run admin: the key is 401 at once; key list shows it revoked, by prefix only', async () => {
      const acct = await t.newAccount();
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': acct.apiKey } })).statusCode, 200);
      const prefix = acct.apiKey.slice(0, 16);
      // `-s` keeps npm's own banner off stdout, so the output is the command's JSON alone.
      const npm = spawnChild('npm', ['run', '-s', 'admin', '--', 'key', 'revoke', prefix, '--json'], env);
      const { code } = await npm.exited;
      assert.equal(code, 0, npm.stderr());
      assert.deepEqual(oneJsonObject(npm.stdout()), { revoked: prefix });
      const res = await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': acct.apiKey } });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().code, 'UNAUTHORIZED');

      const list = await runAdmin(['key', 'list', '--account', acct.accountId, '--json'], env);
      assert.equal(list.code, 0, list.stderr);
      const { keys } = oneJsonObject(list.stdout);
      assert.equal(keys.length, 1);
      assert.equal(keys[0].prefix, prefix);
      assert.notEqual(keys[0].revokedAt, null);
      assert.ok(!list.stdout.includes(acct.apiKey), 'the key itself is never shown again');
    });

    it('an error with --json: one JSON object {error} on stdout and exit code 2', async () => {
      const res = await runAdmin(['key', 'revoke', 'sk_test_nonexistent', '--json'], env);
      assert.equal(res.code, 2);
      const body = oneJsonObject(res.stdout);
      assert.deepEqual(Object.keys(body), ['error']);
      assert.match(body.error, /not found/);
    });
  });
});

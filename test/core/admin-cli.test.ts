// Contract §1: the admin command line, scriptable with --json, on the same database as a running app.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fakeClock, forEachDatabase, startTestApp, type TestApp } from '../helpers.ts';
import { API_KEY_CACHE_MS } from '../../src/auth/credentials.ts';
import { authenticateUser, createUser } from '../../src/oauth/users.ts';
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

type Run = Awaited<ReturnType<typeof runAdmin>>;

forEachDatabase((database) => {
  let t: TestApp;
  let dir: string | undefined;
  let revokedKey: string;
  let listedClient: string;
  let clientWithUris: string;
  // The commands run as separate processes, all at once (each start costs about a second).
  const runs: Record<string, Promise<Run>> = {};
  const accountName = `acme-${Date.now()}`;
  before(async () => {
    // Another process must see the same data: SQLite goes to a file for these tests.
    if (database.name === 'sqlite') dir = mkdtempSync(join(tmpdir(), 'admin-cli-'));
    t = await startTestApp(dir ? { name: 'sqlite', url: `sqlite:${join(dir, 'shipping.db')}` } : database);
    const env = { DATABASE_URL: await sharedDatabaseUrl(t), APP_ENV: 'development' };
    const acct = await t.newAccount();
    assert.equal((await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': acct.apiKey } })).statusCode, 200);
    revokedKey = acct.apiKey;
    const prefix = acct.apiKey.slice(0, 16);
    runs.account = runAdmin(['account', 'create', accountName, '--json'], env);
    runs.key = runAdmin(['key', 'create', '--account', t.accountId, '--scopes', 'shipments:read', '--name', ' Store checkout ', '--json'], env);
    runs.keysText = runs.key.then(() => runAdmin(['key', 'list', '--account', t.accountId], env));
    runs.sameName = runs.key.then(() => runAdmin(['key', 'create', '--account', t.accountId, '--name', 'store CHECKOUT', '--json'], env));
    runs.badName = runAdmin(['key', 'create', '--account', t.accountId, '--name', 'x'.repeat(101), '--json'], env);
    runs.client = runAdmin(['client', 'create', '--account', t.accountId, '--scopes', 'read:shipments write:shipments', '--json'], env);
    runs.error = runAdmin(['key', 'revoke', 'sk_test_nonexistent', '--json'], env);
    runs.accountAgain = runs.account.then(() => runAdmin(['account', 'create', accountName, '--json'], env));
    runs.unknown = runAdmin(['frobnicate', 'it'], env);
    // A database out of reach: the service's own line and exit code, the password hidden.
    runs.unreachable = runAdmin(['key', 'list'], { ...env, DATABASE_URL: 'postgres://postgres:s3cret@127.0.0.1:1/test' });
    // OAuth clients and users: a client to list, rotate and revoke, a user to disable.
    const { clientId } = await t.newClient(t.accountId, ['read:shipments']);
    listedClient = clientId;
    await createUser(t.ctx.db, t.accountId, `ops-${database.name}@example.com`, 'a long and secret passphrase');
    runs.clients = runAdmin(['client', 'list', '--account', t.accountId, '--json'], env);
    const { clientId: withUris } = await t.newClient(t.accountId, ['read:labels'], ['https://app.example/callback', 'https://app.example/other']);
    clientWithUris = withUris;
    runs.clientsText = runAdmin(['client', 'list', '--account', t.accountId], env);
    runs.rotate = runs.clients.then(() => runAdmin(['client', 'rotate-secret', clientId, '--json'], env));
    runs.clientRevoke = runs.rotate.then(() => runAdmin(['client', 'revoke', clientId, '--json'], env));
    runs.disable = runAdmin(['user', 'disable', '--email', `ops-${database.name}@example.com`, '--json'], env);
    // Through npm itself once (the command is the same on both databases); `-s` keeps npm's own banner
    // off stdout, so the output is the command's JSON alone.
    const revoke =
      database.name === 'sqlite'
        ? (async () => {
            const npm = spawnChild('npm', ['run', '-s', 'admin', '--', 'key', 'revoke', prefix, '--json'], env);
            const { code } = await npm.exited;
            return { code, stdout: npm.stdout(), stderr: npm.stderr() };
          })()
        : runAdmin(['key', 'revoke', prefix, '--json'], env);
    runs.revoke = revoke;
    runs.list = revoke.then(() => runAdmin(['key', 'list', '--account', acct.accountId, '--json'], env));
    runs.revokeAgain = runs.list.then(() => runAdmin(['key', 'revoke', prefix, '--json'], env));
    runs.revokeAgainText = runs.list.then(() => runAdmin(['key', 'revoke', prefix], env));
    // Settle everything here so a failure is reported by the test that owns it.
    await Promise.allSettled(Object.values(runs));
  });
  after(async () => {
    await t.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describe('npm run admin -- … --json', () => {
    it('account create prints one JSON object {id}', async () => {
      const account = await runs.account!;
      assert.equal(account.code, 0, account.stderr);
      const { id } = oneJsonObject(account.stdout);
      assert.match(id, /^[0-9a-f-]{36}$/);
      const row = await t.ctx.db.selectFrom('accounts').select('name').where('id', '=', id).executeTakeFirstOrThrow();
      assert.equal(row.name, accountName);
    });

    it('key create prints one JSON object {key}; the key works with exactly the scopes asked for', async () => {
      const key = await runs.key!;
      assert.equal(key.code, 0, key.stderr);
      const created = oneJsonObject(key.stdout);
      assert.deepEqual(Object.keys(created), ['key']);
      assert.match(created.key, /^sk_test_/);
      const read = await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': created.key } });
      assert.equal(read.statusCode, 200);
      const write = await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': created.key }, payload: {} });
      assert.equal(write.statusCode, 403);
      // Its name, trimmed, is kept and listed beside its prefix; a name too long makes no key.
      const text = await runs.keysText!;
      assert.equal(text.code, 0, text.stderr);
      assert.ok(text.stdout.split('\n').some((l) => l.startsWith(`${created.key.slice(0, 16)}…  "Store checkout"  `)), text.stdout);
      // A key without a name shows a dash, as the dashboard's list does.
      assert.ok(text.stdout.split('\n').some((l) => l.startsWith(`${t.apiKey.slice(0, 16)}…  -  `)), text.stdout);
      const bad = await runs.badName!;
      assert.equal(bad.code, 2);
      assert.match(oneJsonObject(bad.stdout).error, /name must be at most 100 characters/);
      // Another unrevoked key's name, in any case, makes no key: the two could not be told apart.
      const same = await runs.sameName!;
      assert.equal(same.code, 2, same.stdout);
      assert.equal(oneJsonObject(same.stdout).error, `name is already the name of key ${created.key.slice(0, 16)}…: give this one another name, or revoke that one first`);
      const named = await t.ctx.db.selectFrom('api_keys').select('name').where('account_id', '=', t.accountId).execute();
      assert.deepEqual(named.map((r) => r.name).filter((n) => n !== '').sort(), ['Store checkout']);
    });

    it('client create prints one JSON object {clientId, clientSecret}; the client gets tokens', async () => {
      const client = await runs.client!;
      assert.equal(client.code, 0, client.stderr);
      const c = oneJsonObject(client.stdout);
      assert.deepEqual(Object.keys(c).sort(), ['clientId', 'clientSecret']);
      const token = await tokenRequest(t, { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret });
      assert.equal(token.statusCode, 200, token.body);
      assert.equal(token.json().scope, 'read:shipments write:shipments');
    });

    it('key revoke: the key is 401 in every process within API_KEY_CACHE_MS; key list shows it revoked, by prefix only', async (tc) => {
      const revoke = await runs.revoke!;
      assert.equal(revoke.code, 0, revoke.stderr);
      assert.deepEqual(oneJsonObject(revoke.stdout), { revoked: revokedKey.slice(0, 16) });
      // This process checked the key before the command ran and may remember it that long (docs/decisions.md).
      fakeClock(tc).tick(API_KEY_CACHE_MS);
      const res = await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': revokedKey } });
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().code, 'UNAUTHORIZED');
      const list = await runs.list!;
      assert.equal(list.code, 0, list.stderr);
      const { keys } = oneJsonObject(list.stdout);
      assert.equal(keys.length, 1);
      assert.equal(keys[0].prefix, revokedKey.slice(0, 16));
      assert.notEqual(keys[0].revokedAt, null);
      assert.ok(!list.stdout.includes(revokedKey), 'the key itself is never shown again');
    });

    it('client list, rotate-secret and revoke: secrets never listed, the new secret works once, a revoked client gets nothing', async () => {
      const list = await runs.clients!;
      assert.equal(list.code, 0, list.stderr);
      const { clients } = oneJsonObject(list.stdout);
      assert.ok(clients.some((c: { clientId: string }) => c.clientId === listedClient));
      assert.ok(!list.stdout.includes('cs_'), 'no secret in the list');
      const rotated = await runs.rotate!;
      assert.equal(rotated.code, 0, rotated.stderr);
      const { clientSecret } = oneJsonObject(rotated.stdout);
      assert.match(clientSecret, /^cs_/);
      const revoked = await runs.clientRevoke!;
      assert.equal(revoked.code, 0, revoked.stderr);
      const token = await tokenRequest(t, { grant_type: 'client_credentials', client_id: listedClient, client_secret: clientSecret });
      assert.equal(token.statusCode, 401);
    });

    it('key revoke of a key already revoked: says so, changes nothing', async () => {
      const again = await runs.revokeAgain!;
      assert.equal(again.code, 0, again.stderr);
      assert.deepEqual(oneJsonObject(again.stdout), { revoked: revokedKey.slice(0, 16), alreadyRevoked: true });
      const text = await runs.revokeAgainText!;
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, new RegExp(`^api key ${revokedKey.slice(0, 16)}… was already revoked on \\d{4}-`));
      assert.doesNotMatch(text.stdout + text.stderr, /not found/);
    });

    it('client list without --json shows each client\'s state, scopes and redirect URIs', async () => {
      const list = await runs.clientsText!;
      assert.equal(list.code, 0, list.stderr);
      const line = list.stdout.split('\n').find((l) => l.startsWith(clientWithUris));
      assert.equal(line, `${clientWithUris}  Test client  active  scopes: read:labels  redirect URIs: https://app.example/callback https://app.example/other`);
      assert.match(list.stdout, new RegExp(`^${listedClient}  Test client  active  scopes: read:shipments  redirect URIs: none$`, 'm'));
    });

    it('user disable: the user can no longer sign in', async () => {
      const disabled = await runs.disable!;
      assert.equal(disabled.code, 0, disabled.stderr);
      assert.equal(await authenticateUser(t.ctx.db, `ops-${database.name}@example.com`, 'a long and secret passphrase'), null);
    });

    it('account create of a name taken: says so in words, exit code 2', async () => {
      const res = await runs.accountAgain!;
      assert.equal(res.code, 2, res.stderr);
      assert.match(oneJsonObject(res.stdout).error, /^an account named acme-\d+ already exists$/);
    });

    it('an unknown command names itself before the usage; a database out of reach is exit 69 with DATABASE_URL named, its password hidden', async () => {
      const unknown = await runs.unknown!;
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /^error: unknown command "frobnicate it"\nusage: npm run admin/);
      const unreachable = await runs.unreachable!;
      assert.equal(unreachable.code, 69, unreachable.stderr);
      assert.match(unreachable.stderr, /^database unavailable: DATABASE_URL postgres:\/\/postgres:PASSWORD@127\.0\.0\.1:1\/test cannot be used now: /);
      assert.doesNotMatch(unreachable.stderr, /s3cret/);
    });

    it('an error with --json: one JSON object {error} on stdout and exit code 2', async () => {
      const res = await runs.error!;
      assert.equal(res.code, 2);
      const body = oneJsonObject(res.stdout);
      assert.deepEqual(Object.keys(body), ['error']);
      assert.match(body.error, /not found/);
    });
  });
});

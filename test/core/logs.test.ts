// pino logs never contain a key, token, client secret or password.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { revokeApiKey } from '../../src/auth/credentials.ts';
import { sql } from 'kysely';
import { dropSchema, forEachDatabase, sampleShipment, startTestApp, withTestApp } from '../helpers.ts';
import { FORM, form, signWithServiceKey, tokenRequest } from './support.ts';

/** Each secret, and its distinctive part (a key without its well-known `sk_test_` prefix). */
function assertNoSecrets(logs: string[], secrets: string[]): void {
  const text = logs.join('');
  for (const secret of secrets) {
    const core = secret.replace(/^sk_(test|live)_/, '');
    assert.ok(!text.includes(core), `a log line contains the secret ${secret.slice(0, 12)}…:\n${logs.find((l) => l.includes(core))}`);
  }
}

forEachDatabase((database) => {
  const t = withTestApp(database);

  describe('logs', () => {
    it('keep API keys, bearer tokens, client secrets and passwords out, on success and on failure', async () => {
      const secrets: string[] = [t.apiKey];
      const client = await t.newClient(t.accountId);
      secrets.push(client.clientSecret);
      const basicValue = Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64');
      secrets.push(basicValue);

      // Requests that succeed.
      assert.equal((await t.request({ method: 'POST', url: '/v1/shipments', payload: sampleShipment })).statusCode, 201);
      const token = (await tokenRequest(t, { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret })).json().access_token;
      secrets.push(token);
      assert.equal((await tokenRequest(t, { grant_type: 'client_credentials' }, { authorization: `Basic ${basicValue}` })).statusCode, 200);
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `Bearer ${token}` } })).statusCode, 200);

      // Requests that fail, carrying credentials in every place a careless client puts them.
      const wrongKey = 'sk_test_WrongWrongWrongWrongWrong12345';
      secrets.push(wrongKey);
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': wrongKey } })).statusCode, 401);
      const forged = await signWithServiceKey(t, t.accountId, { iss: 'https://evil.example' });
      secrets.push(forged);
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { authorization: `Bearer ${forged}` } })).statusCode, 401);
      const wrongSecret = 'cs_NotTheSecretNotTheSecretNotTheSecret00';
      secrets.push(wrongSecret);
      assert.equal((await tokenRequest(t, { grant_type: 'client_credentials', client_id: client.clientId, client_secret: wrongSecret })).statusCode, 401);
      // Secrets in a query string, where they do not belong.
      await t.app.inject({ method: 'POST', url: `/oauth/token?client_secret=${client.clientSecret}`, headers: { 'content-type': FORM }, payload: form({ grant_type: 'client_credentials' }) });
      await t.app.inject({ method: 'GET', url: `/v1/shipments?access_token=${token}` });
      await t.app.inject({ method: 'GET', url: `/v1/nowhere?api_key=${t.apiKey}&password=hunter2hunter2hunter2` });
      secrets.push('hunter2hunter2hunter2');
      // A refresh token and an authorization code sent as a request id, or pasted into a path.
      for (const prefixed of [`rt_${'Ab3'.repeat(21)}x`, `ac_${'Zy9'.repeat(14)}q`]) {
        secrets.push(prefixed);
        await t.app.inject({ method: 'GET', url: '/v1/health', headers: { 'x-request-id': prefixed } });
        await t.app.inject({ method: 'GET', url: `/v1/shipments/${prefixed}`, headers: { 'x-api-key': t.apiKey } });
      }
      // Credentials pasted into a path.
      assert.equal((await t.request({ method: 'GET', url: `/v1/shipments/${t.apiKey}` })).statusCode, 400);
      assert.equal((await t.request({ method: 'GET', url: `/v1/shipments/${token}` })).statusCode, 400);
      await t.app.inject({ method: 'GET', url: `/v1/${client.clientSecret}` });
      // A password and a secret in a JSON body the schema rejects.
      const password = 'correct horse battery staple 42';
      secrets.push(password);
      assert.equal((await t.request({ method: 'POST', url: '/v1/shipments', payload: { ...sampleShipment, password, secret: password } })).statusCode, 400);
      // Malformed JSON that contains a secret.
      assert.equal((await t.request({ method: 'POST', url: '/v1/shipments', headers: { 'content-type': 'application/json' }, payload: `{"secret": "${password}"` })).statusCode, 400);
      // A key revoked and then used.
      const other = await t.newAccount();
      secrets.push(other.apiKey);
      await revokeApiKey(t.ctx.db, other.apiKey.slice(0, 16));
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': other.apiKey } })).statusCode, 401);

      // The capture works: requests are logged with their ids, and credentials appear only redacted.
      const text = t.logs.join('');
      assert.ok(t.logs.length > 10);
      assert.match(text, /"url":"\/v1\/shipments/);
      assert.match(text, /\[redacted\]/);
      assertNoSecrets(t.logs, secrets);
    });

    it('write one JSON access line per request, with its id, status and time in milliseconds', async () => {
      const res = await t.request({ method: 'GET', url: '/v1/shipments?limit=1' });
      assert.equal(res.statusCode, 200);
      const id = res.headers['x-request-id'];
      const lines = t.logs.filter((l) => l.includes(`"reqId":"${id}"`)).map((l) => JSON.parse(l));
      assert.equal(lines.length, 1);
      const line = lines[0];
      assert.deepEqual(Object.keys(line), ['level', 'time', 'pid', 'hostname', 'reqId', 'req', 'res', 'responseTime', 'msg']);
      assert.deepEqual(line.req, { method: 'GET', url: '/v1/shipments?limit=1', id, remoteAddress: '127.0.0.1' });
      assert.deepEqual(line.res, { statusCode: 200 });
      assert.equal(line.msg, 'request completed');
      assert.ok(typeof line.responseTime === 'number' && line.responseTime >= 0 && line.responseTime < 60_000);
    });

    it('the service destination writes what is pending when the process dies of an uncaught exception', () => {
      const script = [
        "import { createLogger } from './src/log.ts';",
        "const log = createLogger('info');",
        "log.info('written just before the crash');",
        "throw new Error('crash');",
      ].join('\n');
      const r = spawnSync(process.execPath, ['--input-type=module', '--disable-warning=ExperimentalWarning', '-e', script], { cwd: new URL('../../', import.meta.url).pathname, encoding: 'utf8' });
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, /crash/);
      assert.match(r.stdout, /"msg":"written just before the crash"/);
    });

    it('keep credentials out when a request fails with a 500 (the database is gone)', async () => {
      const broken = await startTestApp(database);
      const client = await broken.newClient(broken.accountId);
      const schema = database.name === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(broken.ctx.db)).rows[0]!.s : undefined;
      await broken.ctx.storage.close();
      const res = await broken.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': broken.apiKey } });
      assert.equal(res.statusCode, 500);
      assert.deepEqual(Object.keys(res.json()).sort(), ['code', 'message']);
      assert.equal(res.json().code, 'INTERNAL');
      const token = await tokenRequest(broken, { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret });
      assert.equal(token.statusCode, 500);
      assert.match(broken.logs.join(''), /"level":50/, 'the failure is logged as an error');
      assertNoSecrets(broken.logs, [broken.apiKey, client.clientSecret]);
      await broken.app.close();
      if (schema) await dropSchema(schema);
    });
  });
});

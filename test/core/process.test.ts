// `npm start` on an empty data directory serves and prints a working curl line; SIGTERM, to npm or to
// the process, lets in-flight requests finish before the process exits 0; an address it cannot listen
// on stops the start like a bad setting.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomToken } from '../../src/auth/secrets.ts';
import { sampleShipment } from '../helpers.ts';
import { freePort, spawnChild } from './support.ts';

const exec = promisify(execFile);

describe('npm start on an empty data directory', () => {
  it('creates the database, prints a key once with a curl line that works, and prints no key on the next start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'npm-start-'));
    const port = await freePort();
    const env = { DATABASE_URL: `sqlite:${join(dir, 'data', 'shipping.db')}`, PORT: String(port), METRICS_PORT: '0', APP_ENV: '', PUBLIC_BASE_URL: '', BOOTSTRAP_API_KEY: '', SANDBOX_TRACKING: '0', LOG_LEVEL: 'info' };
    // Its own process group, so whatever is left of it can be stopped at the end.
    const npm = spawnChild('npm', ['start'], env, { detached: true });
    try {
      const [, key] = await npm.waitFor(/It is shown this once; keep it:\n\s+(sk_test_[A-Za-z0-9]+)\n/);
      const [curlLine] = await npm.waitFor(/curl -s -H 'X-API-Key: sk_test_[A-Za-z0-9]+' http:\/\/localhost:\d+\/v1\/shipments/);
      assert.ok(curlLine.includes(key!));
      assert.match(npm.stdout(), new RegExp(`is serving http://localhost:${port}/v1`));
      const { stdout } = await exec('sh', ['-c', curlLine]);
      assert.deepEqual(JSON.parse(stdout), []);
      const created = await fetch(`http://127.0.0.1:${port}/v1/shipments`, { method: 'POST', headers: { 'x-api-key': key!, 'content-type': 'application/json' }, body: JSON.stringify(sampleShipment) });
      assert.equal(created.status, 201);
      // A supervisor signals npm alone (its main PID, or PID 1 in a container): node must get it and stop.
      process.kill(npm.process.pid!, 'SIGTERM');
      assert.deepEqual(await npm.exited, { code: 0, signal: null });
      assert.match(npm.stdout(), /"msg":"stopped"/);
    } finally {
      try {
        process.kill(-npm.process.pid!, 'SIGKILL');
      } catch {
        // The group is gone: nothing was left behind.
      }
      await npm.exited;
    }
    try {
      const again = spawnChild(process.execPath, ['src/main.ts'], env);
      await again.waitFor(/is serving/);
      await again.waitFor(/Try it: curl .*<your key>/);
      assert.doesNotMatch(again.stdout(), /sk_test_/);
      // The hint for a new key names this database, so the key it makes works here.
      const [, hint] = await again.waitFor(/\(new key: (.+)\)\n/);
      assert.match(hint!, /^DATABASE_URL='sqlite:.+' npm run admin -- key create --account default$/);
      const made = (await exec('sh', ['-c', hint!])).stdout.match(/sk_test_[A-Za-z0-9]+/)?.[0];
      assert.ok(made, 'the command printed a key');
      assert.equal((await fetch(`http://127.0.0.1:${port}/v1/shipments`, { headers: { 'x-api-key': made } })).status, 200);
      again.process.kill('SIGTERM');
      assert.deepEqual(await again.exited, { code: 0, signal: null });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** `npm start` in a folder of its own on a free port, with a BOOTSTRAP_API_KEY; `env` adds settings. */
async function startWithKey(prefix: string, env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const port = await freePort();
  const key = `sk_test_${randomToken(32)}`;
  const server = spawnChild(process.execPath, ['src/main.ts'], { DATABASE_URL: `sqlite:${join(dir, 'shipping.db')}`, PORT: String(port), HOST: '127.0.0.1', APP_ENV: 'development', PUBLIC_BASE_URL: '', BOOTSTRAP_API_KEY: key, SANDBOX_TRACKING: '0', ...env });
  return { dir, port, key, server };
}

/**
 * `POST /v1/shipments` in flight while the service receives SIGTERM: `Expect: 100-continue`, so the
 * server's "100 Continue" proves it has the request; the body is sent only after the signal.
 */
function shipmentAcrossSigterm(server: ReturnType<typeof spawnChild>, port: number, key: string, agent: Agent | false): Promise<{ status: number; body: string; connection: string | undefined }> {
  const body = Buffer.from(JSON.stringify(sampleShipment));
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: '127.0.0.1', port, method: 'POST', path: '/v1/shipments', headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-length': body.length, expect: '100-continue' } }, (r) => {
      let text = '';
      r.on('data', (d) => (text += d));
      r.on('end', () => resolve({ status: r.statusCode!, body: text, connection: r.headers.connection }));
    });
    req.on('error', reject);
    req.on('continue', () => {
      server.process.kill('SIGTERM');
      server
        .waitFor(/shutting down: finishing in-flight requests/)
        .then(() => req.end(body))
        .catch(reject);
    });
    req.flushHeaders();
  });
}

describe('graceful shutdown', () => {
  it('SIGTERM: a request in flight completes with 201, then the process exits 0', async () => {
    const { dir, port, key, server } = await startWithKey('shutdown-', { LOG_LEVEL: 'info' });
    try {
      await server.waitFor(/is serving/);
      const res = await shipmentAcrossSigterm(server, port, key, false);
      assert.equal(res.status, 201, res.body);
      assert.equal(JSON.parse(res.body).carrier, 'UPS');
      assert.deepEqual(await server.exited, { code: 0, signal: null });
      assert.match(server.stdout(), /"msg":"stopped"/);
      // The listener is gone.
      assert.equal(await fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.status, () => 'refused'), 'refused');
    } finally {
      if (server.process.exitCode === null) server.process.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('graceful shutdown with kept-alive connections', () => {
  it('SIGTERM: a request in flight on a kept-alive connection is answered with Connection: close, and the process exits 0 at once rather than after 20 s', async () => {
    const { dir, port, key, server } = await startWithKey('shutdown-keepalive-', { LOG_LEVEL: 'info' });
    const agent = new Agent({ keepAlive: true });
    try {
      await server.waitFor(/is serving/);
      // A connection kept alive and idle from an earlier request, and one with a request in flight.
      const health = await fetchWith(agent, port, 'GET', '/v1/health');
      assert.equal(health.headers.connection, 'keep-alive');
      const answered = await shipmentAcrossSigterm(server, port, key, agent);
      assert.deepEqual([answered.status, answered.connection], [201, 'close']);
      // Closed by the service once answered, though the client would have kept it: no 20 s wait, no exit 1.
      assert.deepEqual(await server.exited, { code: 0, signal: null });
      assert.match(server.stdout(), /"msg":"stopped"/);
      assert.doesNotMatch(server.stdout(), /shutdown took longer/);
    } finally {
      agent.destroy();
      if (server.process.exitCode === null) server.process.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function fetchWith(agent: Agent, port: number, method: string, path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: '127.0.0.1', port, method, path }, (r) => {
      r.resume();
      r.on('end', () => resolve({ status: r.statusCode!, headers: r.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('an address the service cannot listen on', () => {
  it('HOST or METRICS_HOST unresolvable, or not this machine\'s: exit 78, one line naming it, no stack', async () => {
    const base = { DATABASE_URL: 'sqlite::memory:', APP_ENV: 'development', PUBLIC_BASE_URL: '', BOOTSTRAP_API_KEY: '', SANDBOX_TRACKING: '0', METRICS_PORT: '0' };
    const cases: [Record<string, string>, string][] = [
      [{ HOST: 'not-a-host.invalid' }, 'HOST "not-a-host.invalid"'],
      // TEST-NET-1: no machine has it.
      [{ HOST: '192.0.2.1' }, 'HOST "192.0.2.1"'],
      [{ ROLE: 'worker', METRICS_HOST: 'bogus.invalid', METRICS_PORT: String(await freePort()) }, 'METRICS_HOST "bogus.invalid"'],
    ];
    await Promise.all(
      cases.map(async ([env, named]) => {
        const child = spawnChild(process.execPath, ['src/main.ts'], { ...base, PORT: String(await freePort()), ...env });
        const timer = setTimeout(() => child.process.kill('SIGKILL'), 60_000);
        const { code } = await child.exited;
        clearTimeout(timer);
        assert.equal(code, 78, `${JSON.stringify(env)}: ${child.stderr()}`);
        assert.match(child.stderr(), new RegExp(`^configuration error: ${named} is not an address this machine can listen on \\([A-Z_]+\\)\\n$`));
      }),
    );
  });

  it('BOOTSTRAP_API_KEY opens the API from the first answer on: the key works as soon as the health check does', async () => {
    const { dir, port, key, server } = await startWithKey('bootstrap-key-', { METRICS_PORT: '0' });
    try {
      let healthy = false;
      for (let i = 0; i < 6000 && !healthy; i++) {
        healthy = await fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.status === 200, () => false);
        if (!healthy) await new Promise((r) => setTimeout(r, 5));
      }
      assert.ok(healthy, server.stderr());
      const res = await fetch(`http://127.0.0.1:${port}/v1/shipments`, { headers: { 'x-api-key': key } });
      assert.equal(res.status, 200, await res.text());
    } finally {
      server.process.kill('SIGTERM');
      await server.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a PORT already in use: exit 78 naming it, and no key created that nobody saw: the next start prints it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'port-taken-'));
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    const env = { DATABASE_URL: `sqlite:${join(dir, 'shipping.db')}`, HOST: '127.0.0.1', APP_ENV: 'development', PUBLIC_BASE_URL: '', BOOTSTRAP_API_KEY: '', SANDBOX_TRACKING: '0', METRICS_PORT: '0' };
    try {
      const refused = spawnChild(process.execPath, ['src/main.ts'], { ...env, PORT: String(port) });
      const { code } = await refused.exited;
      assert.equal(code, 78, refused.stderr());
      assert.match(refused.stderr(), new RegExp(`^configuration error: PORT ${port} is already in use on 127\\.0\\.0\\.1\\n$`));
      assert.doesNotMatch(refused.stdout(), /sk_test_/);
      const again = spawnChild(process.execPath, ['src/main.ts'], { ...env, PORT: String(await freePort()) });
      try {
        await again.waitFor(/Try it/);
        assert.match(again.stdout(), /It is shown this once; keep it:\n\s+sk_test_[A-Za-z0-9]+\n/);
      } finally {
        again.process.kill('SIGTERM');
        await again.exited;
      }
    } finally {
      taken.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

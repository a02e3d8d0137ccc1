// Crash safety and shared work, with the real service as child processes:
// - kill -9 with deliveries in flight (SQLite file): after a restart every event is delivered, because
//   the deliveries are rows and a dead worker's claims run out;
// - two worker processes (`--role=worker`) on one PostgreSQL schema deliver each event to each
//   subscriber exactly once with a healthy receiver (claims use FOR UPDATE SKIP LOCKED).
// SQLite is one process's embedded file, so the two-worker test is PostgreSQL only.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { createShipment, DATABASES, sampleShipment, startTestApp } from '../helpers.ts';
import { eventually, startReceiver, type Receiver } from './receiver.ts';

const root = new URL('../../', import.meta.url).pathname;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

interface Service {
  child: ChildProcess;
  output: () => string;
}

/** Starts `node src/main.ts` and resolves once it says it is serving (or, as a worker, started). */
function startService(env: Record<string, string>, args: string[] = []): Promise<Service> {
  const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', 'src/main.ts', ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${out}`)), 60_000);
    const check = () => {
      if (/is serving|worker started/.test(out)) {
        clearTimeout(timer);
        child.stdout!.off('data', check);
        child.stderr!.off('data', check);
        resolve({ child, output: () => out });
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${out}`));
    });
  });
}

function kill(service: Service, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (service.child.exitCode !== null || service.child.signalCode !== null) return resolve();
    service.child.once('exit', () => resolve());
    service.child.kill(signal);
  });
}

describe('kill -9 of the service with deliveries pending (SQLite file)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'webhooks-crash-'));
  const services: Service[] = [];
  const receivers: Receiver[] = [];
  after(async () => {
    for (const s of services) await kill(s, 'SIGKILL');
    for (const r of receivers) await r.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers every event after a restart, including those in flight at the kill', async () => {
    const port = await freePort();
    const apiKey = `sk_test_${randomBytes(16).toString('hex')}`;
    const env = {
      APP_ENV: 'development',
      DATABASE_URL: `sqlite:${join(dir, 'shipping.db')}`,
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      BOOTSTRAP_API_KEY: apiKey,
      SANDBOX_TRACKING: '0',
      LOG_LEVEL: 'warn',
      WORKER_IDLE_MS: '50',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_RETRY_SCHEDULE: Array(30).fill('1').join(','),
    };
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`http://127.0.0.1:${port}/v1${path}`, { method, headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : undefined };
    };

    // Phase 1: the receiver accepts requests and never answers; the service is killed with all in flight.
    const stuck = await startReceiver(() => 'hang');
    receivers.push(stuck);
    const first = await startService(env);
    services.push(first);
    const hook = await api('POST', '/webhooks', { url: `${stuck.url}/in`, events: ['shipment.created'] });
    assert.equal(hook.status, 201);
    const shipmentIds: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await api('POST', '/shipments', sampleShipment);
      assert.equal(res.status, 201);
      shipmentIds.push(res.json.id);
    }
    await stuck.waitFor(10);
    await kill(first, 'SIGKILL');
    assert.equal(first.child.signalCode, 'SIGKILL');
    await stuck.close();

    // Phase 2: a healthy receiver on the same port; the restarted service picks the deliveries up once
    // the dead process's claims run out.
    const healthy = await startReceiver(() => ({ status: 200 }), { port: stuck.port });
    receivers.push(healthy);
    const second = await startService(env);
    services.push(second);
    const deliveredIds = () => new Set(healthy.received.map((r) => String(r.headers['webhook-id'])));
    await eventually(async () => deliveredIds().size >= 10, 60_000, '10 distinct events delivered after the restart');

    // Phase 3: killed again right after the last change is acknowledged (events perhaps not yet fanned out).
    for (let i = 0; i < 10; i++) shipmentIds.push((await api('POST', '/shipments', sampleShipment)).json.id);
    await kill(second, 'SIGKILL');
    const third = await startService(env);
    services.push(third);
    await eventually(async () => deliveredIds().size >= 20, 60_000, '20 distinct events delivered after the second restart');

    const deliveries = await eventually(async () => {
      const list = (await api('GET', `/webhooks/${hook.json.id}/deliveries?limit=100`)).json as any[];
      return list.length === 20 && list.every((d) => d.status === 'succeeded') ? list : null;
    }, 30_000, 'every delivery recorded as succeeded');
    assert.deepEqual(new Set(deliveries.map((d) => d.eventId)), deliveredIds());
    const shipmentsDelivered = new Set(healthy.received.map((r) => JSON.parse(r.body).data.id));
    assert.deepEqual(shipmentsDelivered, new Set(shipmentIds));
    await kill(third, 'SIGTERM');
    assert.equal(third.child.exitCode, 0, third.output());
  });
});

describe('two worker processes on one PostgreSQL schema', () => {
  it('deliver each event to each subscriber exactly once', async () => {
    const t = await startTestApp(DATABASES.find((d) => d.name === 'postgres')!);
    const rx = await startReceiver(() => ({ status: 200 }));
    const workers: Service[] = [];
    try {
      const schema = (await sql<{ s: string }>`select current_schema() as s`.execute(t.ctx.db)).rows[0]!.s;
      const url = new URL(t.ctx.config.databaseUrl);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const env = { APP_ENV: 'development', DATABASE_URL: url.toString(), SANDBOX_TRACKING: '0', LOG_LEVEL: 'info', WORKER_IDLE_MS: '20', PORT: '0' };
      for (let i = 0; i < 2; i++) workers.push(await startService(env, ['--role=worker']));
      const SUBSCRIBERS = 5;
      const EVENTS = 40;
      for (let i = 0; i < SUBSCRIBERS; i++) {
        const res = await t.request({ method: 'POST', url: '/v1/webhooks', payload: { url: `${rx.url}/s${i}`, events: ['shipment.created'] } });
        assert.equal(res.statusCode, 201);
      }
      for (let i = 0; i < EVENTS; i += 4) await Promise.all([0, 1, 2, 3].map(() => createShipment(t)));
      await rx.waitFor(SUBSCRIBERS * EVENTS, 60_000);
      // Anything sent twice would arrive within this pause.
      await new Promise((r) => setTimeout(r, 500));
      const pairs = rx.received.map((r) => `${r.path} ${r.headers['webhook-id']}`);
      assert.equal(pairs.length, SUBSCRIBERS * EVENTS);
      assert.equal(new Set(pairs).size, SUBSCRIBERS * EVENTS);
      const attempts = await t.ctx.db.selectFrom('webhook_attempts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(attempts.n), SUBSCRIBERS * EVENTS);
    } finally {
      for (const w of workers) await kill(w, 'SIGTERM');
      await rx.close();
      await t.close();
    }
  });
});

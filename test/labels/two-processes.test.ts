// Two service instances on one PostgreSQL (as two processes would be): tracking numbers stay unique
// and the one-active-label rule holds across them. SQLite is one process's embedded file, so this is
// PostgreSQL only.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { openContext } from '../../src/bootstrap.ts';
import { buildApp } from '../../src/app.ts';
import type { AppContext } from '../../src/context.ts';
import { createAccount, createApiKey } from '../../src/auth/credentials.ts';
import { ALL_SCOPES } from '../../src/auth/scopes.ts';
import { isValidTrackingNumber } from '../../src/carriers/index.ts';
import { POSTGRES_URL, dropSchema, sampleShipment } from '../helpers.ts';

describe('two service instances on one PostgreSQL', () => {
  const schema = `t_${process.pid}_labels2p_${Math.random().toString(36).slice(2, 8)}`;
  const instances: { ctx: AppContext; app: FastifyInstance }[] = [];
  let apiKey = '';

  before(async () => {
    const config = loadConfig({ APP_ENV: 'development', DATABASE_URL: POSTGRES_URL, PUBLIC_BASE_URL: 'http://localhost:8080', LOG_LEVEL: 'warn' }, '0.0.0-test');
    const quiet = new Writable({ write: (_c, _e, cb) => cb() });
    // Both start at once, as two processes would, migrating the same fresh schema.
    const contexts = await Promise.all([0, 1].map(() => openContext(config, createLogger('warn', quiet), { schema })));
    for (const ctx of contexts) instances.push({ ctx, app: await buildApp(ctx) });
    const account = await createAccount(contexts[0]!.db, 'two-processes');
    apiKey = (await createApiKey(contexts[0]!.db, account.id, ALL_SCOPES, false)).key;
  });
  after(async () => {
    for (const { app, ctx } of instances) {
      await app.close();
      await ctx.storage.close();
    }
    await dropSchema(schema);
  });

  const post = (i: number, url: string, payload: object) => instances[i % 2]!.app.inject({ method: 'POST', url, headers: { 'x-api-key': apiKey }, payload });

  it('issues 30 distinct valid tracking numbers when both create labels at once', async () => {
    const shipments = await Promise.all(Array.from({ length: 30 }, async (_, i) => (await post(i, '/v1/shipments', sampleShipment)).json()));
    const results = await Promise.all(shipments.map((s, i) => post(i, '/v1/labels', { shipmentId: s.id })));
    const numbers = results.map((r) => {
      assert.equal(r.statusCode, 201, r.body);
      return r.json().trackingNumber as string;
    });
    for (const n of numbers) assert.ok(isValidTrackingNumber('UPS', n), n);
    assert.equal(new Set(numbers).size, numbers.length);
  });

  it('gives one 201 and one 409 when each instance labels the same shipment', async () => {
    for (let round = 0; round < 5; round++) {
      const s = (await post(0, '/v1/shipments', sampleShipment)).json();
      const results = await Promise.all([post(0, '/v1/labels', { shipmentId: s.id }), post(1, '/v1/labels', { shipmentId: s.id })]);
      assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 409], results.map((r) => r.body).join('\n'));
    }
  });
});

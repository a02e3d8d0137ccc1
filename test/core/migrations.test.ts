// Migrations run at start-up and are safe when several processes start at once on one PostgreSQL.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { openContext } from '../../src/bootstrap.ts';
import { createAccount } from '../../src/auth/credentials.ts';
import { issueAccessToken, verifyAccessToken } from '../../src/auth/tokens.ts';
import { tokenSettings } from '../../src/auth/tokens.ts';
import type { AppContext } from '../../src/context.ts';
import { POSTGRES_URL, dropSchema } from '../helpers.ts';
import { runAdmin } from './support.ts';

const MIGRATIONS = readdirSync(new URL('../../src/db/migrations/', import.meta.url)).filter((f) => /^\d{4}_.*\.ts$/.test(f)).map((f) => f.replace(/\.ts$/, '')).sort();

async function admin(query: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return await client.query(query, params);
  } finally {
    await client.end();
  }
}

function freshSchema(tag: string): string {
  return `t_${process.pid}_mig${tag}_${Math.random().toString(36).slice(2, 8)}`;
}

/** Tables, the migrations recorded as done, and the signing keys, of one schema. */
async function schemaState(schema: string) {
  const tables = (await admin('select table_name from information_schema.tables where table_schema = $1 order by 1', [schema])).rows.map((r) => r.table_name as string);
  const done = (await admin(`select name from ${schema}.kysely_migration order by name`)).rows.map((r) => r.name as string);
  const keys = (await admin(`select purpose, count(*)::int as n from ${schema}.signing_keys where retired_at is null group by purpose order by purpose`)).rows;
  return { tables, done, keys };
}

describe('migrations on one PostgreSQL', () => {
  const schemas: string[] = [];
  after(async () => {
    for (const s of schemas) await dropSchema(s);
  });

  it('three service instances opening one fresh schema at once all start, and the schema is complete once', async () => {
    const schema = freshSchema('a');
    schemas.push(schema);
    const config = loadConfig({ APP_ENV: 'development', DATABASE_URL: POSTGRES_URL }, '0.0.0-test');
    const contexts: AppContext[] = await Promise.all([1, 2, 3].map(() => openContext(config, createLogger('silent'), { schema })));
    try {
      const state = await schemaState(schema);
      assert.deepEqual(state.done, MIGRATIONS, 'every migration recorded exactly once');
      for (const table of ['accounts', 'api_keys', 'oauth_clients', 'signing_keys', 'service_secrets', 'idempotency_keys', 'shipments', 'domain_events', 'kysely_migration']) {
        assert.ok(state.tables.includes(table), `table ${table} in ${state.tables.join(', ')}`);
      }
      for (const { n } of state.keys) assert.ok(n >= 1);
      // Whatever key each instance signs with, every instance verifies every other's tokens.
      const account = await createAccount(contexts[0]!.db, 'racer');
      for (const signer of contexts) {
        const token = await issueAccessToken(signer.keys, tokenSettings(signer), { accountId: account.id, subject: 'x', clientId: 'x', scopes: ['read:shipments'] });
        for (const verifier of contexts) {
          const check = await verifyAccessToken(verifier.keys, tokenSettings(verifier), token.accessToken);
          if (!check.ok) {
            // An instance learns about a key another one created by reloading; force it like the JWKS route does.
            await verifier.keys.reload();
            assert.ok((await verifyAccessToken(verifier.keys, tokenSettings(verifier), token.accessToken)).ok);
          }
        }
      }
      // And they agree on the shared secrets.
      assert.ok(contexts.every((c) => c.urlKey.equals(contexts[0]!.urlKey)));
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from service_secrets`.execute(contexts[0]!.db);
      assert.ok(rows[0]!.n >= 1);
    } finally {
      await Promise.all(contexts.map((c) => c.storage.close()));
    }
  });

  it('two processes started at once on one fresh schema both succeed', async () => {
    const schema = freshSchema('b');
    schemas.push(schema);
    await admin(`create schema ${schema}`);
    const url = new URL(POSTGRES_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const env = { DATABASE_URL: url.toString(), APP_ENV: 'development' };
    const [a, b] = await Promise.all([runAdmin(['account', 'create', 'first', '--json'], env), runAdmin(['account', 'create', 'second', '--json'], env)]);
    assert.equal(a.code, 0, a.stderr);
    assert.equal(b.code, 0, b.stderr);
    const state = await schemaState(schema);
    assert.deepEqual(state.done, MIGRATIONS);
    const accounts = (await admin(`select name from ${schema}.accounts order by name`)).rows.map((r) => r.name);
    assert.deepEqual(accounts, ['first', 'second']);
  });

  it('a restart runs nothing again', async () => {
    const schema = freshSchema('c');
    schemas.push(schema);
    const config = loadConfig({ APP_ENV: 'development', DATABASE_URL: POSTGRES_URL }, '0.0.0-test');
    const first = await openContext(config, createLogger('silent'), { schema });
    const before = await schemaState(schema);
    await first.storage.close();
    const second = await openContext(config, createLogger('silent'), { schema });
    await second.storage.close();
    assert.deepEqual(await schemaState(schema), before);
  });

  it('a schema beside ours with Kysely\'s tables (another app, another test) does not confuse the migrator', async () => {
    const neighbour = freshSchema('n');
    const schema = freshSchema('d');
    schemas.push(neighbour, schema);
    await admin(`create schema ${neighbour}; create table ${neighbour}.kysely_migration (name varchar(255) primary key, timestamp varchar(255) not null); create table ${neighbour}.kysely_migration_lock (id varchar(255) primary key, is_locked integer not null default 0)`);
    const config = loadConfig({ APP_ENV: 'development', DATABASE_URL: POSTGRES_URL }, '0.0.0-test');
    const ctx = await openContext(config, createLogger('silent'), { schema });
    await ctx.storage.close();
    assert.deepEqual((await schemaState(schema)).done, MIGRATIONS);
  });
});

describe('migrations on one SQLite file', () => {
  it('three processes started at once on a fresh file all succeed (the second waits for the first)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'migrate-sqlite-'));
    try {
      const env = { DATABASE_URL: `sqlite:${join(dir, 'shipping.db')}`, APP_ENV: 'development' };
      const results = await Promise.all(['a', 'b', 'c'].map((name) => runAdmin(['account', 'create', name, '--json'], env)));
      for (const r of results) assert.equal(r.code, 0, `${r.stdout} ${r.stderr}`);
      const list = await runAdmin(['account', 'list', '--json'], env);
      assert.deepEqual(JSON.parse(list.stdout).accounts.map((a: { name: string }) => a.name).sort(), ['a', 'b', 'c']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Contract §1: settings, their defaults, production's refusals, and the BOOTSTRAP_* credentials.
import { after, describe, it } from 'node:test';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { ConfigError, adminDatabase, loadConfig } from '../../src/config.ts';
import { outboundPolicy } from '../../src/webhooks/outbound.ts';
import Fastify from 'fastify';
import fc from 'fast-check';
import { closeContext, ensureBootstrapCredentials, openContext } from '../../src/bootstrap.ts';
import { createLogger } from '../../src/log.ts';
import { sql } from 'kysely';
import { revokeApiKey } from '../../src/auth/credentials.ts';
import { randomToken } from '../../src/auth/secrets.ts';
import { randomBytes } from 'node:crypto';
import { forEachDatabase, withTestApp } from '../helpers.ts';
import { freePort, spawnChild, tokenRequest } from './support.ts';

const LIVE_KEY = 'sk_live_Zq8Lw3NvT1xK7pR2mB9cY4dH6fJ0gS5aEuWtQiOo';
const STRONG_SECRET = 'x7Qp9LmZ2vR8kT4wN6yB3cH5jF1dS0gA';
const PRODUCTION = { APP_ENV: 'production', PUBLIC_BASE_URL: 'https://ship.example.com', DATABASE_URL: 'postgres://db.example/ship' };

describe('settings (README, Configuration)', () => {
  it('defaults: development, 127.0.0.1:8080, base URLs from the port, the embedded database, sandbox on', () => {
    const c = loadConfig({});
    assert.equal(c.env, 'development');
    assert.equal(c.host, '127.0.0.1');
    assert.equal(c.port, 8080);
    assert.equal(c.publicBaseUrl, 'http://localhost:8080');
    assert.equal(c.baseUrl, 'http://localhost:8080/v1');
    assert.equal(c.authBaseUrl, 'http://localhost:8080');
    assert.equal(c.databaseUrl, 'sqlite:./data/shipping.db');
    assert.equal(c.bootstrapApiKey, undefined);
    assert.equal(c.bootstrapClientId, undefined);
    assert.equal(c.sandboxTracking, true);
    assert.deepEqual(c.webhookRetrySchedule, [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
    assert.deepEqual(c.webhookAllowedCidrs, []);
    assert.equal(c.webhookAllowPrivate, true);
    assert.equal(c.accessTokenTtlSeconds, 3600);
  });

  it('PORT moves the default base URL; AUTH_BASE_URL defaults to PUBLIC_BASE_URL; trailing slashes go', () => {
    assert.equal(loadConfig({ PORT: '9000' }).publicBaseUrl, 'http://localhost:9000');
    const c = loadConfig({ PUBLIC_BASE_URL: 'http://api.local:8080/' });
    assert.equal(c.publicBaseUrl, 'http://api.local:8080');
    assert.equal(c.authBaseUrl, 'http://api.local:8080');
    assert.equal(c.baseUrl, 'http://api.local:8080/v1');
    assert.equal(loadConfig({ AUTH_BASE_URL: 'http://auth.local/' }).authBaseUrl, 'http://auth.local');
  });

  it('production: listens on 0.0.0.0, sandbox off, private webhook targets off', () => {
    const c = loadConfig(PRODUCTION);
    assert.equal(c.host, '0.0.0.0');
    assert.equal(c.sandboxTracking, false);
    assert.equal(c.webhookAllowPrivate, false);
    assert.equal(loadConfig({ ...PRODUCTION, SANDBOX_TRACKING: '1' }).sandboxTracking, true);
  });

  it('staging is its own environment: sandbox off by default, private webhook targets only when listed', () => {
    const c = loadConfig({ APP_ENV: 'staging' });
    assert.equal(c.env, 'staging');
    assert.equal(c.webhookAllowPrivate, false);
    assert.equal(loadConfig({ APP_ENV: 'staging', SANDBOX_TRACKING: '0' }).sandboxTracking, false);
  });

  const refused: [string, Record<string, string>, RegExp][] = [
    ['a missing PUBLIC_BASE_URL', { APP_ENV: 'production' }, /PUBLIC_BASE_URL is required/],
    ['an http PUBLIC_BASE_URL', { ...PRODUCTION, PUBLIC_BASE_URL: 'http://ship.example.com' }, /https/],
    ['an http AUTH_BASE_URL', { ...PRODUCTION, AUTH_BASE_URL: 'http://auth.example.com' }, /https/],
    ['a sk_test_ BOOTSTRAP_API_KEY', { ...PRODUCTION, BOOTSTRAP_API_KEY: `sk_test_${'a'.repeat(40)}` }, /BOOTSTRAP_API_KEY/],
    ['a short BOOTSTRAP_API_KEY', { ...PRODUCTION, BOOTSTRAP_API_KEY: 'sk_live_short' }, /BOOTSTRAP_API_KEY/],
    ['a BOOTSTRAP_API_KEY without the sk_live_ prefix', { ...PRODUCTION, BOOTSTRAP_API_KEY: 'x'.repeat(48) }, /BOOTSTRAP_API_KEY/],
    ['a short BOOTSTRAP_CLIENT_SECRET', { ...PRODUCTION, BOOTSTRAP_CLIENT_ID: 'ops', BOOTSTRAP_CLIENT_SECRET: 'secret' }, /BOOTSTRAP_CLIENT_SECRET/],
    ['an in-memory database', { ...PRODUCTION, DATABASE_URL: 'sqlite::memory:' }, /in-memory/],
    ...['sqlite:', 'sqlite:file::memory:', 'sqlite:file::memory:?cache=shared', 'sqlite:file:x.db?mode=memory', 'sqlite:file:'].map(
      (url): [string, Record<string, string>, RegExp] => [`an in-memory database spelled ${url}`, { ...PRODUCTION, DATABASE_URL: url }, /in-memory/],
    ),
  ];
  for (const [name, env, message] of refused) {
    it(`production refuses ${name}`, () => {
      assert.throws(() => loadConfig(env), (err: Error) => err instanceof ConfigError && message.test(err.message));
    });
  }

  it('production accepts strong bootstrap credentials', () => {
    const c = loadConfig({ ...PRODUCTION, BOOTSTRAP_API_KEY: LIVE_KEY, BOOTSTRAP_CLIENT_ID: 'ops', BOOTSTRAP_CLIENT_SECRET: STRONG_SECRET });
    assert.equal(c.bootstrapApiKey, LIVE_KEY);
    assert.equal(c.bootstrapClientSecret, STRONG_SECRET);
  });

  const invalid: [string, Record<string, string>][] = [
    ['an unknown APP_ENV', { APP_ENV: 'prod' }],
    ['a PORT that is not a port', { PORT: 'eighty' }],
    ['a PORT out of range', { PORT: '70000' }],
    ['a DATABASE_URL of another kind', { DATABASE_URL: 'mysql://localhost/x' }],
    ['a PUBLIC_BASE_URL that is not a URL', { PUBLIC_BASE_URL: 'localhost:8080' }],
    ['a PUBLIC_BASE_URL that is not http(s)', { PUBLIC_BASE_URL: 'ftp://example.com' }],
    ['BOOTSTRAP_CLIENT_ID without its secret', { BOOTSTRAP_CLIENT_ID: 'ops' }],
    ['a WEBHOOK_RETRY_SCHEDULE with a non-number', { WEBHOOK_RETRY_SCHEDULE: '5,soon' }],
    ['a WEBHOOK_RETRY_SCHEDULE pause past a week', { WEBHOOK_RETRY_SCHEDULE: '5,1e13' }],
    ['a WEBHOOK_RETRY_SCHEDULE pause in hexadecimal', { WEBHOOK_RETRY_SCHEDULE: '0x10,5' }],
    ['a WEBHOOK_RETRY_SCHEDULE with an empty entry', { WEBHOOK_RETRY_SCHEDULE: '5,,30' }],
    ['a postgres DATABASE_URL that is no URL', { DATABASE_URL: 'postgres://u@127.0.0.1:notaport/x' }],
    ['an OTEL_EXPORTER_OTLP_PROTOCOL this service does not speak', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }],
    ['an OTEL_EXPORTER_OTLP_ENDPOINT that is not a URL', { OTEL_EXPORTER_OTLP_ENDPOINT: 'notaurl' }],
    ['an OTEL_EXPORTER_OTLP_TRACES_ENDPOINT that is not http(s)', { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://collector:4317' }],
    ['a WEBHOOK_ALLOWED_CIDRS entry that is not a range', { WEBHOOK_ALLOWED_CIDRS: '10.0.0.0' }],
    ['a SANDBOX_TRACKING that is not a boolean', { SANDBOX_TRACKING: 'maybe' }],
  ];
  for (const [name, env] of invalid) {
    it(`any environment refuses ${name}`, () => {
      assert.throws(() => loadConfig(env), ConfigError);
    });
  }

  it('an in-memory database in development: sqlite::memory: or sqlite:, never a URI spelling (each connection would get its own)', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).databaseUrl, 'sqlite::memory:');
    assert.equal(loadConfig({ DATABASE_URL: 'sqlite:' }).databaseUrl, 'sqlite:');
    assert.equal(loadConfig({ DATABASE_URL: 'sqlite:file:/tmp/x.db' }).databaseUrl, 'sqlite:file:/tmp/x.db');
    for (const url of ['sqlite:file::memory:', 'sqlite:file:x.db?mode=memory']) {
      assert.throws(() => loadConfig({ DATABASE_URL: url }), (err: Error) => err instanceof ConfigError && err.message.startsWith('DATABASE_URL: an in-memory database is written sqlite::memory:'), url);
    }
  });

  it('a DATABASE_URL that is no URL is refused with both forms the README shows, and never repeated', () => {
    assert.throws(
      () => loadConfig({ DATABASE_URL: 'postgres://u:s3cret@/var/run/postgresql:x/db' }),
      (err: Error) => err instanceof ConfigError && err.message.includes('postgres://user:password@host:port/database') && err.message.includes('%2Fvar%2Frun%2Fpostgresql') && !err.message.includes('s3cret'),
    );
  });

  it('an OTLP protocol set for other programs does not stop the start while tracing is off', () => {
    assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).tracing.protocol, undefined);
    // Nor while OTEL_SDK_DISABLED turns it off, an endpoint set or not.
    assert.deepEqual(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_SDK_DISABLED: 'TRUE' }).tracing, { endpoint: undefined, protocol: undefined, serviceName: 'shipping-platform' });
    assert.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).tracing.protocol, 'http/json');
  });

  it('LOG_LEVEL: one of pino\'s levels or silent', () => {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) assert.equal(loadConfig({ LOG_LEVEL: level }).logLevel, level);
    for (const bad of ['verbose', 'INFO', 'warning']) {
      assert.throws(() => loadConfig({ LOG_LEVEL: bad }), (err: Error) => err instanceof ConfigError && err.message === `LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "${bad}"`);
    }
  });

  it('ports and counts are whole numbers in range, refused by name', () => {
    const settings = ['PORT', 'METRICS_PORT', 'WEBHOOK_ALLOWED_PORTS', 'WEBHOOK_TIMEOUT_MS', 'ACCESS_TOKEN_TTL', 'WORKER_IDLE_MS', 'RATE_LIMIT_BURST', 'MAX_CONNECTIONS', 'RENDER_THREADS', 'DATABASE_POOL_SIZE'];
    for (const name of settings) {
      for (const bad of ['8080.5', '1e3', '0x10', '-1', '99999999']) {
        assert.throws(() => loadConfig({ [name]: bad }), (err: Error) => err instanceof ConfigError && err.message.startsWith(`${name} must be a whole number from `), `${name}=${bad}`);
      }
    }
    assert.throws(() => loadConfig({ PORT: '8080.5', PUBLIC_BASE_URL: 'http://ship.local' }), (err: Error) => err instanceof ConfigError && err.message === 'PORT must be a whole number from 0 to 65535, got "8080.5"');
    assert.equal(loadConfig({ PORT: '0', PUBLIC_BASE_URL: 'http://ship.local' }).port, 0);
    assert.equal(loadConfig({ PORT: '0', ROLE: 'worker' }).port, 0, 'a worker listens on no port');
    // Any free port with no PUBLIC_BASE_URL would hand out links to http://localhost:0.
    for (const role of ['all', 'api']) {
      assert.throws(() => loadConfig({ PORT: '0', ROLE: role }), (err: Error) => err instanceof ConfigError && err.message.startsWith('PORT=0 (any free port) needs PUBLIC_BASE_URL'), role);
    }
    assert.equal(loadConfig({ METRICS_PORT: '65535' }).metricsPort, 65535);
    // Rates and step lengths may be fractions.
    assert.equal(loadConfig({ RATE_LIMIT_PER_SECOND: '0.5', SANDBOX_STEP_SECONDS: '0.05' }).rateLimitPerSecond, 0.5);
    assert.throws(() => loadConfig({ RATE_LIMIT_PER_SECOND: '1e2' }), (err: Error) => err instanceof ConfigError && err.message.startsWith('RATE_LIMIT_PER_SECOND must be a number'));
  });

  it('WEBHOOK_ALLOWED_CIDRS: every entry an address of its family with a prefix it can have', () => {
    assert.deepEqual(loadConfig({ WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/8, fd00::/8,0.0.0.0/0,192.168.1.7/32,::/128' }).webhookAllowedCidrs, ['10.0.0.0/8', 'fd00::/8', '0.0.0.0/0', '192.168.1.7/32', '::/128']);
    for (const bad of ['10.0.0.0/33', '999.1.1.1/99', '999.1.1.1/8', 'fd00::/129', '10.0.0.0/-1', '10.0.0.0/', 'abc/8', '10.0.0.0/8/8', '10.0.0.0']) {
      assert.throws(() => loadConfig({ WEBHOOK_ALLOWED_CIDRS: `192.168.0.0/16,${bad}` }), (err: Error) => err instanceof ConfigError && err.message.startsWith(`WEBHOOK_ALLOWED_CIDRS: "${bad}" is not a CIDR range`), bad);
    }
  });

  // Candidates near the valid forms: addresses of both families with any prefix, and noise.
  const rangeLike = fc.oneof(
    fc.tuple(fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), fc.string({ maxLength: 8 })), fc.option(fc.oneof(fc.integer({ min: -2, max: 200 }).map(String), fc.string({ maxLength: 3 })))).map(([a, p]) => (p === null ? a : `${a}/${p}`)),
    fc.string({ maxLength: 12 }),
  );

  it('WEBHOOK_ALLOWED_CIDRS: whatever is accepted at start, the webhook delivery can use (property)', () => {
    fc.assert(
      fc.property(rangeLike, (entry) => {
        let config: ReturnType<typeof loadConfig>;
        try {
          config = loadConfig({ WEBHOOK_ALLOWED_CIDRS: entry });
        } catch (err) {
          return err instanceof ConfigError && err.message.startsWith('WEBHOOK_ALLOWED_CIDRS: ');
        }
        outboundPolicy(config);
        return true;
      }),
      { numRuns: 2000 },
    );
  });

  it('TRUST_PROXY: a hop count, or addresses and CIDR ranges; anything else is refused by name', () => {
    assert.deepEqual(loadConfig({ TRUST_PROXY: '::1, fd00::/8,192.168.1.7' }).trustProxy, ['::1', 'fd00::/8', '192.168.1.7']);
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, false);
    for (const bad of ['abc', 'true', '10.0.0.0/33', '10.0.0.0/0', '::/0', '999.1.1.1', '2001:db8::/129', '10.0.0.1/x', '11', '1.5']) {
      assert.throws(() => loadConfig({ TRUST_PROXY: bad }), (err: Error) => err instanceof ConfigError && err.message.startsWith('TRUST_PROXY must be '), bad);
    }
  });

  it('TRUST_PROXY: whatever is accepted at start, Fastify takes (property)', () => {
    fc.assert(
      fc.property(rangeLike, (entry) => {
        let config: ReturnType<typeof loadConfig>;
        try {
          config = loadConfig({ TRUST_PROXY: entry });
        } catch (err) {
          return err instanceof ConfigError && err.message.startsWith('TRUST_PROXY must be ');
        }
        // Hop counts become a function (src/app.ts); the address lists go to Fastify as they are.
        if (Array.isArray(config.trustProxy)) Fastify({ trustProxy: config.trustProxy });
        return true;
      }),
      { numRuns: 1000 },
    );
  });

  it('the banner\'s admin hint names the database without any password, and none for an in-memory one', () => {
    assert.equal(adminDatabase('sqlite:./data/shipping.db'), '');
    assert.equal(adminDatabase('sqlite:/srv/ship.db'), "DATABASE_URL='sqlite:/srv/ship.db' ");
    assert.equal(adminDatabase('postgres://postgres@127.0.0.1:5432/shipping'), "DATABASE_URL='postgres://postgres@127.0.0.1:5432/shipping' ");
    // Also a password with an unencoded '@', '/' or '#', which a URL parser reads as a host and a path.
    for (const url of ['postgres://ops:s3cret@db:5432/shipping', 'postgres://ops@db/shipping?password=s3cret', 'postgres://ops@db/shipping?sslpassword=s3cret&sslmode=require', 'postgres://ops:p@s3cret/w#rd@db:5432/shipping', 'postgres://ops:s3/cret@db/shipping?sslmode=require', 'postgres://ops:2024?s3cret@db/shipping', 'postgres://ops:?s3cret@db/x', 'postgres://ops@db/shipping?password=s3#cret']) {
      const hint = adminDatabase(url)!;
      assert.doesNotMatch(hint, /s3|cret|w#rd/, url);
      assert.match(hint, /PASSWORD/, url);
    }
    assert.equal(adminDatabase('sqlite::memory:'), null);
  });

  it('outside development, weak bootstrap secrets stop the start with a message; random ones pass', () => {
    for (const appEnv of ['staging', 'production']) {
      const base = { APP_ENV: appEnv, PUBLIC_BASE_URL: 'https://api.example.org' };
      for (const weak of ['x', 'a'.repeat(40), 'abababababababababababababababababab', 'A1b2C3d4'.repeat(5), 'abcdefghijklmnopqrstuvwxyz0123456789', randomToken(21)]) {
        assert.throws(() => loadConfig({ ...base, BOOTSTRAP_CLIENT_ID: 'ops', BOOTSTRAP_CLIENT_SECRET: weak }), /BOOTSTRAP_CLIENT_SECRET is too easy to guess/, `${appEnv} ${weak}`);
        assert.throws(() => loadConfig({ ...base, BOOTSTRAP_API_KEY: `sk_live_${weak}` }), /BOOTSTRAP_API_KEY is too easy to guess/, `${appEnv} ${weak}`);
      }
      // The message's example, run as a shell would, is taken.
      const message = (() => {
        try {
          loadConfig({ ...base, BOOTSTRAP_API_KEY: 'sk_live_abc' });
        } catch (err) {
          return (err as Error).message;
        }
        return '';
      })();
      const example = /e\.g\. (.+)$/.exec(message)?.[1];
      assert.ok(example?.endsWith('$(openssl rand -hex 24)'), message);
      const key = example!.replace('$(openssl rand -hex 24)', randomBytes(24).toString('hex'));
      assert.doesNotThrow(() => loadConfig({ ...base, BOOTSTRAP_API_KEY: key }), `${appEnv}: ${key}`);
      assert.doesNotThrow(() => loadConfig({ ...base, BOOTSTRAP_CLIENT_ID: 'ops', BOOTSTRAP_CLIENT_SECRET: randomToken(43), BOOTSTRAP_API_KEY: `sk_live_${randomToken(43)}` }));
      // What the README suggests: openssl rand -base64 32 (44 characters) and -hex 24 (48).
      for (let i = 0; i < 50; i++) {
        assert.doesNotThrow(() => loadConfig({ ...base, BOOTSTRAP_CLIENT_ID: 'ops', BOOTSTRAP_CLIENT_SECRET: randomBytes(32).toString('base64') }));
        assert.doesNotThrow(() => loadConfig({ ...base, BOOTSTRAP_CLIENT_ID: 'ops', BOOTSTRAP_CLIENT_SECRET: randomBytes(24).toString('hex') }));
      }
    }
    // Development takes anything: a laptop's first start needs no ceremony.
    assert.doesNotThrow(() => loadConfig({ BOOTSTRAP_CLIENT_ID: 'ops', BOOTSTRAP_CLIENT_SECRET: 'x' }));
  });

  it('REQUEST_TIMEOUT_MS, MAX_CONNECTIONS and TRUST_PROXY: defaults, values, refusals', () => {
    const d = loadConfig({});
    assert.deepEqual([d.requestTimeoutMs, d.maxConnections, d.trustProxy], [30_000, 4096, false]);
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.1, 10.1.0.0/16' }).trustProxy, ['10.0.0.1', '10.1.0.0/16']);
    assert.throws(() => loadConfig({ TRUST_PROXY: 'everyone' }), ConfigError);
    assert.throws(() => loadConfig({ REQUEST_TIMEOUT_MS: '0' }), ConfigError);
    assert.throws(() => loadConfig({ MAX_CONNECTIONS: 'many' }), ConfigError);
  });

  it('DATABASE_POOL_SIZE: 10 by default, a whole number from 1 to 1000', () => {
    assert.equal(loadConfig({}).databasePoolSize, 10);
    assert.equal(loadConfig({ DATABASE_POOL_SIZE: '4' }).databasePoolSize, 4);
    for (const bad of ['0', '2.5', 'many', '1001']) assert.throws(() => loadConfig({ DATABASE_POOL_SIZE: bad }), /DATABASE_POOL_SIZE/, bad);
  });

  it('SQLITE_SYNCHRONOUS: normal by default, full in production (a power cut loses no commit there), either when told', () => {
    assert.equal(loadConfig({}).sqliteSynchronous, 'normal');
    assert.equal(loadConfig(PRODUCTION).sqliteSynchronous, 'full');
    assert.equal(loadConfig({ SQLITE_SYNCHRONOUS: 'full' }).sqliteSynchronous, 'full');
    assert.equal(loadConfig({ ...PRODUCTION, SQLITE_SYNCHRONOUS: 'normal' }).sqliteSynchronous, 'normal');
    for (const bad of ['FULL', 'off', 'extra', '2']) assert.throws(() => loadConfig({ SQLITE_SYNCHRONOUS: bad }), /SQLITE_SYNCHRONOUS must be one of normal, full/, bad);
  });

  it('the SQLite database syncs at every commit with SQLITE_SYNCHRONOUS=full, at checkpoints without', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlite-sync-'));
    try {
      for (const [settings, expected] of [[{}, 1], [{ SQLITE_SYNCHRONOUS: 'full' }, 2]] as const) {
        const config = loadConfig({ ...settings, DATABASE_URL: `sqlite:${join(dir, `${expected}.db`)}` });
        const ctx = await openContext(config, createLogger('silent'));
        try {
          const [row] = (await sql<{ synchronous: number }>`PRAGMA synchronous`.execute(ctx.db)).rows;
          assert.equal(Number(row!.synchronous), expected, JSON.stringify(settings));
        } finally {
          await closeContext(ctx);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('DATABASE_TIMEOUT_MS: 30 s by default, a whole number of milliseconds from 100 to 3600000', () => {
    assert.equal(loadConfig({}).databaseTimeoutMs, 30_000);
    assert.equal(loadConfig({ DATABASE_TIMEOUT_MS: '5000' }).databaseTimeoutMs, 5000);
    for (const bad of ['0', '99', '1.5', 'soon', '3600001']) assert.throws(() => loadConfig({ DATABASE_TIMEOUT_MS: bad }), /DATABASE_TIMEOUT_MS/, bad);
  });

  it('the process refuses to start on a bad setting: exit code 78 and the reason on stderr', async () => {
    const child = spawnChild(process.execPath, ['src/main.ts'], { APP_ENV: 'production', PUBLIC_BASE_URL: '', DATABASE_URL: 'sqlite::memory:' });
    const { code } = await child.exited;
    assert.equal(code, 78);
    assert.match(child.stderr(), /configuration error: PUBLIC_BASE_URL is required in production/);
    assert.equal(child.stdout(), '');
  });

  it('a database the start cannot open: one line naming DATABASE_URL with its password hidden, 78 when the setting is to blame, 69 when it is out of reach', async () => {
    const port = await freePort();
    // A folder with a file that is not a database, and no PostgreSQL socket in it.
    const notADatabase = mkdtempSync(join(tmpdir(), 'not-a-database-'));
    writeFileSync(join(notADatabase, 'file.db'), 'not a database, just text\n'.repeat(100));
    after(() => rmSync(notADatabase, { recursive: true, force: true }));
    const cases: [string, number, RegExp][] = [
      [`postgres://postgres:s3cret@127.0.0.1:${port}/test`, 69, new RegExp(`^database unavailable: DATABASE_URL postgres://postgres:PASSWORD@127\\.0\\.0\\.1:${port}/test cannot be used now: .*ECONNREFUSED.*\\n$`)],
      // No server at the Unix socket (the README's form): not started yet, so worth a retry.
      [`postgres://postgres:s3cret@${encodeURIComponent(notADatabase)}/test`, 69, /^database unavailable: DATABASE_URL postgres:\/\/postgres:PASSWORD@.* cannot be used now: connect ENOENT .*\n$/],
      ['postgres://postgres:s3cret@not-a-host.invalid:5432/test', 78, /^configuration error: DATABASE_URL postgres:\/\/postgres:PASSWORD@not-a-host\.invalid:5432\/test cannot be opened: .*ENOTFOUND.*\n$/],
      [`sqlite:${notADatabase}/file.db`, 78, /^configuration error: DATABASE_URL sqlite:.*file\.db cannot be opened: file is not a database\n$/],
      // TLS the server cannot give: none at all, or (where it has some) a certificate nobody vouches for.
      ['postgres://postgres:s3cret@127.0.0.1:5432/test?sslmode=verify-full', 78, /^configuration error: DATABASE_URL postgres:\/\/postgres:PASSWORD@127\.0\.0\.1:5432\/test\?sslmode=verify-full cannot be opened: .*(SSL|certificate|altnames).*\n$/i],
    ];
    await Promise.all(
      cases.map(async ([url, exit, line]) => {
        const child = spawnChild(process.execPath, ['src/main.ts'], { DATABASE_URL: url, METRICS_PORT: '0', PORT: String(await freePort()) });
        const { code } = await child.exited;
        assert.equal(code, exit, `${url}: ${child.stderr()}`);
        assert.match(child.stderr(), line);
        assert.doesNotMatch(child.stderr() + child.stdout(), /s3cret/);
      }),
    );
  });

  it('settings that once crashed the start later are refused first: exit 78, one line naming them, no stack', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL'],
      [{ TRUST_PROXY: 'abc' }, 'TRUST_PROXY'],
      [{ PORT: '8080.5', PUBLIC_BASE_URL: 'http://ship.local' }, 'PORT'],
    ];
    await Promise.all(
      cases.map(async ([env, name]) => {
        const child = spawnChild(process.execPath, ['src/main.ts'], { DATABASE_URL: 'sqlite::memory:', METRICS_PORT: '0', ...env });
        const { code } = await child.exited;
        assert.equal(code, 78, `${JSON.stringify(env)}: ${child.stderr()}`);
        assert.match(child.stderr(), new RegExp(`^configuration error: ${name}[: ][^\\n]*\\n$`), JSON.stringify(env));
      }),
    );
  });
});

forEachDatabase((database) => {
  describe('BOOTSTRAP_API_KEY and BOOTSTRAP_CLIENT_ID/SECRET (ensureBootstrapCredentials)', () => {
    const key = `sk_test_${randomToken(32)}`;
    const clientId = `ops-${randomToken(6)}`;
    const t = withTestApp(database, { BOOTSTRAP_API_KEY: key, BOOTSTRAP_CLIENT_ID: clientId, BOOTSTRAP_CLIENT_SECRET: STRONG_SECRET });

    it('are ensured for account "default" with every scope, and work', async () => {
      assert.deepEqual(await ensureBootstrapCredentials(t.ctx), {});
      const res = await t.app.inject({ method: 'POST', url: '/v1/shipments', headers: { 'x-api-key': key }, payload: (await import('../helpers.ts')).sampleShipment });
      assert.equal(res.statusCode, 201, res.body);
      const owner = await t.ctx.db.selectFrom('shipments').innerJoin('accounts', 'accounts.id', 'shipments.account_id').select('accounts.name').where('shipments.id', '=', res.json().id).executeTakeFirstOrThrow();
      assert.equal(owner.name, 'default');
      const token = await tokenRequest(t, { grant_type: 'client_credentials', client_id: clientId, client_secret: STRONG_SECRET });
      assert.equal(token.statusCode, 200, token.body);
      assert.equal(token.json().scope.split(' ').length, 9);
    });

    it('ensuring again, even from two processes at once, changes nothing', async () => {
      await Promise.all([ensureBootstrapCredentials(t.ctx), ensureBootstrapCredentials(t.ctx)]);
      const keys = await t.ctx.db.selectFrom('api_keys').innerJoin('accounts', 'accounts.id', 'api_keys.account_id').select('api_keys.id').where('accounts.name', '=', 'default').execute();
      assert.equal(keys.length, 1);
      const clients = await t.ctx.db.selectFrom('oauth_clients').select('id').where('client_id', '=', clientId).execute();
      assert.equal(clients.length, 1);
      const accounts = await t.ctx.db.selectFrom('accounts').select('id').where('name', '=', 'default').execute();
      assert.equal(accounts.length, 1);
    });

    it('a new BOOTSTRAP_CLIENT_SECRET replaces the old one at the next start', async () => {
      const rotated = `${STRONG_SECRET}-rotated`;
      const config = loadConfig({ APP_ENV: 'development', DATABASE_URL: database.url, BOOTSTRAP_CLIENT_ID: clientId, BOOTSTRAP_CLIENT_SECRET: rotated });
      await ensureBootstrapCredentials({ ...t.ctx, config });
      assert.equal((await tokenRequest(t, { grant_type: 'client_credentials', client_id: clientId, client_secret: STRONG_SECRET })).statusCode, 401);
      assert.equal((await tokenRequest(t, { grant_type: 'client_credentials', client_id: clientId, client_secret: rotated })).statusCode, 200);
    });

    it('a revoked bootstrap key stays revoked when the service starts again', async () => {
      await revokeApiKey(t.ctx.db, key.slice(0, 16));
      await ensureBootstrapCredentials(t.ctx);
      const res = await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': key } });
      assert.equal(res.statusCode, 401);
    });
  });

  describe('first start in development without BOOTSTRAP_API_KEY', () => {
    const t = withTestApp(database);

    it('creates one working key for account "default", once', async () => {
      const first = await ensureBootstrapCredentials(t.ctx);
      assert.match(first.createdKey ?? '', /^sk_test_/);
      const res = await t.app.inject({ method: 'GET', url: '/v1/shipments', headers: { 'x-api-key': first.createdKey! } });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(await ensureBootstrapCredentials(t.ctx), {});
    });

    it('outside development nothing is created without bootstrap settings', async () => {
      const config = loadConfig({ APP_ENV: 'staging', DATABASE_URL: database.url });
      const before = await t.ctx.db.selectFrom('api_keys').select('id').execute();
      assert.deepEqual(await ensureBootstrapCredentials({ ...t.ctx, config }), {});
      assert.equal((await t.ctx.db.selectFrom('api_keys').select('id').execute()).length, before.length);
    });
  });
});

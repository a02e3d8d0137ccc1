// Every setting, parsed and validated once (README, Configuration). Nothing else reads process.env.

import { DEFAULT_SDR_RATES, isCurrencyCode } from './carriers/customs.ts';
import { availableParallelism } from 'node:os';
import { isIP } from 'node:net';
import pino from 'pino';
import { DEFAULT_DATABASE_TIMEOUT_MS, DEFAULT_POOL_SIZE } from './db/postgres.ts';

export const APP_ENVS = ['development', 'staging', 'production'] as const;
export type AppEnv = (typeof APP_ENVS)[number];
export const ROLES = ['all', 'api', 'worker'] as const;
export const SQLITE_SYNCHRONOUS = ['normal', 'full'] as const;
export type SqliteSynchronous = (typeof SQLITE_SYNCHRONOUS)[number];
export type Role = (typeof ROLES)[number];

export interface Config {
  env: AppEnv;
  role: Role;
  host: string;
  port: number;
  publicBaseUrl: string;
  /** `{base_url}`: the public origin plus `/v1`. */
  baseUrl: string;
  /** `{auth_url}`: the token endpoint is `${authBaseUrl}/oauth/token`. */
  authBaseUrl: string;
  databaseUrl: string;
  /**
   * SQLite: `full` syncs the log to disk at every commit, so a power cut or an operating-system crash
   * loses nothing committed; `normal` only at checkpoints, so such a crash may lose the last commits
   * (a crash of the process alone never does). SQLITE_SYNCHRONOUS; `full` in production.
   */
  sqliteSynchronous: SqliteSynchronous;
  /** PostgreSQL: connections each pool of this process opens at most (the API's; in ROLE=all the jobs thread's too). */
  databasePoolSize: number;
  /**
   * PostgreSQL: the longest a statement may run, and the longest a request waits for a connection
   * (or for one to be opened), before it fails; a request then gets 503.
   */
  databaseTimeoutMs: number;
  bootstrapApiKey?: string;
  bootstrapClientId?: string;
  bootstrapClientSecret?: string;
  sandboxTracking: boolean;
  /** Seconds between two sandbox tracking steps of one parcel. */
  sandboxStepSeconds: number;
  webhookRetrySchedule: number[];
  webhookAllowedCidrs: string[];
  /** Private address ranges are reachable by webhooks (development only unless listed). */
  webhookAllowPrivate: boolean;
  /** Ports webhook targets may use besides 80 and 443 (outside development). */
  webhookAllowedPorts: number[];
  webhookTimeoutMs: number;
  accessTokenTtlSeconds: number;
  logLevel: string;
  /** Milliseconds the worker sleeps when it found nothing to do. */
  workerIdleMs: number;
  /** Threads that render documents. */
  renderThreads: number;
  /** Bytes of rendered documents kept in memory (0: none). */
  renderCacheBytes: number;
  /** Bytes of rendered documents kept in the database (0: none). */
  renderStoreBytes: number;
  /** The in-process caches (src/cache.ts) are on. */
  caches: boolean;
  /** A request (headers and body) must arrive within this many milliseconds, or it is answered 408. */
  requestTimeoutMs: number;
  /** Open connections this process accepts; more are refused until some close. */
  maxConnections: number;
  /** Tokens a second per credential (0: no limits), and the bucket's size. */
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  /** SDR per unit of each currency, for the CN22/CN23 choice (CUSTOMS_SDR_RATES over the defaults). */
  sdrRates: Readonly<Record<string, number>>;
  /** The metrics listener (§17): port (0: none) and host. */
  metricsPort: number;
  metricsHost: string;
  /** OpenTelemetry tracing (§17): on when an OTLP endpoint is set. */
  tracing: { endpoint: string | undefined; protocol: string | undefined; serviceName: string };
  /** Which X-Forwarded-For hops to believe (TRUST_PROXY). */
  trustProxy: false | number | string[];
  version: string;
}

export class ConfigError extends Error {}

const DEFAULT_RETRY_SCHEDULE = '5,300,1800,7200,18000,36000,50400,72000,86400';
// Values that appear in docs and examples: never acceptable as a production secret.
const KNOWN_DEV_SECRETS = new Set(['secret', 'changeme', 'password', 'dev', 'test', 'example']);

function parseBool(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(value.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(value.toLowerCase())) return false;
  throw new ConfigError(`${name} must be 1 or 0, got "${value}"`);
}

// Plain decimal digits only: `Number()` would also take `0x1F90`, `1e3` and blanks.
function parseNumber(name: string, value: string | undefined, fallback: number, min: number, max: number, whole = false): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!(whole ? /^\d+$/ : /^\d+(\.\d+)?$/).test(value) || n < min || n > max) {
    throw new ConfigError(`${name} must be a ${whole ? 'whole number' : 'number'} from ${min} to ${max}, got "${value}"`);
  }
  return n;
}

function parseInteger(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  return parseNumber(name, value, fallback, min, max, true);
}

const MB = 1024 * 1024;

function parseUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be http or https`);
  return url.toString().replace(/\/+$/, '');
}

/**
 * Why `entry` is not an IP address or range (`10.0.0.1`, `10.0.0.0/8`, `fd00::/8`) as node:net's
 * BlockList and Fastify's proxy check take it, or null when it is: an IPv4 or IPv6 address, and a prefix
 * from `minPrefix` to 32 (IPv4) or 128 (IPv6); a prefix is needed unless `single` addresses may be given.
 */
function rangeProblem(entry: string, { minPrefix, single }: { minPrefix: number; single: boolean }): string | null {
  const slash = entry.lastIndexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return `${address} is not an IPv4 or IPv6 address`;
  if (slash === -1) return single ? null : 'the prefix length is missing';
  const bits = entry.slice(slash + 1);
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(bits) || Number(bits) < minPrefix || Number(bits) > max) return `an IPv${family} prefix length is ${minPrefix} to ${max}`;
  return null;
}

export function parseCidrList(name: string, value: string | undefined): string[] {
  if (!value) return [];
  const list = value.split(',').map((s) => s.trim()).filter(Boolean);
  for (const cidr of list) {
    const problem = rangeProblem(cidr, { minPrefix: 0, single: false });
    if (problem) throw new ConfigError(`${name}: "${cidr}" is not a CIDR range like 10.0.0.0/8 (${problem})`);
  }
  return list;
}

/** The embedded database of `npm start` without settings. */
export const DEFAULT_DATABASE_URL = 'sqlite:./data/shipping.db';

/**
 * SQLite's in-memory database, however spelled (`sqlite::memory:`, `sqlite:`, and the URI forms
 * `sqlite:file::memory:`, `sqlite:file:x?mode=memory`); `sqlite:file:` is SQLite's private temporary one.
 */
export function inMemoryDatabase(databaseUrl: string): boolean {
  if (!databaseUrl.startsWith('sqlite:')) return false;
  const path = databaseUrl.slice('sqlite:'.length);
  if (path === '' || path === ':memory:') return true;
  if (!path.startsWith('file:')) return false;
  const [name, query = ''] = path.slice('file:'.length).split('?', 2) as [string, string?];
  return name === '' || name === ':memory:' || new URLSearchParams(query).get('mode') === 'memory';
}

/**
 * What the admin command needs in front of it to reach this process's database: nothing on the default
 * file, else the same DATABASE_URL with every password left for the operator to fill in (the banner
 * is on standard output, with the logs). Null for an in-memory database, which no other process reaches.
 */
export function adminDatabase(databaseUrl: string): string | null {
  if (inMemoryDatabase(databaseUrl)) return null;
  if (databaseUrl === DEFAULT_DATABASE_URL) return '';
  return `DATABASE_URL='${shownDatabaseUrl(databaseUrl)}' `;
}

/** DATABASE_URL as it may be printed: every password (in the URL or its query) written PASSWORD. */
export function shownDatabaseUrl(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) return databaseUrl;
  // Everything from the scheme to the last '@' is taken for user information, however a URL parser
  // reads it: a password with an unencoded '@', '/', '?' or '#' would otherwise be printed in part
  // (an '@' further on, in the query, only hides more than needed).
  let text = databaseUrl;
  const start = text.indexOf('://');
  const at = text.lastIndexOf('@');
  if (start >= 0 && at > start) {
    const user = text.slice(start + 3, at);
    if (user.includes(':')) text = `${text.slice(0, start + 3)}${user.slice(0, user.indexOf(':'))}:PASSWORD${text.slice(at)}`;
  }
  if (!URL.canParse(text)) return '(not a valid URL)';
  const url = new URL(text);
  url.hash = ''; // a '#' in a query's password would leave the rest of it here
  if (url.password) url.password = 'PASSWORD';
  for (const name of [...url.searchParams.keys()]) if (/password/i.test(name)) url.searchParams.set(name, 'PASSWORD');
  return url.href;
}

function looksLikeDevSecret(value: string): boolean {
  return value.length < 32 || KNOWN_DEV_SECRETS.has(value.toLowerCase()) || value.startsWith('sk_test_');
}

/** Bits of entropy a secret shows: its length times the Shannon entropy of its own characters. */
export function secretStrengthBits(secret: string): number {
  const counts = new Map<string, number>();
  for (const c of secret) counts.set(c, (counts.get(c) ?? 0) + 1);
  const n = [...secret].length;
  let perChar = 0;
  for (const k of counts.values()) perChar -= (k / n) * Math.log2(k / n);
  return n * perChar;
}

/**
 * A bootstrap secret outside development: at least 32 characters whose own spread shows 112 bits or
 * more, not a repetition of a shorter piece, and without a run of 8 neighbouring characters in order
 * (`abcdefgh`, `12345678`). `openssl rand -base64 32` or `-hex 24` pass; `aaaa…`, `abab…` and a typed
 * alphabet do not.
 */
export const MIN_SECRET_BITS = 112;
export const MIN_SECRET_LENGTH = 32;

export function weakSecret(secret: string): boolean {
  if ([...secret].length < MIN_SECRET_LENGTH || secretStrengthBits(secret) < MIN_SECRET_BITS) return true;
  // A repetition of a shorter piece (`A1b2C3d4A1b2C3d4…`).
  for (let period = 1; period <= secret.length / 2; period++) {
    if (secret.length % period === 0 && secret.slice(0, period).repeat(secret.length / period) === secret) return true;
  }
  // A run of 8 characters counting up or down (`abcdefgh`, `98765432`).
  let run = 1;
  for (let i = 1; i < secret.length; i++) {
    const step = secret.charCodeAt(i) - secret.charCodeAt(i - 1);
    const before = i > 1 ? secret.charCodeAt(i - 1) - secret.charCodeAt(i - 2) : 0;
    run = Math.abs(step) === 1 && (run === 1 || step === before) ? run + 1 : 1;
    if (run >= 8) return true;
  }
  return false;
}

/**
 * TRUST_PROXY: unset (the default) trusts no proxy, so the client address is the TCP peer's; a number
 * trusts that many proxy hops of X-Forwarded-For; otherwise a comma-separated list of the proxies'
 * addresses or CIDR ranges.
 */
function parseTrustProxy(value: string | undefined): false | number | string[] {
  const v = (value ?? '').trim();
  if (v === '' || v === '0' || v === 'false') return false;
  if (/^\d+$/.test(v)) return parseInteger('TRUST_PROXY', v, 0, 1, 10);
  const list = v.split(',').map((s) => s.trim()).filter(Boolean);
  for (const entry of list) {
    // A /0 would believe every hop, whoever sent it; Fastify refuses it too.
    const problem = rangeProblem(entry, { minPrefix: 1, single: true });
    if (problem) throw new ConfigError(`TRUST_PROXY must be a hop count from 1 to 10 or proxy addresses (IP or CIDR, comma-separated), got "${entry}" (${problem})`);
  }
  return list;
}

function parsePortList(value: string | undefined): number[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => parseInteger('WEBHOOK_ALLOWED_PORTS', s, 0, 1, 65535));
}

export function loadConfig(env: Record<string, string | undefined> = process.env, version = '0.0.0'): Config {
  const appEnv = (env.APP_ENV || 'development') as AppEnv;
  if (!APP_ENVS.includes(appEnv)) throw new ConfigError(`APP_ENV must be one of ${APP_ENVS.join(', ')}, got "${env.APP_ENV}"`);
  const production = appEnv === 'production';
  const role = (env.ROLE || 'all') as Role;
  if (!ROLES.includes(role)) throw new ConfigError(`ROLE must be one of ${ROLES.join(', ')}, got "${env.ROLE}"`);

  const port = parseInteger('PORT', env.PORT, 8080, 0, 65535);
  const host = env.HOST || (production ? '0.0.0.0' : '127.0.0.1');
  if (production && !env.PUBLIC_BASE_URL) throw new ConfigError('PUBLIC_BASE_URL is required in production');
  // Links, the OpenAPI servers and the token issuer are made before listening: with any free port they would name port 0.
  if (port === 0 && role !== 'worker' && !env.PUBLIC_BASE_URL) {
    throw new ConfigError('PORT=0 (any free port) needs PUBLIC_BASE_URL: the links the API hands out name its port, which is not known before it listens');
  }
  const publicBaseUrl = parseUrl('PUBLIC_BASE_URL', env.PUBLIC_BASE_URL || `http://localhost:${port}`);
  const authBaseUrl = env.AUTH_BASE_URL ? parseUrl('AUTH_BASE_URL', env.AUTH_BASE_URL) : publicBaseUrl;
  if (production && (!publicBaseUrl.startsWith('https://') || !authBaseUrl.startsWith('https://'))) {
    throw new ConfigError('PUBLIC_BASE_URL and AUTH_BASE_URL must be https in production');
  }

  const databaseUrl = env.DATABASE_URL || DEFAULT_DATABASE_URL;
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with sqlite: or postgres://');
  }
  // The URL itself is not repeated: it may hold a password.
  if (!databaseUrl.startsWith('sqlite:') && !URL.canParse(databaseUrl)) {
    throw new ConfigError('DATABASE_URL is not a valid URL; write it postgres://user:password@host:port/database, or with the server\'s Unix socket directory as the host, postgres://user@%2Fvar%2Frun%2Fpostgresql/database');
  }
  if (inMemoryDatabase(databaseUrl)) {
    if (production) throw new ConfigError('an in-memory database is not allowed in production');
    // The service opens more than one connection, and each URI-form in-memory database is a connection's own.
    if (databaseUrl.startsWith('sqlite:file:')) throw new ConfigError(`DATABASE_URL: an in-memory database is written sqlite::memory:, got "${databaseUrl}"`);
  }
  const sqliteSynchronous = (env.SQLITE_SYNCHRONOUS || (production ? 'full' : 'normal')) as SqliteSynchronous;
  if (!SQLITE_SYNCHRONOUS.includes(sqliteSynchronous)) throw new ConfigError(`SQLITE_SYNCHRONOUS must be one of ${SQLITE_SYNCHRONOUS.join(', ')}, got "${env.SQLITE_SYNCHRONOUS}"`);
  const logLevel = env.LOG_LEVEL || 'info';
  const logLevels = [...Object.keys(pino.levels.values), 'silent'];
  if (!logLevels.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${logLevels.join(', ')}, got "${logLevel}"`);

  const bootstrapClientId = env.BOOTSTRAP_CLIENT_ID || undefined;
  const bootstrapClientSecret = env.BOOTSTRAP_CLIENT_SECRET || undefined;
  if (Boolean(bootstrapClientId) !== Boolean(bootstrapClientSecret)) {
    throw new ConfigError('BOOTSTRAP_CLIENT_ID and BOOTSTRAP_CLIENT_SECRET must be set together');
  }
  const bootstrapApiKey = env.BOOTSTRAP_API_KEY || undefined;
  if (appEnv !== 'development') {
    // A guessable bootstrap credential is an open door anywhere reachable: staging included.
    for (const [name, value] of [['BOOTSTRAP_API_KEY', bootstrapApiKey?.replace(/^sk_(live|test)_/, '')], ['BOOTSTRAP_CLIENT_SECRET', bootstrapClientSecret]] as const) {
      if (value !== undefined && (weakSecret(value) || KNOWN_DEV_SECRETS.has(value.toLowerCase()))) {
        // The example is one the checks below take as it is: an API key keeps its prefix.
        const example = name === 'BOOTSTRAP_API_KEY' ? `${production ? 'sk_live_' : 'sk_test_'}$(openssl rand -hex 24)` : '$(openssl rand -base64 32)';
        throw new ConfigError(`${name} is too easy to guess for ${appEnv}: use ${MIN_SECRET_LENGTH} or more random characters, e.g. ${example}`);
      }
    }
  }
  if (production) {
    if (bootstrapApiKey && (looksLikeDevSecret(bootstrapApiKey) || !bootstrapApiKey.startsWith('sk_live_'))) {
      throw new ConfigError('BOOTSTRAP_API_KEY must be a sk_live_ key of at least 32 characters in production');
    }
    if (bootstrapClientSecret && looksLikeDevSecret(bootstrapClientSecret)) {
      throw new ConfigError('BOOTSTRAP_CLIENT_SECRET must be at least 32 random characters in production');
    }
  }

  // Each pause in plain decimal seconds, at most a week: a larger one is no retry (and past the
  // dates a timestamp can hold, none at all).
  const schedule = (env.WEBHOOK_RETRY_SCHEDULE || DEFAULT_RETRY_SCHEDULE).split(',').map((s) => s.trim());
  const webhookRetrySchedule = schedule.map((s) => {
    if (s === '') throw new ConfigError('WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds, got an empty entry');
    return parseNumber('WEBHOOK_RETRY_SCHEDULE: each pause', s, 0, 0, 604_800);
  });

  return {
    env: appEnv,
    role,
    host,
    port,
    publicBaseUrl,
    baseUrl: `${publicBaseUrl}/v1`,
    authBaseUrl,
    databaseUrl,
    sqliteSynchronous,
    databasePoolSize: parseInteger('DATABASE_POOL_SIZE', env.DATABASE_POOL_SIZE, DEFAULT_POOL_SIZE, 1, 1000),
    databaseTimeoutMs: parseInteger('DATABASE_TIMEOUT_MS', env.DATABASE_TIMEOUT_MS, DEFAULT_DATABASE_TIMEOUT_MS, 100, 3_600_000),
    bootstrapApiKey,
    bootstrapClientId,
    bootstrapClientSecret,
    sandboxTracking: parseBool('SANDBOX_TRACKING', env.SANDBOX_TRACKING, !production),
    sandboxStepSeconds: parseNumber('SANDBOX_STEP_SECONDS', env.SANDBOX_STEP_SECONDS, 60, 0, 86400),
    webhookRetrySchedule,
    webhookAllowedCidrs: parseCidrList('WEBHOOK_ALLOWED_CIDRS', env.WEBHOOK_ALLOWED_CIDRS),
    webhookAllowPrivate: appEnv === 'development',
    webhookAllowedPorts: parsePortList(env.WEBHOOK_ALLOWED_PORTS),
    webhookTimeoutMs: parseInteger('WEBHOOK_TIMEOUT_MS', env.WEBHOOK_TIMEOUT_MS, 15000, 100, 60000),
    accessTokenTtlSeconds: parseInteger('ACCESS_TOKEN_TTL', env.ACCESS_TOKEN_TTL, 3600, 60, 86400),
    logLevel,
    workerIdleMs: parseInteger('WORKER_IDLE_MS', env.WORKER_IDLE_MS, 500, 10, 60000),
    renderThreads: parseInteger('RENDER_THREADS', env.RENDER_THREADS, availableParallelism(), 1, 64),
    renderCacheBytes: parseInteger('RENDER_CACHE_MB', env.RENDER_CACHE_MB, 64, 0, 65536) * MB,
    renderStoreBytes: parseInteger('RENDER_STORE_MB', env.RENDER_STORE_MB, 1024, 0, 1048576) * MB,
    caches: parseBool('CACHES', env.CACHES, true),
    requestTimeoutMs: parseInteger('REQUEST_TIMEOUT_MS', env.REQUEST_TIMEOUT_MS, 30_000, 100, 600_000),
    maxConnections: parseInteger('MAX_CONNECTIONS', env.MAX_CONNECTIONS, 4096, 1, 1_000_000),
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    rateLimitPerSecond: parseNumber('RATE_LIMIT_PER_SECOND', env.RATE_LIMIT_PER_SECOND, 100, 0, 1_000_000),
    rateLimitBurst: parseInteger('RATE_LIMIT_BURST', env.RATE_LIMIT_BURST, 200, 1, 10_000_000),
    sdrRates: parseSdrRates(env.CUSTOMS_SDR_RATES),
    metricsPort: parseInteger('METRICS_PORT', env.METRICS_PORT, 9464, 0, 65535),
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    tracing: tracingSettings(env),
    version,
  };
}

/** Where traces go (none: tracing is off), how, and under which service name. */
function tracingSettings(env: NodeJS.ProcessEnv): Config['tracing'] {
  // OTEL_SDK_DISABLED=true turns tracing off whatever else is set, as OpenTelemetry reads it.
  const endpoint = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' ? undefined : otlpEndpoint(env);
  // Checked only where tracing is on: a protocol set for other programs must not stop this one.
  return { endpoint, protocol: endpoint ? otlpProtocol(env) : undefined, serviceName: env.OTEL_SERVICE_NAME || 'shipping-platform' };
}

/** The OTLP endpoint of traces, an http(s) URL (the traces setting over the general one), or none. */
function otlpEndpoint(env: NodeJS.ProcessEnv): string | undefined {
  const name = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const value = env[name];
  return value ? parseUrl(name, value) : undefined;
}

/** OTLP over HTTP, in protobuf (the default) or JSON; gRPC is not spoken here. */
function otlpProtocol(env: NodeJS.ProcessEnv): string | undefined {
  const name = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const value = env[name];
  if (!value) return undefined;
  if (value !== 'http/protobuf' && value !== 'http/json') throw new ConfigError(`${name} must be http/protobuf or http/json (gRPC is not supported), got "${value}"`);
  return value;
}

/** `USD=0.74,EUR=0.85`: SDR per unit of each currency named, over the defaults. */
function parseSdrRates(value: string | undefined): Readonly<Record<string, number>> {
  const rates: Record<string, number> = { ...DEFAULT_SDR_RATES };
  for (const part of (value ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^([A-Z]{3})=(\d+(?:\.\d+)?)$/.exec(part);
    if (!m || !isCurrencyCode(m[1]!) || !(Number(m[2]) > 0)) throw new ConfigError(`CUSTOMS_SDR_RATES: "${part}" is not CURRENCY=rate (e.g. USD=0.74, SDR per unit, above 0, ISO 4217 code)`);
    rates[m[1]!] = Number(m[2]);
  }
  return rates;
}

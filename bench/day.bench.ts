// A warehouse's day: the real service (`node src/main.ts`, API and worker in one process as `npm start`
// runs it) under a realistic mix of reads, writes and label downloads from 8 accounts, on SQLite and on
// PostgreSQL. It drives the service only through its public interfaces (the process, its environment,
// the admin command line and HTTP), so the very same day runs against the service of another git
// revision: `npm run bench -- day --against <rev>` (bench/run.ts passes the revision as BENCH_AGAINST).
//
// Each day: a fresh database; 8 accounts (`default` through BOOTSTRAP_API_KEY, 7 through the admin
// command line) each with a webhook for all four event kinds pointing to a receiver in its own
// process; BENCH_DAY_SHIPMENTS (2,000) shipments with a label each; then two phases of the same mix:
//  1. closed loop (capacity): 16 virtual users on 16 connections, each picking its next operation by
//     weight from a seeded PRNG (the same day on every run) and sending it when its previous one is
//     answered, for BENCH_DAY_WARMUP (3) unmeasured and BENCH_DAY_SECONDS (20) measured seconds. Its
//     total ops/s is the day's capacity. Its latencies say little about the code: at saturation a
//     closed loop keeps 16 requests queued, so by Little's law the median is about 16 ÷ ops/s
//     whatever the service does;
//  2. open loop (latency): the same mix, the same operation bodies and choices, at a steady rate R:
//     requests arrive as a Poisson process (exponential gaps from a seeded PRNG) and each is sent when
//     it is due, whatever is still in flight, over up to 64 connections (beyond that it waits for a
//     connection, and that wait counts), for BENCH_DAY_WARMUP (3) unmeasured and BENCH_DAY_RATE_SECONDS
//     (20) measured seconds. Latency runs from the moment a request was due, not when it was sent, so a
//     stall cannot hide behind requests the client did not send (coordinated omission). R is
//     BENCH_DAY_RATE, or else half the closed-loop ops/s of the against revision's first day on that
//     database (it runs first in odd rounds, this one in even rounds), or without --against half of
//     this checkout's own; then GET /v1/shipments/{id} by itself, open loop at its share of R (25 %),
//     the "same read alone" of target (2), which is read from this phase; then (this side only) the very same arrivals to a bare
//     node:http server in the receiver's process: the machine's floor, which no service can beat;
// after each phase every webhook delivery must be done; then each operation alone (closed loop) for
// BENCH_DAY_ALONE_SECONDS (5).
// Settings: BENCH_DAY_SECONDS, BENCH_DAY_RATE, BENCH_DAY_RATE_SECONDS, BENCH_DAY_ALONE_SECONDS,
// BENCH_DAY_WARMUP, BENCH_DAY_SHIPMENTS, BENCH_DAY_ROUNDS (rounds per revision, alternating),
// BENCH_DAY_SEED, BENCH_DAY_DATABASES (sqlite,postgres), BENCH_DAY_PG (the local Unix socket if the
// server answers there, else postgres://postgres@127.0.0.1:5432),
// BENCH_AGAINST, BENCH_DAY_THIS=<rev> to run the "this" side from a revision instead of the working tree,
// and BENCH_DAY_THIS_ENV="CACHES=0,RENDER_THREADS=1" to give the "this" service settings of its own
// (with BENCH_DAY_THIS=HEAD and --against HEAD: one setting's effect, side by side).
// Smoke: BENCH_DAY_SECONDS=3 BENCH_DAY_RATE_SECONDS=3 BENCH_DAY_ALONE_SECONDS=1 BENCH_DAY_SHIPMENTS=200 npm run bench -- day
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Pool, type Dispatcher } from 'undici';
import pg from 'pg';
import { ChildReceiver } from './child-receiver.ts';
import { fmtMs, fmtRate, OUT_DIR, percentile, progress, table } from './lib.ts';
import { logTail, machineCpuMs, postgresCpuMs, prepareRevision, processCpuMs, ROOT, startService, THREAD_KINDS, thisTitle, threadCpuMs, type Revision, type Service } from './revision.ts';

const env = process.env;
const SECONDS = Number(env.BENCH_DAY_SECONDS ?? 20);
/** The open-loop phase: measured seconds (after WARMUP_SECONDS at the same rate) and a fixed rate, if given. */
const RATE_SECONDS = Number(env.BENCH_DAY_RATE_SECONDS ?? 20);
const FIXED_RATE = env.BENCH_DAY_RATE ? Number(env.BENCH_DAY_RATE) : undefined;
const ALONE_SECONDS = Number(env.BENCH_DAY_ALONE_SECONDS ?? 5);
const WARMUP_SECONDS = Number(env.BENCH_DAY_WARMUP ?? 3);
const SHIPMENTS = Number(env.BENCH_DAY_SHIPMENTS ?? 2000);
// Two by default beside another revision, so that each side runs first once (see run()).
const ROUNDS = Math.max(1, Number(env.BENCH_DAY_ROUNDS ?? (env.BENCH_AGAINST ? 2 : 1)));
const SEED = Number(env.BENCH_DAY_SEED ?? 20260115);
const DATABASES = (env.BENCH_DAY_DATABASES ?? 'sqlite,postgres').split(',').map((s) => s.trim()).filter(Boolean);
const PG_TCP = 'postgres://postgres@127.0.0.1:5432';
const PG_SOCKET_DIR = '/var/run/postgresql';
const PG_SOCKET = `postgres://postgres@${encodeURIComponent(PG_SOCKET_DIR)}`;
/**
 * Where both services reach PostgreSQL: BENCH_DAY_PG if set; else its Unix socket when the server
 * answers there, as the README recommends for a server on the same machine; else TCP on loopback.
 * The first that answers is `pgBase`, and the report says which.
 */
const PG_CANDIDATES = env.BENCH_DAY_PG ? [env.BENCH_DAY_PG.replace(/\/+$/, '')] : existsSync(`${PG_SOCKET_DIR}/.s.PGSQL.5432`) ? [PG_SOCKET, PG_TCP] : [PG_TCP];
let pgBase = PG_CANDIDATES[0]!;

/** A PostgreSQL URL as the report shows it: the transport, and the URL without its password. */
function pgWhere(base: string): string {
  const url = new URL(base);
  url.password = '';
  const host = decodeURIComponent(url.hostname) || url.searchParams.get('host') || '';
  return `${host.startsWith('/') ? 'its Unix socket' : 'TCP'} (${url.href})`;
}
const AGAINST = env.BENCH_AGAINST || undefined;
/** Where the services' whole logs are kept (with NODE_OPTIONS=--trace-gc in BENCH_DAY_THIS_ENV, say); by default they go with the run's folder. */
const LOG_DIR = env.BENCH_DAY_LOG_DIR || undefined;
/** Run "this" side from a git revision too instead of this working tree (e.g. to check that equal code gives a ratio of 1). */
const THIS_REV = env.BENCH_DAY_THIS || undefined;
/** Settings of the "this" service only: `NAME=value` pairs separated by commas. */
const THIS_ENV: Record<string, string> = Object.fromEntries(
  (env.BENCH_DAY_THIS_ENV ?? '')
    .split(',')
    .map((pair) => pair.trim())
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 1) throw new Error(`BENCH_DAY_THIS_ENV: ${pair} is not NAME=value`);
      return [pair.slice(0, eq), pair.slice(eq + 1)];
    }),
);

const CONNECTIONS = 16;
/** Connections of the open-loop phase: enough that the client is not the queue at R. */
const RATE_CONNECTIONS = 64;
const ACCOUNTS = 8;
/** Labels whose documents the mix downloads (× 3 formats), so repeats happen as in a warehouse. */
const DOWNLOAD_LABELS = Math.min(200, Math.floor(SHIPMENTS / 4));
/** Documents of "download, repeat": the first 2 labels × 3 formats. */
const REPEAT_LABELS = 2;
/** Bound on waiting for webhook deliveries after the seed and after the mix. */
const WEBHOOK_WAIT_MS = 120_000;
const EVENTS_PER_BATCH = 5;
const EVENT_KINDS = ['shipment.created', 'shipment.in_transit', 'shipment.delivered', 'shipment.exception'];

// ---------------------------------------------------------------------------------------------
// The webhook receiver, in its own process: answers 200 at once and counts unique webhook-id headers.
// It also answers GET with a fixed body the size of a shipment's, uncounted: the machine's floor, a
// bare node:http server driven by the same load generator at the read's rate (see FLOOR).

/** The floor's answer: 1.2 KB, of the order of a GET /v1/shipments/{id} answer (about 1 KB). */
const FLOOR_BODY = JSON.stringify({ floor: 'x'.repeat(1200) });

function runReceiver(): void {
  let ids = new Set<string>();
  let requests = 0;
  const server = createHttpServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(FLOOR_BODY) }).end(FLOOR_BODY);
      return;
    }
    req.on('data', () => {});
    req.on('end', () => {
      requests++;
      const id = req.headers['webhook-id'];
      if (typeof id === 'string') ids.add(id);
      res.writeHead(200, { 'content-length': '0' }).end();
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
  process.on('message', (m: string) => {
    if (m === 'count') process.send!({ count: { unique: ids.size, requests } });
    if (m === 'reset') {
      ids = new Set();
      requests = 0;
      process.send!({ reset: true });
    }
    if (m === 'stop') server.close(() => process.exit(0));
  });
  process.on('disconnect', () => process.exit(0));
}

class Receiver extends ChildReceiver {
  constructor() {
    super(fileURLToPath(import.meta.url), '--day-receiver');
  }
  count(): Promise<{ unique: number; requests: number }> {
    return this.ask('count');
  }
}

// ---------------------------------------------------------------------------------------------
// Seeded randomness and the day's data

/** mulberry32: a small, fast, seeded PRNG; the same seed gives the same day. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(rng: () => number, list: readonly T[]): T => list[Math.floor(rng() * list.length)]!;

/** Real US cities with a ZIP code inside them, [city, state, ZIP]. */
const PLACES = [
  ['New York', 'NY', '10118'], ['Austin', 'TX', '78701'], ['Boston', 'MA', '02108'], ['Chicago', 'IL', '60601'],
  ['Los Angeles', 'CA', '90012'], ['Seattle', 'WA', '98101'], ['Denver', 'CO', '80202'], ['Atlanta', 'GA', '30303'],
  ['Miami', 'FL', '33131'], ['Louisville', 'KY', '40202'], ['Portland', 'OR', '97204'], ['Phoenix', 'AZ', '85004'],
  ['Minneapolis', 'MN', '55401'], ['Nashville', 'TN', '37203'], ['Philadelphia', 'PA', '19107'], ['San Francisco', 'CA', '94103'],
  ['Salt Lake City', 'UT', '84111'], ['Detroit', 'MI', '48226'], ['Columbus', 'OH', '43215'], ['Kansas City', 'MO', '64106'],
  ['New Orleans', 'LA', '70112'], ['Albuquerque', 'NM', '87102'], ['Boise', 'ID', '83702'], ['Charlotte', 'NC', '28202'],
] as const;
const STREETS = ['350 Fifth Avenue', '1 Main St', '2 Elm St', '77 Harbor Blvd', '1200 Commerce Way', '45 Oak Lane', '9 Pine Court', '310 Market St', '18 Lakeview Dr', '600 Broadway'];
const NAMES = ['Zoë Ångström', 'José Núñez', 'Łukasz Wróbel', 'Renée Dubois', 'Søren Møller', 'Chloé Müller', 'Ana María Peña', 'Björn Öberg', 'Ελένη Παπαδοπούλου', 'Ada Lovelace', 'Grace Hopper', 'Dvořák Antonín'];
/** One warehouse per account: [account name, company, street, city, state, ZIP]. */
const WAREHOUSES = [
  ['default', 'Lager Süd GmbH', '4100 Distribution Dr', 'Memphis', 'TN', '38118'],
  ['lager-nord', 'Lager Nord Inc.', '1 Logistics Pkwy', 'Reno', 'NV', '89502'],
  ['entrepôt-est', 'Entrepôt Est LLC', '8500 Industrial Blvd', 'Allentown', 'PA', '18109'],
  ['almacén-oeste', 'Almacén Oeste Co.', '2200 Cargo Rd', 'Ontario', 'CA', '91761'],
  ['magazzino-centro', 'Magazzino Centro', '5000 Airtech Pkwy', 'Indianapolis', 'IN', '46241'],
  ['varasto-texas', 'Varasto Texas', '3200 Freight Ln', 'Dallas', 'TX', '75261'],
  ['sklad-ohio', 'Sklad Ohio', '2700 Rickenbacker Pkwy', 'Columbus', 'OH', '43217'],
  ['armazém-flórida', 'Armazém Flórida', '1 Port Blvd', 'Jacksonville', 'FL', '32218'],
] as const;
const CARRIER_SERVICES = [['UPS', 'ground'], ['USPS', 'priority_mail'], ['FedEx', 'ground']] as const;

let orderNumber = 0;
export function shipmentBody(rng: () => number, account: number): string {
  const [, company, street, city, state, zip] = WAREHOUSES[account]!;
  const [toCity, toState, toZip] = pick(rng, PLACES);
  const [carrier, service] = pick(rng, CARRIER_SERVICES);
  return JSON.stringify({
    carrier,
    service,
    from: { name: 'Versand', company, street1: street, city, state, postalCode: zip, country: 'US' },
    to: { name: pick(rng, NAMES), street1: pick(rng, STREETS), city: toCity, state: toState, postalCode: toZip, country: 'US' },
    parcel: { weight: { value: 4 + Math.floor(rng() * 60), unit: 'oz' } },
    reference: `Order #${100000 + orderNumber++}`,
  });
}

// ---------------------------------------------------------------------------------------------
// The service of one checkout, started exactly as an operator would

/** `node src/cli/admin.ts <args> --json` in the service's checkout with the service's settings. */
function admin(service: Service, args: string[]): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--disable-warning=ExperimentalWarning', 'src/cli/admin.ts', ...args, '--json'], { cwd: service.root, env: service.env }, (err, stdout, stderr) => {
      let out: Record<string, string> | undefined;
      try {
        out = JSON.parse(stdout.trim().split('\n').pop() ?? '');
      } catch {}
      if (err || !out || out.error) reject(new Error(`admin ${args.join(' ')}: ${out?.error ?? err?.message ?? ''} ${stderr}`.trim()));
      else resolve(out);
    });
  });
}

/**
 * Keeps what the service logged at error level or above (and anything not JSON, e.g. a stack trace)
 * in bench/out/, since the temporary folder goes; returns the file's path relative to the checkout.
 */
function keepErrors(logFile: string, name: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return undefined;
  }
  const lines = text.split('\n').filter((l) => l.trim() !== '' && (!l.startsWith('{') || /"level":(5|6)\d/.test(l)));
  mkdirSync(OUT_DIR, { recursive: true });
  const file = new URL(`${name}.log`, OUT_DIR);
  writeFileSync(file, `${lines.slice(0, 300).join('\n')}\n`);
  return `bench/out/${name}.log`;
}


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// HTTP helpers (undici Pool of 16 connections; bodies always read to the end)

type Body = Dispatcher.ResponseData['body'];
const DUMP = { limit: 2 ** 30 };

async function failure(what: string, status: number, body: Body): Promise<string> {
  const text = await body.text().catch(() => '');
  return `${what}: ${status} ${text.slice(0, 160)}`;
}

/** A JSON call for setting up (not timed); throws unless the status is `expect`. */
async function call<T = any>(pool: Pool, method: 'GET' | 'POST', path: string, key: string | null, body?: unknown, expect = method === 'POST' ? 201 : 200): Promise<{ data: T; headers: Record<string, string | string[] | undefined> }> {
  const headers: Record<string, string> = {};
  if (key) headers['x-api-key'] = key;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await pool.request({ method, path, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.statusCode !== expect) throw new Error(await failure(`${method} ${path}`, res.statusCode, res.body));
  const text = await res.body.text();
  return { data: (text ? JSON.parse(text) : undefined) as T, headers: res.headers };
}

// ---------------------------------------------------------------------------------------------
// Accounts, seed and operations

interface Account {
  index: number;
  name: string;
  key: string;
  headers: Record<string, string>;
  jsonHeaders: Record<string, string>;
  webhookId: string;
  shipments: string[];
  labels: string[];
  tracking: string[];
  /** Per label: 0 no event yet, 1 in_transit, 2 out_for_delivery (every event we send changes the status). */
  state: Uint8Array;
  /** Per label: the last event timestamp sent (ms), so each label's events are strictly increasing. */
  lastTs: Float64Array;
  /** Per label: in an unfinished batch (a label is never in two batches at once, so order holds). */
  busy: Uint8Array;
}

interface Doc {
  path: string;
}

interface Day {
  pool: Pool;
  accounts: Account[];
  /** Documents the mix downloads: DOWNLOAD_LABELS × PDF, PNG, ZPL. */
  downloadSet: Doc[];
  /** "download, repeat": a few of those. */
  repeatSet: Doc[];
  /** "download, first render": documents nobody downloaded, consumed in order. */
  fresh: Doc[];
  freshNext: number;
  /** Webhook events we caused since the webhooks exist: shipments created, accepted status changes. */
  created: number;
  statusChanges: number;
  serverPid: number | undefined;
}

const STOP = Symbol('stop');
const SKIP = Symbol('skip');
type OpOutcome = undefined | string | typeof STOP | typeof SKIP;

interface Vu {
  rng: () => number;
}

interface Kind {
  name: string;
  /** Share of the mix in percent (0 = alone only). */
  weight: number;
  run(day: Day, vu: Vu): Promise<OpOutcome>;
}

function accountOf(day: Day, vu: Vu): Account {
  return day.accounts[Math.floor(vu.rng() * day.accounts.length)]!;
}

async function expectStatus(what: string, res: { statusCode: number; body: Body }, status: number): Promise<OpOutcome> {
  if (res.statusCode === status) {
    await res.body.dump(DUMP);
    return undefined;
  }
  return failure(what, res.statusCode, res.body);
}

const GET_SHIPMENT = 'GET /v1/shipments/{id}';
const KINDS: Kind[] = [
  {
    name: GET_SHIPMENT,
    weight: 25,
    run: async (day, vu) => {
      const a = accountOf(day, vu);
      const id = a.shipments[Math.floor(vu.rng() * a.shipments.length)]!;
      return expectStatus(GET_SHIPMENT, await day.pool.request({ method: 'GET', path: `/v1/shipments/${id}`, headers: a.headers }), 200);
    },
  },
  {
    name: 'GET /v1/labels/{id}',
    weight: 15,
    run: async (day, vu) => {
      const a = accountOf(day, vu);
      const id = a.labels[Math.floor(vu.rng() * a.labels.length)]!;
      return expectStatus('GET /v1/labels/{id}', await day.pool.request({ method: 'GET', path: `/v1/labels/${id}`, headers: a.headers }), 200);
    },
  },
  {
    name: 'GET /v1/labels/{id}/trackingnumber?format=detailed',
    weight: 15,
    run: async (day, vu) => {
      const a = accountOf(day, vu);
      const id = a.labels[Math.floor(vu.rng() * a.labels.length)]!;
      return expectStatus('GET trackingnumber', await day.pool.request({ method: 'GET', path: `/v1/labels/${id}/trackingnumber?format=detailed`, headers: a.headers }), 200);
    },
  },
  {
    name: 'GET /v1/shipments?limit=20',
    weight: 5,
    run: async (day, vu) => {
      const a = accountOf(day, vu);
      return expectStatus('GET /v1/shipments', await day.pool.request({ method: 'GET', path: '/v1/shipments?limit=20', headers: a.headers }), 200);
    },
  },
  {
    name: `POST /v1/tracking/events (${EVENTS_PER_BATCH} events)`,
    weight: 15,
    run: async (day, vu) => {
      const a = accountOf(day, vu);
      const chosen: number[] = [];
      for (let tries = 0; chosen.length < EVENTS_PER_BATCH && tries < 40; tries++) {
        const j = Math.floor(vu.rng() * a.labels.length);
        if (a.busy[j] || chosen.includes(j)) continue;
        chosen.push(j);
      }
      if (chosen.length === 0) return SKIP;
      const statuses: number[] = [];
      const events = chosen.map((j) => {
        a.busy[j] = 1;
        const ts = Math.max(Date.now(), a.lastTs[j]! + 1);
        a.lastTs[j] = ts;
        const next = a.state[j] === 1 ? 2 : 1;
        statuses.push(next);
        return { trackingNumber: a.tracking[j]!, status: next === 1 ? 'in_transit' : 'out_for_delivery', timestamp: new Date(ts).toISOString(), location: 'Louisville, KY, US' };
      });
      try {
        const res = await day.pool.request({ method: 'POST', path: '/v1/tracking/events', headers: a.jsonHeaders, body: JSON.stringify({ events }) });
        if (res.statusCode !== 202) return failure('POST /v1/tracking/events', res.statusCode, res.body);
        const { accepted } = (await res.body.json()) as { accepted: number };
        day.statusChanges += accepted;
        if (accepted !== events.length) return `POST /v1/tracking/events: accepted ${accepted} of ${events.length} new events`;
        chosen.forEach((j, i) => {
          a.state[j] = statuses[i]!;
        });
        return undefined;
      } finally {
        for (const j of chosen) a.busy[j] = 0;
      }
    },
  },
  {
    name: 'new shipment + label (2 POSTs)',
    weight: 15,
    run: async (day, vu) => {
      const a = accountOf(day, vu);
      const s = await day.pool.request({ method: 'POST', path: '/v1/shipments', headers: a.jsonHeaders, body: shipmentBody(vu.rng, a.index) });
      if (s.statusCode !== 201) return failure('POST /v1/shipments', s.statusCode, s.body);
      const { id } = (await s.body.json()) as { id: string };
      day.created++;
      const l = await day.pool.request({ method: 'POST', path: '/v1/labels', headers: a.jsonHeaders, body: JSON.stringify({ shipmentId: id, format: 'PDF', size: '4x6' }) });
      return expectStatus('POST /v1/labels', l, 201);
    },
  },
  {
    name: 'label download (signed url)',
    weight: 10,
    run: async (day, vu) => {
      const doc = day.downloadSet[Math.floor(vu.rng() * day.downloadSet.length)]!;
      return expectStatus('download', await day.pool.request({ method: 'GET', path: doc.path }), 200);
    },
  },
];

const FIRST_RENDER: Kind = {
  name: 'download, first render',
  weight: 0,
  run: async (day) => {
    if (day.freshNext >= day.fresh.length) return STOP;
    const doc = day.fresh[day.freshNext++]!;
    return expectStatus('download (first render)', await day.pool.request({ method: 'GET', path: doc.path }), 200);
  },
};

/** The same generator against a bare node:http server (the receiver's process): what no service can beat on this machine today. */
const FLOOR: Kind = {
  name: 'GET from a bare node:http server',
  weight: 0,
  run: async (day) => expectStatus('floor', await day.pool.request({ method: 'GET', path: '/floor' }), 200),
};

const REPEAT: Kind = {
  name: `download, repeat (${REPEAT_LABELS * 3} documents)`,
  weight: 0,
  run: async (day, vu) => {
    const doc = day.repeatSet[Math.floor(vu.rng() * day.repeatSet.length)]!;
    return expectStatus('download (repeat)', await day.pool.request({ method: 'GET', path: doc.path }), 200);
  },
};

// ---------------------------------------------------------------------------------------------
// The load: 16 virtual users, closed loop, recording only what starts inside the measured window

class Stats {
  lat = new Float64Array(1 << 14);
  n = 0;
  failures = 0;
  firstFailure: string | undefined;
  add(ms: number): void {
    if (this.n === this.lat.length) {
      const grown = new Float64Array(this.n * 2);
      grown.set(this.lat);
      this.lat = grown;
    }
    this.lat[this.n++] = ms;
  }
  fail(message: string): void {
    this.failures++;
    this.firstFailure ??= message;
  }
}

interface OpResult {
  name: string;
  weight: number;
  count: number;
  failures: number;
  p50: number;
  p99: number;
  rate: number;
  firstFailure?: string;
  /** Alone only: server CPU µs per operation. */
  serverCpuPerOp?: number;
  /** Open loop only: the slowest answer. */
  max?: number;
}

/** What a phase reports of CPU, over its recorded window. */
interface CpuUse {
  /** Server CPU µs per recorded operation (its worker's webhook deliveries included). */
  serverCpuPerOp: number;
  /** Cores the server and this load generator kept busy while recording. */
  serverCores: number;
  /** The server's cores by kind of thread (THREAD_KINDS). */
  threadCores: Record<string, number>;
  generatorCores: number;
  /** Cores PostgreSQL's processes kept busy (about 0 on SQLite), and their CPU µs per recorded operation. */
  databaseCores: number;
  databaseCpuPerOp: number;
  /** Cores the whole machine kept busy: all of the above and anything else running. */
  machineCores: number;
}

interface DriveResult extends CpuUse {
  seconds: number;
  ops: number;
  failures: number;
  rate: number;
  kinds: OpResult[];
  stopped: boolean;
}

/**
 * Measures CPU over a phase's recorded window: from `warmupSeconds` after it is called (at once if
 * none) to `end(ops)`, which gives the service's and the load generator's use over `ops` operations.
 */
function cpuWindow(pid: number | undefined, warmupSeconds: number): { end(ops: number): { serverMs: number; use: CpuUse } } {
  const read = () => ({ server: processCpuMs(pid), threads: threadCpuMs(pid), generator: process.cpuUsage(), database: postgresCpuMs(), machine: machineCpuMs(), at: performance.now() });
  let from = { server: NaN, threads: {} as Record<string, number>, generator: process.cpuUsage(), database: NaN, machine: NaN, at: performance.now() };
  if (warmupSeconds <= 0) from = read();
  const timer = warmupSeconds > 0 ? setTimeout(() => (from = read()), warmupSeconds * 1000) : undefined;
  return {
    end(ops) {
      clearTimeout(timer);
      const to = read();
      const wall = to.at - from.at;
      const serverMs = to.server - from.server;
      const generator = process.cpuUsage(from.generator);
      return {
        serverMs,
        use: {
          serverCpuPerOp: (serverMs * 1000) / ops,
          serverCores: serverMs / wall,
          threadCores: threadCores(from.threads, to.threads, wall),
          generatorCores: (generator.user + generator.system) / 1000 / wall,
          databaseCores: (to.database - from.database) / wall,
          databaseCpuPerOp: ((to.database - from.database) * 1000) / ops,
          machineCores: (to.machine - from.machine) / wall,
        },
      };
    },
  };
}

async function drive(day: Day, kinds: Kind[], seed: number, warmupSeconds: number, seconds: number): Promise<DriveResult> {
  const cpu = cpuWindow(day.serverPid, warmupSeconds);
  // Cumulative shares of the weights, for picking an operation (only when there is more than one).
  const total = kinds.reduce((a, k) => a + k.weight, 0);
  const cumulative = kinds.map((_, i) => kinds.slice(0, i + 1).reduce((a, k) => a + k.weight, 0) / total);
  const stats = kinds.map(() => new Stats());
  const start = performance.now();
  const recordFrom = start + warmupSeconds * 1000;
  const stopAt = recordFrom + seconds * 1000;
  let lastEnd = recordFrom;
  let stopped = false;
  const vu = async (index: number) => {
    const v: Vu = { rng: prng((seed ^ Math.imul(index + 1, 0x9e3779b9)) >>> 0) };
    while (!stopped && performance.now() < stopAt) {
      let k = 0;
      if (kinds.length > 1) {
        const r = v.rng();
        while (k < kinds.length - 1 && r >= cumulative[k]!) k++;
      }
      const t0 = performance.now();
      let outcome: OpOutcome;
      try {
        outcome = await kinds[k]!.run(day, v);
      } catch (err) {
        outcome = `${kinds[k]!.name}: ${(err as Error).message}`;
      }
      if (outcome === STOP) {
        stopped = true;
        break;
      }
      if (outcome === SKIP) {
        await new Promise((r) => setImmediate(r));
        continue;
      }
      const t1 = performance.now();
      if (t0 < recordFrom) continue;
      if (t1 > lastEnd) lastEnd = t1;
      if (outcome === undefined) stats[k]!.add(t1 - t0);
      else stats[k]!.fail(outcome);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, (_, i) => vu(i)));
  const elapsed = Math.max(1e-3, (lastEnd - recordFrom) / 1000);
  const results = kinds.map((k, i): OpResult => {
    const s = stats[i]!;
    const sorted = s.lat.subarray(0, s.n).sort();
    return { name: k.name, weight: k.weight, count: s.n, failures: s.failures, p50: percentile(sorted, 50), p99: percentile(sorted, 99), rate: s.n / elapsed, firstFailure: s.firstFailure };
  });
  const ops = results.reduce((a, r) => a + r.count, 0);
  const { serverMs, use } = cpu.end(ops);
  return {
    seconds: elapsed,
    ops,
    failures: results.reduce((a, r) => a + r.failures, 0),
    rate: ops / elapsed,
    kinds: results.map((r) => ({ ...r, serverCpuPerOp: kinds.length === 1 ? (serverMs * 1000) / r.count : NaN })),
    stopped,
    ...use,
  };
}

// ---------------------------------------------------------------------------------------------
// The load at a steady rate: open loop, Poisson arrivals, latency from the moment a request was due

interface Rate {
  /** Offered ops/s of the whole mix. */
  value: number;
  /** How it was chosen, for the report. */
  how: string;
}

interface RateResult extends CpuUse {
  offered: number;
  seconds: number;
  /** Requests due inside the measured window: answered as expected, failed. */
  ops: number;
  failures: number;
  /** Answered ops per second over the measured window (or until the last answer, if later). */
  achieved: number;
  kinds: OpResult[];
  /** How late the client sent requests after they were due, ms (already inside the latencies). */
  lagP50: number;
  lagP99: number;
  /** Most requests in flight at once (beyond RATE_CONNECTIONS they wait for a connection). */
  maxInFlight: number;
}

/**
 * Sends `kinds` (picked by weight, like the closed loop) as a Poisson process of `rate` ops/s over
 * `pool`, each request when it is due whatever is still in flight. Latency is from the due time (or
 * from the send, if the timer sent it a fraction of a millisecond early) to the end of the operation,
 * so the client's own lateness and any wait for a connection count. Records requests due in the window.
 */
async function driveRate(day: Day, pool: Pool, kinds: Kind[], seed: number, rate: number, warmupSeconds: number, seconds: number): Promise<RateResult> {
  const closedPool = day.pool;
  day.pool = pool;
  try {
    const cpu = cpuWindow(day.serverPid, warmupSeconds);
    const total = kinds.reduce((a, k) => a + k.weight, 0);
    const cumulative = kinds.map((_, i) => kinds.slice(0, i + 1).reduce((a, k) => a + k.weight, 0) / total);
    // Arrivals and the operations' own choices come from two seeded streams, so both are the same on every run.
    const arrivals = prng(seed);
    const v: Vu = { rng: prng((seed ^ 0x85ebca6b) >>> 0) };
    const gapMs = () => (-Math.log(1 - arrivals()) / rate) * 1000;
    const stats = kinds.map(() => new Stats());
    const lag = new Stats();
    const start = performance.now();
    const recordFrom = start + warmupSeconds * 1000;
    const stopAt = recordFrom + seconds * 1000;
    let lastEnd = recordFrom;
    let inFlight = 0;
    let maxInFlight = 0;
    let stopped = false;
    const pending = new Set<Promise<void>>();
    const send = (k: number, due: number) => {
      const sent = performance.now();
      const from = Math.min(due, sent);
      const recorded = due >= recordFrom;
      inFlight++;
      if (recorded && inFlight > maxInFlight) maxInFlight = inFlight;
      // run() makes all its seeded choices before its first await, so the order of sends fixes them.
      const p = (async () => {
        let outcome: OpOutcome;
        try {
          outcome = await kinds[k]!.run(day, v);
        } catch (err) {
          outcome = `${kinds[k]!.name}: ${(err as Error).message}`;
        }
        const end = performance.now();
        inFlight--;
        if (outcome === STOP) stopped = true;
        if (!recorded || outcome === STOP || outcome === SKIP) return;
        lag.add(sent - due);
        if (end > lastEnd) lastEnd = end;
        if (outcome === undefined) stats[k]!.add(end - from);
        else stats[k]!.fail(outcome);
      })();
      pending.add(p);
      void p.finally(() => pending.delete(p));
    };
    let due = start + gapMs();
    while (due < stopAt && !stopped) {
      const wait = due - performance.now();
      if (wait > 0.5) {
        // Timers have millisecond resolution; lateness is measured (lag) and counted in the latency.
        await sleep(Math.max(1, Math.round(wait)));
        continue;
      }
      let k = 0;
      if (kinds.length > 1) {
        const r = v.rng();
        while (k < kinds.length - 1 && r >= cumulative[k]!) k++;
      }
      send(k, due);
      due += gapMs();
    }
    while (pending.size) await Promise.all([...pending]);
    const elapsed = Math.max(seconds, (lastEnd - recordFrom) / 1000, 1e-3);
    const results = kinds.map((k, i): OpResult => {
      const s = stats[i]!;
      const sorted = s.lat.subarray(0, s.n).sort();
      return { name: k.name, weight: k.weight, count: s.n, failures: s.failures, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: s.n ? sorted[s.n - 1]! : NaN, rate: s.n / elapsed, firstFailure: s.firstFailure };
    });
    const lags = lag.lat.subarray(0, lag.n).sort();
    const ops = results.reduce((a, r) => a + r.count, 0);
    return {
      offered: rate,
      seconds: elapsed,
      ops,
      failures: results.reduce((a, r) => a + r.failures, 0),
      achieved: ops / elapsed,
      kinds: results,
      lagP50: percentile(lags, 50),
      lagP99: percentile(lags, 99),
      maxInFlight,
      ...cpu.end(ops).use,
    };
  } finally {
    day.pool = closedPool;
  }
}

// ---------------------------------------------------------------------------------------------
// Webhook deliveries through GET /v1/webhooks/{id}/deliveries and its Link pagination

interface Deliveries {
  total: number;
  succeeded: number;
  pending: number;
  failed: number;
}

async function walkDeliveries(day: Day): Promise<Deliveries> {
  const out: Deliveries = { total: 0, succeeded: 0, pending: 0, failed: 0 };
  for (const a of day.accounts) {
    let path: string | null = `/v1/webhooks/${a.webhookId}/deliveries?limit=100`;
    while (path !== null) {
      const page: { data: { status: string }[]; headers: Record<string, string | string[] | undefined> } = await call<{ status: string }[]>(day.pool, 'GET', path, a.key);
      for (const d of page.data) {
        out.total++;
        if (d.status === 'succeeded') out.succeeded++;
        else if (d.status === 'pending') out.pending++;
        else out.failed++;
      }
      const link: string = [page.headers.link ?? []].flat().join(', ');
      const next: string | undefined = /<([^>]+)>\s*;\s*rel="?next"?/.exec(link)?.[1];
      path = next === undefined ? null : new URL(next).pathname + new URL(next).search;
    }
  }
  return out;
}

interface HookResult extends Deliveries {
  expected: number;
  received: number;
  waitedSeconds: number;
  allDelivered: boolean;
}

/** Waits (at most `maxMs`) until the receiver saw every event we caused and the API lists none pending. */
async function awaitWebhooks(day: Day, receiver: Receiver, maxMs = WEBHOOK_WAIT_MS): Promise<HookResult> {
  const expected = day.created + day.statusChanges;
  const started = Date.now();
  let walk: Deliveries | undefined;
  for (;;) {
    const { unique } = await receiver.count();
    const timedOut = Date.now() - started > maxMs;
    if (unique >= expected || timedOut) {
      walk = await walkDeliveries(day);
      if ((walk.pending === 0 && walk.total >= expected) || timedOut) {
        const received = (await receiver.count()).unique;
        return { ...walk, expected, received, waitedSeconds: (Date.now() - started) / 1000, allDelivered: walk.succeeded >= expected && walk.pending === 0 && walk.failed === 0 && received >= expected };
      }
    }
    await sleep(250);
  }
}

// ---------------------------------------------------------------------------------------------
// One day on one revision and one database

interface DayResult {
  revision: Revision['role'];
  database: string;
  seedSeconds: number;
  mix: DriveResult;
  hooks: HookResult;
  /** The open-loop phase: the mix at a steady rate, its webhooks, and GET /v1/shipments/{id} alone at its share of the rate. */
  rate: Rate;
  atRate: RateResult;
  rateHooks: HookResult;
  readAlone: RateResult;
  /** This side only: the read alone's arrivals against a bare node:http server (the machine's floor). */
  floor?: RateResult;
  alone: OpResult[];
  /** Documents "download, first render" had available, and whether it ran out of them. */
  freshDocs: number;
  freshExhausted: boolean;
  /** Where the service's error lines were kept, when something failed. */
  errorLog?: string;
  /** The machine's 1-minute load average just before the mix (other work on the machine shows here). */
  loadBefore: number;
}

interface Database {
  url: string;
  drop(): Promise<void>;
}

/** The admin URL of the first of PG_CANDIDATES that answers (setting `pgBase`), or null. */
async function pgReachable(): Promise<string | null> {
  for (const base of PG_CANDIDATES) {
    for (const db of ['postgres', 'test']) {
      const client = new pg.Client({ connectionString: `${base}/${db}`, connectionTimeoutMillis: 3000 });
      try {
        await client.connect();
        await client.query('select 1');
        await client.end();
        pgBase = base;
        return `${base}/${db}`;
      } catch {
        await client.end().catch(() => {});
      }
    }
  }
  return null;
}

async function createDatabase(kind: string, dir: string, adminUrl: string | null): Promise<Database> {
  if (kind === 'sqlite') return { url: `sqlite:${join(dir, 'day.db')}`, drop: async () => {} };
  const name = `bench_day_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: adminUrl! });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  return {
    url: `${pgBase}/${name}`,
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl! });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** Runs `fn` for items `0..n-1`, `parallel` at a time. */
async function inParallel(n: number, parallel: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < n) await fn(next++);
  }));
}

/**
 * One day. `chooseRate` gets the closed loop's total ops/s and returns the rate of the open-loop phase
 * (fixed by the first day that needs it, so every revision carries the same day).
 */
async function runDay(revision: Revision, database: string, receiver: Receiver, pgAdmin: string | null, chooseRate: (closedRate: number) => Rate): Promise<DayResult> {
  const tag = `${database}, ${revision.role}`;
  const dir = mkdtempSync(join(tmpdir(), 'bench-day-'));
  let db: Database | undefined;
  let service: Service | undefined;
  let pool: Pool | undefined;
  let ratePool: Pool | undefined;
  let failed = true;
  let result: DayResult | undefined;
  orderNumber = 0;
  try {
    db = await createDatabase(database, dir, pgAdmin);
    progress(`day [${tag}]: starting ${revision.root}/src/main.ts on ${db.url}`);
    service = await startService(revision.root, db.url, dir, revision.role === 'this' ? THIS_ENV : {});
    const svc = service;
    pool = new Pool(svc.origin, { connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 60_000 });
    await receiver.reset();

    // Accounts: `default` has the bootstrap key; 7 more through the admin command line.
    const keys = [svc.key];
    const others = WAREHOUSES.slice(1, ACCOUNTS).map((w) => w[0]);
    keys.push(...(await Promise.all(others.map(async (name) => {
      await admin(svc, ['account', 'create', name]);
      return (await admin(svc, ['key', 'create', '--account', name])).key!;
    }))));
    const accounts: Account[] = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const n = Math.ceil((SHIPMENTS - i) / ACCOUNTS);
      const key = keys[i]!;
      accounts.push({
        index: i,
        name: WAREHOUSES[i]![0],
        key,
        headers: { 'x-api-key': key },
        jsonHeaders: { 'x-api-key': key, 'content-type': 'application/json' },
        webhookId: '',
        shipments: new Array<string>(n),
        labels: new Array<string>(n),
        tracking: new Array<string>(n),
        state: new Uint8Array(n),
        lastTs: new Float64Array(n),
        busy: new Uint8Array(n),
      });
    }
    const day: Day = { pool, accounts, downloadSet: [], repeatSet: [], fresh: [], freshNext: 0, created: 0, statusChanges: 0, serverPid: svc.child.pid };

    // Webhooks first, so every shipment of the day (the seed too) causes a delivery we can count.
    for (const a of accounts) {
      const secret = `whsec_${randomBytes(24).toString('base64')}`;
      a.webhookId = (await call<{ id: string }>(pool, 'POST', '/v1/webhooks', a.key, { url: `http://127.0.0.1:${receiver.port}/hook/${a.index}`, events: EVENT_KINDS, secret })).data.id;
    }

    // Seed: shipment i belongs to account i % 8; each gets a PDF 4x6 label.
    progress(`day [${tag}]: seeding ${fmtRate(SHIPMENTS)} shipments with labels`);
    const seedStarted = performance.now();
    const seedRng = prng(SEED);
    const bodies = Array.from({ length: SHIPMENTS }, (_, i) => shipmentBody(seedRng, i % ACCOUNTS));
    const pdfUrls = new Array<string>(SHIPMENTS);
    await inParallel(SHIPMENTS, CONNECTIONS, async (i) => {
      const a = accounts[i % ACCOUNTS]!;
      const j = Math.floor(i / ACCOUNTS);
      const s = await call<{ id: string }>(pool!, 'POST', '/v1/shipments', a.key, JSON.parse(bodies[i]!));
      day.created++;
      const l = await call<{ id: string; trackingNumber: string; url: string }>(pool!, 'POST', '/v1/labels', a.key, { shipmentId: s.data.id, format: 'PDF', size: '4x6' });
      a.shipments[j] = s.data.id;
      a.labels[j] = l.data.id;
      a.tracking[j] = l.data.trackingNumber;
      pdfUrls[i] = l.data.url;
    });
    const seedSeconds = (performance.now() - seedStarted) / 1000;

    // Download links, fetched the way a client does: GET /v1/labels/{id}?format=X gives X's url.
    const pathOf = (url: string) => {
      const u = new URL(url);
      return u.pathname + u.search;
    };
    const urlOf = async (i: number, format: string) => {
      const a = accounts[i % ACCOUNTS]!;
      return pathOf((await call<{ url: string }>(pool!, 'GET', `/v1/labels/${a.labels[Math.floor(i / ACCOUNTS)]}?format=${format}`, a.key)).data.url);
    };
    const download = new Array<Doc>(DOWNLOAD_LABELS * 3);
    await inParallel(DOWNLOAD_LABELS, CONNECTIONS, async (i) => {
      download[i * 3] = { path: pathOf(pdfUrls[i]!) };
      download[i * 3 + 1] = { path: await urlOf(i, 'PNG') };
      download[i * 3 + 2] = { path: await urlOf(i, 'ZPL') };
    });
    day.downloadSet = download;
    day.repeatSet = download.slice(0, REPEAT_LABELS * 3);
    // First renders: every other label in PDF, PNG and ZPL at 203 dpi, then PNG and ZPL at 300 dpi.
    const freshLabels = SHIPMENTS - DOWNLOAD_LABELS;
    const fresh = new Array<Doc>(freshLabels * 5);
    await inParallel(freshLabels, CONNECTIONS, async (k) => {
      const i = DOWNLOAD_LABELS + k;
      const png = await urlOf(i, 'PNG');
      const zpl = await urlOf(i, 'ZPL');
      fresh[k * 3] = { path: pathOf(pdfUrls[i]!) };
      fresh[k * 3 + 1] = { path: png };
      fresh[k * 3 + 2] = { path: zpl };
      fresh[freshLabels * 3 + k * 2] = { path: `${png}&dpi=300` };
      fresh[freshLabels * 3 + k * 2 + 1] = { path: `${zpl}&dpi=300` };
    });
    day.fresh = fresh;

    progress(`day [${tag}]: seeded in ${seedSeconds.toFixed(1)} s; waiting for the seed's webhook deliveries`);
    const seedHooks = await awaitWebhooks(day, receiver);
    if (!seedHooks.allDelivered) progress(`day [${tag}]: seed webhooks not all delivered after ${seedHooks.waitedSeconds.toFixed(0)} s (${seedHooks.succeeded} of ${seedHooks.expected})`);

    // The day: warm-up then measured, one continuous closed loop.
    const loadBefore = loadavg()[0]!;
    progress(`day [${tag}]: the mix, ${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured, ${CONNECTIONS} connections (load average ${loadBefore.toFixed(2)})`);
    const mix = await drive(day, KINDS, SEED, WARMUP_SECONDS, SECONDS);
    progress(`day [${tag}]: ${fmtRate(mix.rate)} ops/s, ${mix.failures} failures; waiting for webhook deliveries`);
    const hooks = await awaitWebhooks(day, receiver);
    progress(`day [${tag}]: webhooks ${hooks.succeeded} succeeded of ${hooks.expected} expected (receiver ${hooks.received}) after ${hooks.waitedSeconds.toFixed(1)} s`);

    // The same mix at a steady rate (open loop), then GET /v1/shipments/{id} alone at its share of that rate.
    const rate = chooseRate(mix.rate);
    const readRate = (rate.value * KINDS[0]!.weight) / KINDS.reduce((a, k) => a + k.weight, 0);
    ratePool = new Pool(svc.origin, { connections: RATE_CONNECTIONS, pipelining: 1, keepAliveTimeout: 60_000 });
    progress(`day [${tag}]: the mix at ${fmtRate(rate.value)} ops/s (${rate.how}), open loop, ${WARMUP_SECONDS} s warm-up + ${RATE_SECONDS} s measured, up to ${RATE_CONNECTIONS} connections`);
    const atRate = await driveRate(day, ratePool, KINDS, SEED + 1000, rate.value, WARMUP_SECONDS, RATE_SECONDS);
    const rateRead = atRate.kinds[0]!;
    progress(`day [${tag}]: at a rate: ${fmtRate(atRate.achieved)} ops/s achieved, ${atRate.failures} failures, ${GET_SHIPMENT} p50 ${fmtMs(rateRead.p50)} p99 ${fmtMs(rateRead.p99)}, send lag p99 ${fmtMs(atRate.lagP99)}, at most ${atRate.maxInFlight} in flight; waiting for webhook deliveries`);
    const rateHooks = await awaitWebhooks(day, receiver);
    progress(`day [${tag}]: webhooks ${rateHooks.succeeded} succeeded of ${rateHooks.expected} expected (receiver ${rateHooks.received}) after ${rateHooks.waitedSeconds.toFixed(1)} s`);
    progress(`day [${tag}]: ${GET_SHIPMENT} alone at ${fmtRate(readRate)} ops/s, open loop, ${WARMUP_SECONDS} s warm-up + ${RATE_SECONDS} s measured`);
    const readAlone = await driveRate(day, ratePool, [KINDS[0]!], SEED + 1001, readRate, WARMUP_SECONDS, RATE_SECONDS);
    const ra = readAlone.kinds[0]!;
    progress(`day [${tag}]: alone at its rate: p50 ${fmtMs(ra.p50)}, p99 ${fmtMs(ra.p99)}${ra.failures ? `, ${ra.failures} failures` : ''}`);
    await ratePool.close();
    ratePool = undefined;
    let floor: RateResult | undefined;
    if (revision.role === 'this') {
      // The machine's floor: the read alone's very arrivals, from the same generator, to a server that does nothing.
      const floorPool = new Pool(`http://127.0.0.1:${receiver.port}`, { connections: RATE_CONNECTIONS, pipelining: 1, keepAliveTimeout: 60_000 });
      try {
        floor = await driveRate(day, floorPool, [FLOOR], SEED + 1001, readRate, WARMUP_SECONDS, RATE_SECONDS);
      } finally {
        await floorPool.close();
      }
      const f = floor.kinds[0]!;
      progress(`day [${tag}]: a bare node:http server at the same rate: p50 ${fmtMs(f.p50)}, p99 ${fmtMs(f.p99)}${f.failures ? `, ${f.failures} failures` : ''}`);
    }

    // Alone: reads first, then the downloads (repeat before first render: the repeated documents were
    // downloaded in the mix already), then the writes, each followed by the deliveries it caused.
    const alone: OpResult[] = [];
    const aloneKinds = [...KINDS.slice(0, 4), KINDS[6]!, REPEAT, FIRST_RENDER, KINDS[4]!, KINDS[5]!];
    let seed = SEED + 1;
    for (const kind of aloneKinds) {
      // The repeated documents are rendered once before the clock starts (the mix fetched them already).
      if (kind === REPEAT) for (const d of day.repeatSet) await (await pool.request({ method: 'GET', path: d.path })).body.dump(DUMP);
      const r = await drive(day, [kind], seed++, 0, ALONE_SECONDS);
      const k = r.kinds[0]!;
      progress(`day [${tag}]: alone ${kind.name}: ${fmtRate(k.rate)} ops/s, p50 ${fmtMs(k.p50)}, p99 ${fmtMs(k.p99)}${k.failures ? `, ${k.failures} failures` : ''}`);
      alone.push(k);
      if (kind === KINDS[4] || kind === KINDS[5]) await awaitWebhooks(day, receiver, 60_000);
    }
    failed = mix.failures > 0 || atRate.failures > 0 || readAlone.failures > 0 || alone.some((k) => k.failures > 0) || !hooks.allDelivered || !rateHooks.allDelivered || !seedHooks.allDelivered;
    result = { revision: revision.role, database, seedSeconds, loadBefore, mix, hooks, rate, atRate, rateHooks, readAlone, floor, alone, freshDocs: fresh.length, freshExhausted: day.freshNext >= fresh.length };
  } catch (err) {
    if (service) process.stderr.write(`  · day [${tag}] failed; the service's log ends with:\n${logTail(service.logFile)}\n`);
    throw err;
  } finally {
    await ratePool?.close().catch(() => {});
    await pool?.close().catch(() => {});
    await service?.stop();
    if (failed && service) {
      const errorLog = keepErrors(service.logFile, `day-${database}-${revision.role}-errors`);
      if (errorLog) progress(`day [${tag}]: the service's error lines are in ${errorLog}`);
      if (result) result.errorLog = errorLog;
    }
    await db?.drop().catch((err) => progress(`could not drop the database: ${(err as Error).message}`));
    if (LOG_DIR && service) {
      mkdirSync(LOG_DIR, { recursive: true });
      copyFileSync(service.logFile, join(LOG_DIR, `day-${database}-${revision.role}-${Date.now()}.log`));
    }
    rmSync(dir, { recursive: true, force: true });
  }
  return result!;
}

// ---------------------------------------------------------------------------------------------
// Means over rounds and the report

/** Cores each kind of thread kept busy between two `threadCpuMs` readings `wall` ms apart. */
function threadCores(before: Record<string, number>, after: Record<string, number>, wall: number): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([kind, ms]) => [kind, (ms - (before[kind] ?? 0)) / wall]));
}

/** The mean of each CPU figure over rounds. */
function meanCpuUse(rows: CpuUse[]): CpuUse {
  const mean = (f: (r: CpuUse) => number) => rows.reduce((a, r) => a + f(r), 0) / rows.length;
  return {
    serverCpuPerOp: mean((r) => r.serverCpuPerOp),
    serverCores: mean((r) => r.serverCores),
    threadCores: meanCores(rows.map((r) => r.threadCores)),
    generatorCores: mean((r) => r.generatorCores),
    databaseCores: mean((r) => r.databaseCores),
    databaseCpuPerOp: mean((r) => r.databaseCpuPerOp),
    machineCores: mean((r) => r.machineCores),
  };
}

/** The mean of each kind's cores over rounds (a kind missing from a round counts 0 there). */
function meanCores(rows: Record<string, number>[]): Record<string, number> {
  const kinds = new Set(rows.flatMap((r) => Object.keys(r)));
  return Object.fromEntries([...kinds].map((k) => [k, rows.reduce((a, r) => a + (r[k] ?? 0), 0) / rows.length]));
}

function meanOps(rows: OpResult[][]): OpResult[] {
  const mean = (f: (r: OpResult) => number, i: number) => rows.reduce((a, r) => a + f(r[i]!), 0) / rows.length;
  return rows[0]!.map((r, i) => ({
    name: r.name,
    weight: r.weight,
    count: rows.reduce((a, row) => a + row[i]!.count, 0),
    failures: rows.reduce((a, row) => a + row[i]!.failures, 0),
    p50: mean((x) => x.p50, i),
    p99: mean((x) => x.p99, i),
    rate: mean((x) => x.rate, i),
    serverCpuPerOp: mean((x) => x.serverCpuPerOp ?? NaN, i),
    max: rows.reduce((a, row) => Math.max(a, row[i]!.max ?? NaN), -Infinity),
    firstFailure: rows.map((row) => row[i]!.firstFailure).find(Boolean),
  }));
}

/** An open-loop phase over the rounds: percentiles, rates and lags averaged, counts summed, maxima the largest. */
interface RateSummary extends CpuUse {
  offered: number;
  how: string;
  ops: number;
  failures: number;
  achieved: number;
  kinds: OpResult[];
  lagP50: number;
  lagP99: number;
  maxInFlight: number;
}

function summarizeRate(runs: RateResult[], how: string): RateSummary {
  const mean = (f: (r: RateResult) => number) => runs.reduce((a, r) => a + f(r), 0) / runs.length;
  return {
    offered: mean((r) => r.offered),
    how,
    ops: runs.reduce((a, r) => a + r.ops, 0),
    failures: runs.reduce((a, r) => a + r.failures, 0),
    achieved: mean((r) => r.achieved),
    kinds: meanOps(runs.map((r) => r.kinds)),
    lagP50: mean((r) => r.lagP50),
    lagP99: mean((r) => r.lagP99),
    maxInFlight: Math.max(...runs.map((r) => r.maxInFlight)),
    ...meanCpuUse(runs),
  };
}

interface Summary extends CpuUse {
  rounds: number;
  rate: number;
  ops: number;
  failures: number;
  seconds: number;
  seedSeconds: number;
  loads: number[];
  kinds: OpResult[];
  alone: OpResult[];
  /** The mix at a steady rate, and GET /v1/shipments/{id} alone at its share of it. */
  atRate: RateSummary;
  readAlone: RateSummary;
  /** The machine's floor (this side only): a bare node:http server at the read alone's arrivals. */
  floor?: RateSummary;
  /** Counts after the last phase (they are cumulative); waits after the closed mix and after the mix at a rate. */
  hooks: { expected: number; succeeded: number; received: number; total: number; pending: number; failed: number; waitedSeconds: number; rateWaitedSeconds: number; allDelivered: boolean };
  freshNote: string;
  errorLogs: string[];
}

function summarize(days: DayResult[]): Summary {
  const sum = (f: (d: DayResult) => number) => days.reduce((a, d) => a + f(d), 0);
  return {
    rounds: days.length,
    rate: sum((d) => d.mix.rate) / days.length,
    ops: sum((d) => d.mix.ops),
    failures: sum((d) => d.mix.failures),
    seconds: sum((d) => d.mix.seconds) / days.length,
    seedSeconds: sum((d) => d.seedSeconds) / days.length,
    loads: days.map((d) => d.loadBefore),
    ...meanCpuUse(days.map((d) => d.mix)),
    kinds: meanOps(days.map((d) => d.mix.kinds)),
    alone: meanOps(days.map((d) => d.alone)),
    atRate: summarizeRate(days.map((d) => d.atRate), days[0]!.rate.how),
    readAlone: summarizeRate(days.map((d) => d.readAlone), days[0]!.rate.how),
    floor: days.every((d) => d.floor) ? summarizeRate(days.map((d) => d.floor!), days[0]!.rate.how) : undefined,
    hooks: {
      expected: sum((d) => d.rateHooks.expected),
      succeeded: sum((d) => d.rateHooks.succeeded),
      received: sum((d) => d.rateHooks.received),
      total: sum((d) => d.rateHooks.total),
      pending: sum((d) => d.rateHooks.pending),
      failed: sum((d) => d.rateHooks.failed),
      waitedSeconds: Math.max(...days.map((d) => d.hooks.waitedSeconds)),
      rateWaitedSeconds: Math.max(...days.map((d) => d.rateHooks.waitedSeconds)),
      allDelivered: days.every((d) => d.hooks.allDelivered && d.rateHooks.allDelivered),
    },
    errorLogs: [...new Set(days.map((d) => d.errorLog).filter((l): l is string => l !== undefined))],
    freshNote: days.some((d) => d.freshExhausted) ? ` (ran out of its ${fmtRate(days[0]!.freshDocs)} unrendered documents before the time was up)` : '',
  };
}

const num = (n: number) => n.toLocaleString('en-US');
const ms = (n: number) => (Number.isFinite(n) ? fmtMs(n) : '–');
const ratio = (a: number, b: number) => (b > 0 && Number.isFinite(a / b) ? (a / b).toFixed(2) : '–');

const cpu = (us: number | undefined) => (us !== undefined && Number.isFinite(us) ? `${fmtRate(us)} µs` : '–');

function cpuLine(name: string, s: CpuUse): string {
  const threads = THREAD_KINDS.filter((k) => k in s.threadCores).map((k) => `${k} ${s.threadCores[k]!.toFixed(2)}`);
  return `${name} ${cpu(s.serverCpuPerOp)} per operation (${s.serverCores.toFixed(2)} cores busy${threads.length ? `: ${threads.join(', ')}` : ''}; the load generator ${s.generatorCores.toFixed(2)}; PostgreSQL's processes ${s.databaseCores.toFixed(2)}${s.databaseCores >= 0.01 ? `, ${cpu(s.databaseCpuPerOp)} per operation` : ''}; the whole machine ${s.machineCores.toFixed(2)} of ${availableParallelism()})`;
}

function hooksLine(s: Summary): string {
  const h = s.hooks;
  return `${num(h.succeeded)} of ${num(h.expected)} delivered (receiver saw ${num(h.received)} unique webhook-ids; the API lists ${num(h.total)} deliveries, ${num(h.pending)} pending, ${num(h.failed)} failed; done ${h.waitedSeconds.toFixed(1)} s after the closed mix and ${h.rateWaitedSeconds.toFixed(1)} s after the mix at a rate)`;
}

function failureNotes(label: string, s: Summary): string[] {
  return [
    ...s.kinds.map((k) => ['mix', k] as const),
    ...s.atRate.kinds.map((k) => ['mix at a rate', k] as const),
    ...s.readAlone.kinds.map((k) => ['alone at a rate', k] as const),
    ...s.alone.map((k) => ['alone', k] as const),
  ]
    .filter(([, k]) => k.failures > 0)
    .map(([where, k]) => `- ${label}, ${where}, ${k.name}: ${num(k.failures)} failed, e.g. \`${(k.firstFailure ?? '').replace(/`/g, "'").replace(/\s+/g, ' ')}\``);
}

/** The open-loop phase of a database's section: the mix at R, then the read alone at its share of R. */
function rateSection(ours: Summary, theirs: Summary | undefined): string[] {
  const o = ours.atRate;
  const t = theirs?.atRate;
  const lines: string[] = [
    `The same mix at a steady rate (open loop, latency): **R = ${fmtRate(o.offered)} ops/s**, ${o.how}. Poisson arrivals (seeded), each request sent when due on up to ${RATE_CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up then ${RATE_SECONDS} s measured; latency from the moment the request was due to the end of its body (of the second one for "new shipment + label").`,
    '',
  ];
  const cells = (k: OpResult) => [num(k.count + k.failures), num(k.failures), ms(k.p50), ms(k.p99), ms(k.max ?? NaN)];
  const all = (r: RateSummary) => [num(r.ops + r.failures), num(r.failures), '', '', ms(Math.max(...r.kinds.map((k) => k.max ?? NaN)))];
  if (t) {
    lines.push(
      table(
        ['operation', 'share', 'this: sent', 'this: failed', 'this: p50', 'this: p99', 'this: max', 'against: sent', 'against: failed', 'against: p50', 'against: p99', 'against: max'],
        [...o.kinds.map((k, i) => [k.name, `${k.weight} %`, ...cells(k), ...cells(t.kinds[i]!)]), ['**all**', '100 %', ...all(o), ...all(t)]],
      ),
    );
  } else {
    lines.push(table(['operation', 'share', 'sent', 'failed', 'p50', 'p99', 'max'], [...o.kinds.map((k) => [k.name, `${k.weight} %`, ...cells(k)]), ['**all**', '100 %', ...all(o)]]));
  }
  const achieved = (r: RateSummary) => `${fmtRate((r.ops + r.failures) / RATE_SECONDS / ours.rounds)} ops/s arrived in the measured window, ${fmtRate(r.achieved)} ops/s answered`;
  const client = (r: RateSummary) => `sent a median ${ms(r.lagP50)} and p99 ${ms(r.lagP99)} after they were due, at most ${num(r.maxInFlight)} in flight`;
  lines.push(
    '',
    `Offered R = ${fmtRate(o.offered)} ops/s; the seeded Poisson arrivals are the same for every revision. This: ${achieved(o)}${t ? `; against: ${achieved(t)}` : ''}. The load generator (its lateness is inside the latencies): this ${client(o)}${t ? `; against ${client(t)}` : ''}. ` +
      `Server CPU at a rate: ${cpuLine('this', o)}${t ? `, ${cpuLine('against', t)}` : ''}.`,
    '',
  );
  const ra = ours.readAlone;
  const ta = theirs?.readAlone;
  const read = (r: RateSummary) => [num(r.ops + r.failures), num(r.failures), ms(r.kinds[0]!.p50), ms(r.kinds[0]!.p99), ms(r.kinds[0]!.max ?? NaN)];
  lines.push(`${GET_SHIPMENT} alone at its rate in the mix (${fmtRate(ra.offered)} ops/s, open loop, same warm-up, duration and latency):`, '');
  lines.push(
    ta
      ? table(['scenario', 'this: sent', 'this: failed', 'this: p50', 'this: p99', 'this: max', 'against: sent', 'against: failed', 'against: p50', 'against: p99', 'against: max'], [[`${GET_SHIPMENT} at ${fmtRate(ra.offered)} ops/s`, ...read(ra), ...read(ta)]])
      : table(['scenario', 'sent', 'failed', 'p50', 'p99', 'max'], [[`${GET_SHIPMENT} at ${fmtRate(ra.offered)} ops/s`, ...read(ra)]]),
    '',
  );
  const f = ours.floor?.kinds[0];
  if (f) {
    lines.push(
      `The machine's floor, this side's rounds: the read alone's very arrivals, from the same load generator, to a bare node:http server that answers a 1.2 KB body at once (the webhook receiver's process): p50 ${ms(f.p50)}, p99 ${ms(f.p99)}, max ${ms(f.max ?? NaN)}${f.failures ? `, ${num(f.failures)} failed` : ''}. ` +
        'No service can answer faster than this on this machine at this moment: wake-ups, loopback and the generator are all inside it.',
      '',
    );
  }
  return lines;
}

function databaseSection(title: string, ours: Summary, theirs: Summary | undefined, names: { ours: string; theirs?: string }): string {
  const lines: string[] = [`### ${title}`, ''];
  lines.push(
    (title === DB_TITLES.postgres ? `${theirs ? 'Both services reach' : 'The service reaches'} PostgreSQL over ${pgWhere(pgBase)}. ` : '') +
    `Seed: ${num(SHIPMENTS)} shipments with a label each over ${ACCOUNTS} accounts in ${ours.seedSeconds.toFixed(1)} s` +
      (theirs ? ` (against: ${theirs.seedSeconds.toFixed(1)} s)` : '') +
      `. The closed-loop mix (capacity): ${CONNECTIONS} virtual users on ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up then ${SECONDS} s measured` +
      (ours.rounds > 1 ? `, mean of ${ours.rounds} rounds per revision (rates and percentiles averaged, counts summed, maxima the largest)` : '') +
      `. The machine's 1-minute load average just before the mix: ${ours.loads.map((l) => l.toFixed(2)).join(', ')}${theirs ? ` (against: ${theirs.loads.map((l) => l.toFixed(2)).join(', ')})` : ''}.`,
    '',
  );
  if (theirs) {
    lines.push(
      table(
        ['operation', 'share', 'this: ops', 'this: failed', 'this: p50', 'this: p99', 'against: ops', 'against: failed', 'against: p50', 'against: p99'],
        [
          ...ours.kinds.map((k, i) => {
            const t = theirs.kinds[i]!;
            return [k.name, `${k.weight} %`, num(k.count), num(k.failures), ms(k.p50), ms(k.p99), num(t.count), num(t.failures), ms(t.p50), ms(t.p99)];
          }),
          ['**all**', '100 %', num(ours.ops), num(ours.failures), '', '', num(theirs.ops), num(theirs.failures), '', ''],
        ],
      ),
      '',
      `**Total: ${fmtRate(ours.rate)} ops/s (${names.ours}) vs ${fmtRate(theirs.rate)} ops/s (${names.theirs}): ratio ${ratio(ours.rate, theirs.rate)}.**`,
      '',
      `Server CPU in the mix, webhook deliveries included: ${cpuLine(names.ours, ours)}, ${cpuLine(names.theirs!, theirs)}; against ÷ this: ${ratio(theirs.serverCpuPerOp, ours.serverCpuPerOp)}.`,
      '',
    );
  } else {
    lines.push(
      table(
        ['operation', 'share', 'ops', 'failed', 'ops/s', 'p50', 'p99'],
        [...ours.kinds.map((k) => [k.name, `${k.weight} %`, num(k.count), num(k.failures), fmtRate(k.rate), ms(k.p50), ms(k.p99)]), ['**all**', '100 %', num(ours.ops), num(ours.failures), fmtRate(ours.rate), '', '']],
      ),
      '',
      `**Total: ${fmtRate(ours.rate)} ops/s.**`,
      '',
      `Server CPU in the mix, webhook deliveries included: ${cpuLine(names.ours, ours)}.`,
      '',
    );
  }
  lines.push(...rateSection(ours, theirs), `Each alone, closed loop (${CONNECTIONS} connections, ${ALONE_SECONDS} s, no warm-up, after the mixes):`, '');
  if (theirs) {
    lines.push(
      table(
        ['scenario', 'this: ops/s', 'this: p50', 'this: p99', 'this: server CPU / op', 'against: ops/s', 'against: p50', 'against: p99', 'against: server CPU / op', 'ops/s this ÷ against'],
        ours.alone.map((k, i) => {
          const t = theirs.alone[i]!;
          return [k.name + (k.failures || t.failures ? ` (failed: ${k.failures} / ${t.failures})` : ''), fmtRate(k.rate), ms(k.p50), ms(k.p99), cpu(k.serverCpuPerOp), fmtRate(t.rate), ms(t.p50), ms(t.p99), cpu(t.serverCpuPerOp), ratio(k.rate, t.rate)];
        }),
      ),
      '',
    );
  } else {
    lines.push(table(['scenario', 'ops/s', 'p50', 'p99', 'server CPU / op', 'failed'], ours.alone.map((k) => [k.name, fmtRate(k.rate), ms(k.p50), ms(k.p99), cpu(k.serverCpuPerOp), num(k.failures)])), '');
  }
  lines.push(`Webhooks (seed, both mixes with their warm-ups, the read alone at a rate), ${names.ours}: ${hooksLine(ours)}.`);
  if (theirs) lines.push(`Against: ${hooksLine(theirs)}.`);
  if (ours.freshNote || theirs?.freshNote) lines.push('', `"download, first render"${ours.freshNote ? `, this${ours.freshNote}` : ''}${theirs?.freshNote ? `, against${theirs.freshNote}` : ''}.`);
  const notes = [...failureNotes('this', ours), ...(theirs ? failureNotes('against', theirs) : [])];
  const logs = [...ours.errorLogs, ...(theirs?.errorLogs ?? [])];
  if (notes.length) lines.push('', 'Failures:', '', ...notes);
  if (logs.length) lines.push('', `The service's error lines: ${logs.map((l) => `\`${l}\``).join(', ')}.`);
  lines.push('');
  return lines.join('\n');
}

interface Target {
  what: string;
  database: string;
  measured: string;
  goal: string;
  met: boolean | null;
}

function targets(database: string, ours: Summary, theirs: Summary | undefined): Target[] {
  const out: Target[] = [];
  out.push(
    theirs
      ? { what: "(1) the day's total ops/s vs the against revision", database, measured: `${fmtRate(ours.rate)} vs ${fmtRate(theirs.rate)} ops/s: ${ratio(ours.rate, theirs.rate)} ×`, goal: '≥ 1.5 ×', met: ours.rate >= 1.5 * theirs.rate }
      : { what: "(1) the day's total ops/s vs the against revision", database, measured: `${fmtRate(ours.rate)} ops/s; run with --against bfb4cd2`, goal: '≥ 1.5 ×', met: null },
  );
  // (2) from the open loop: in the closed loop at saturation the latency is the queue (Little's law), not the code.
  const readAt = (s: Summary) => ({ day: s.atRate.kinds.find((k) => k.name === GET_SHIPMENT)!.p99, alone: s.readAlone.kinds[0]!.p99 });
  const o = readAt(ours);
  const t = theirs ? readAt(theirs) : undefined;
  out.push({
    what: `(2) ${GET_SHIPMENT} p99 in the day at R = ${fmtRate(ours.atRate.offered)} ops/s (open loop) vs the same read alone at its rate (${fmtRate(ours.readAlone.offered)} ops/s)`,
    database,
    measured:
      `${ms(o.day)} (alone ${ms(o.alone)}: ${ratio(o.day, o.alone)} ×)${t ? `; against, for reference: ${ms(t.day)} (alone ${ms(t.alone)}: ${ratio(t.day, t.alone)} ×)` : ''}` +
      (ours.floor ? `; the machine's floor (a bare node:http server, same arrivals): p99 ${ms(ours.floor.kinds[0]!.p99)}` : ''),
    goal: '≤ 5 ms and ≤ 3 × alone',
    met: o.day <= 5 && o.day <= 3 * o.alone,
  });
  const closedRead = (s: Summary) => `${ms(s.kinds.find((k) => k.name === GET_SHIPMENT)!.p99)} (alone, closed: ${ms(s.alone.find((k) => k.name === GET_SHIPMENT)!.p99)})`;
  out.push({
    what: `(2, for information) ${GET_SHIPMENT} p99 in the closed-loop mix: at saturation mostly the ${CONNECTIONS} connections' queue (Little's law), not the target`,
    database,
    measured: closedRead(ours) + (theirs ? `; against: ${closedRead(theirs)}` : ''),
    goal: '–',
    met: null,
  });
  const repeat = ours.alone.find((k) => k.name === REPEAT.name)!;
  if (theirs) {
    const old = theirs.alone.find((k) => k.name === REPEAT.name)!;
    out.push({ what: '(3) repeat downloads of a rendered document vs the against revision\'s repeat downloads', database, measured: `${fmtRate(repeat.rate)} vs ${fmtRate(old.rate)} downloads/s: ${ratio(repeat.rate, old.rate)} ×`, goal: '≥ 10 ×', met: repeat.rate >= 10 * old.rate });
  } else {
    const first = ours.alone.find((k) => k.name === FIRST_RENDER.name)!;
    out.push({ what: '(3) repeat downloads vs first renders in this run (no --against)', database, measured: `${fmtRate(repeat.rate)} vs ${fmtRate(first.rate)} downloads/s: ${ratio(repeat.rate, first.rate)} ×`, goal: '≥ 10 ×', met: repeat.rate >= 10 * first.rate });
  }
  const phases = [
    ['closed mix', ours.ops, ours.failures],
    ['mix at a rate', ours.atRate.ops, ours.atRate.failures],
    ['read alone at a rate', ours.readAlone.ops, ours.readAlone.failures],
  ] as const;
  const failures = phases.reduce((a, [, , f]) => a + f, 0);
  out.push({
    what: '(4) no operation of the mix (closed, at a rate, and the read alone at a rate) failed, every webhook delivered',
    database,
    measured: `${num(failures)} failed of ${num(phases.reduce((a, [, n, f]) => a + n + f, 0))} (${phases.map(([name, n, f]) => `${name} ${num(f)} of ${num(n + f)}`).join(', ')}); ${num(ours.hooks.succeeded)} of ${num(ours.hooks.expected)} webhooks delivered`,
    goal: '0 failed, all delivered',
    met: failures === 0 && ours.hooks.allDelivered,
  });
  return out;
}

const DB_TITLES: Record<string, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

export async function run(): Promise<string> {
  const receiver = new Receiver();
  await receiver.ready();
  let against: ReturnType<typeof prepareRevision> | undefined;
  let thisRev: ReturnType<typeof prepareRevision> | undefined;
  const notes: string[] = [];
  const sections: string[] = [];
  const allTargets: Target[] = [];
  const started = Date.now();
  try {
    if (THIS_REV) thisRev = prepareRevision(THIS_REV, 'this');
    const ours: Revision = thisRev ? thisRev.revision : { role: 'this', title: thisTitle(), root: ROOT };
    if (AGAINST) against = prepareRevision(AGAINST, 'against');
    // The against revision first in odd rounds (its first closed loop sets the rate both carry), this
    // one first in even rounds: on a shared two-core machine the side that runs second in a round has
    // lost 5 to 25 % of its capacity to its place alone, so over an even number of rounds
    // each side has it as often.
    const order = (round: number): Revision[] => (!against ? [ours] : round % 2 === 1 ? [against.revision, ours] : [ours, against.revision]);
    if (FIXED_RATE !== undefined && !(FIXED_RATE > 0)) throw new Error(`BENCH_DAY_RATE must be a positive number of ops/s, not ${env.BENCH_DAY_RATE}`);
    for (const database of DATABASES) {
      if (!DB_TITLES[database]) throw new Error(`unknown database ${database} in BENCH_DAY_DATABASES (sqlite, postgres)`);
      let pgAdmin: string | null = null;
      if (database === 'postgres') {
        pgAdmin = await pgReachable();
        if (!pgAdmin) {
          const note = `PostgreSQL is not reachable over ${PG_CANDIDATES.map(pgWhere).join(' or ')} (databases postgres and test): skipped.`;
          progress(note);
          notes.push(note);
          continue;
        }
      }
      const days: Record<Revision['role'], DayResult[]> = { this: [], against: [] };
      // R, the open-loop rate on this database: fixed, or half the closed-loop capacity of the first day run.
      let rate: Rate | undefined = FIXED_RATE !== undefined ? { value: FIXED_RATE, how: 'set by BENCH_DAY_RATE' } : undefined;
      if (rate) progress(`${database}: R = ${fmtRate(rate.value)} ops/s, ${rate.how}`);
      const chooseRate = (role: Revision['role']) => (closedRate: number): Rate => {
        if (rate) return rate;
        const value = Math.round(closedRate / 2);
        if (!(value > 0)) throw new Error(`the ${role} revision's closed loop carried ${closedRate} ops/s on ${database}: no rate for the open loop`);
        rate = {
          value,
          how: against
            ? `half the against revision's closed-loop ${fmtRate(closedRate)} ops/s in the first round on ${DB_TITLES[database]} (rounded), so both revisions carry the same day`
            : `half this checkout's own closed-loop ${fmtRate(closedRate)} ops/s in the first round on ${DB_TITLES[database]} (rounded; no --against)`,
        };
        progress(`${database}: R = ${fmtRate(value)} ops/s, ${rate.how}`);
        return rate;
      };
      for (let round = 1; round <= ROUNDS; round++) {
        for (const revision of order(round)) {
          if (ROUNDS > 1) progress(`round ${round} of ${ROUNDS}`);
          days[revision.role].push(await runDay(revision, database, receiver, pgAdmin, chooseRate(revision.role)));
        }
      }
      const o = summarize(days.this);
      const t = against ? summarize(days.against) : undefined;
      sections.push(databaseSection(DB_TITLES[database]!, o, t, { ours: 'this', theirs: against ? 'against' : undefined }));
      allTargets.push(...targets(DB_TITLES[database]!, o, t));
    }
    const minutes = (Date.now() - started) / 60_000;
    const weights = KINDS.map((k) => `${k.weight} % ${k.name}`).join(', ');
    return [
      "## A warehouse's day: the service under a realistic mix",
      '',
      `The real service started as an operator would (\`node --max-semi-space-size=8 src/main.ts\` with \`npm start\`'s MALLOC settings, APP_ENV=development, ROLE=all so the webhook worker runs in the same process, SANDBOX_TRACKING=0, LOG_LEVEL=info to a file) on a fresh database, ` +
        `with ${ACCOUNTS} accounts (\`default\` by BOOTSTRAP_API_KEY, the others by the admin command line), each with a webhook for all four event kinds to a receiver in its own process that answers 200. ` +
        `${num(SHIPMENTS)} US domestic shipments (UPS ground, USPS priority_mail, FedEx ground; real ZIP codes; UTF-8 names) with a PDF 4x6 label each are seeded. ` +
        `Then the day, in two phases of the same mix. First the closed loop, for capacity: ${CONNECTIONS} virtual users on ${CONNECTIONS} keep-alive connections (undici Pool) each pick their next operation by weight from a seeded PRNG (seed ${SEED}), so every run does the same day, and send it when their previous one is answered: ${weights}. ` +
        `Reads pick a seeded shipment or label of the account whose X-API-Key they send; tracking batches carry ${EVENTS_PER_BATCH} new events (alternating in_transit and out_for_delivery, so each changes the status and causes one webhook); ` +
        `downloads fetch the signed \`url\` (no key, as a printer does) of ${num(DOWNLOAD_LABELS)} labels × PDF, PNG and ZPL, so repeats happen. An operation fails on any unexpected status or socket error; latency is to the end of the body. ` +
        `Then the same mix at a steady rate R, for latency (open loop): requests arrive as a Poisson process (exponential gaps from a seeded PRNG; the same weights, bodies and choices), each sent when it is due whatever is still in flight, on up to ${RATE_CONNECTIONS} keep-alive connections (beyond that a request waits for a connection, and the wait counts), ${WARMUP_SECONDS} s warm-up then ${RATE_SECONDS} s measured; ` +
        `latency runs from the moment a request was due, not from when it was sent, so a stall counts for every request that arrived during it (no coordinated omission), and "new shipment + label" runs to the end of its second answer. ` +
        `R is ${FIXED_RATE !== undefined ? 'set by BENCH_DAY_RATE' : AGAINST ? "half the against revision's closed-loop ops/s in the first round on that database (the against revision runs first in odd rounds and this one in even rounds), so every revision carries the very same day, one the old service carries at half its capacity" : "half this checkout's own closed-loop ops/s in the first round on that database (no --against)"}. ` +
        `Then ${GET_SHIPMENT} alone, open loop at its share of R (25 %), the same way: the "same read alone" of target (2). ` +
        `Why two phases: at saturation a closed loop always has ${CONNECTIONS} requests in the system, so by Little's law its median latency is about ${CONNECTIONS} ÷ ops/s (${CONNECTIONS} ms at 1,000 ops/s) whatever the service does; it measures capacity (target 1), and whether rendering, webhooks and writes make reads wait is read from the open loop (target 2). ` +
        `After each mix every delivery must be listed as succeeded by GET /v1/webhooks/{id}/deliveries (all pages) and seen by the receiver, within ${WEBHOOK_WAIT_MS / 1000} s. ` +
        `"Alone" runs each operation by itself in a closed loop for ${ALONE_SECONDS} s; "download, repeat" fetches ${REPEAT_LABELS * 3} documents again and again, "download, first render" only documents nobody fetched before (other labels; PDF, PNG, ZPL, then PNG and ZPL at 300 dpi). ` +
        'Server CPU is the service process\'s user + system time (all its threads, from /proc) over the measured window divided by the answered operations, so it includes the webhook deliveries its worker sends meanwhile; on a shared 2-core machine it moves less than ops/s. The cores busy are also split by kind of thread (from /proc/<pid>/task): the main thread (the API), the render threads (piscina\'s), the jobs thread, SQLite\'s checkpointer, V8\'s helpers (garbage collection, compilation) and the rest. Beside them: the load generator\'s cores, PostgreSQL\'s (every process named postgres, reaped backends included) and the whole machine\'s busy cores (/proc/stat).',
      '',
      `This: ${ours.title}${thisRev ? ' (BENCH_DAY_THIS), extracted into a temporary folder' : ''}.${against ? ` Against: ${against.revision.title}, extracted into a temporary folder; the two alternate (${ROUNDS} round${ROUNDS > 1 ? 's' : ''} each), against first in odd rounds and this first in even ones, same seed, same day.` : ' No --against revision.'}`,
      ...(notes.length ? ['', ...notes] : []),
      '',
      ...sections,
      '### Targets',
      '',
      table(
        ['target', 'database', 'measured', 'target', 'met'],
        allTargets.map((t) => [t.what, t.database, t.measured, t.goal, t.met === null ? '–' : t.met ? 'yes' : '**no**']),
      ),
      '',
      `The whole benchmark took ${minutes.toFixed(1)} min.`,
      '',
    ].join('\n');
  } finally {
    against?.remove();
    thisRev?.remove();
    await receiver.stop();
  }
}

if (process.argv.includes('--day-receiver')) runReceiver();
else if (import.meta.main) console.log(await run());

// Shared benchmark machinery: servers in their own processes (bare Fastify baseline, the real app on
// a fresh SQLite file), HTTP load with autocannon, in-process timing, and markdown reporting where
// every target is printed as measured / target / ratio to a baseline measured in the same run.
// Benchmarks print; they never fail on a missed target (performance is not a test).
import autocannon from 'autocannon';
import { fork, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { mkdirSync } from 'node:fs';
import type { ServeOptions, ServeReady } from './serve.ts';

/** Seconds of measured load per scenario (BENCH_SECONDS, default 5) after a warm-up (BENCH_WARMUP, default 1). */
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 1);
export const CONNECTIONS = 10;
export const OUT_DIR = new URL('./out/', import.meta.url);

export function progress(message: string): void {
  process.stderr.write(`  · ${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// Servers

export interface BenchServer extends ServeReady {
  /** CPU microseconds (user + system) the server process has used so far. */
  cpuMicros(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts bench/serve.ts in a child process. With BENCH_CPU_PROF=1 the child writes a V8 CPU profile
 * to bench/out/prof/ when it stops (open it in Chrome DevTools or speedscope).
 */
export async function startServer(options: ServeOptions): Promise<BenchServer> {
  const execArgv = ['--disable-warning=ExperimentalWarning'];
  if (process.env.BENCH_CPU_PROF === '1') {
    const dir = new URL('prof/', OUT_DIR).pathname;
    mkdirSync(dir, { recursive: true });
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${options.kind}-${Date.now()}.cpuprofile`);
  }
  // The memory settings of `npm start` (package.json), for benchmarks that measure the service's memory.
  const env = options.likeNpmStart ? { ...process.env, MALLOC_ARENA_MAX: '1', MALLOC_MMAP_THRESHOLD_: '65536', MALLOC_TRIM_THRESHOLD_: '131072' } : process.env;
  if (options.likeNpmStart) execArgv.push('--max-semi-space-size=8');
  const child: ChildProcess = fork(new URL('./serve.ts', import.meta.url).pathname, [], { execArgv, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = await new Promise<ServeReady>((resolve, reject) => {
    child.once('message', (m: { ready?: ServeReady; error?: string }) => (m.ready ? resolve(m.ready) : reject(new Error(`bench server failed: ${m.error}`))));
    child.once('exit', (code) => reject(new Error(`bench server exited with ${code} before it was ready`)));
    child.send(options);
  });
  return {
    ...ready,
    cpuMicros: () =>
      new Promise<number>((resolve) => {
        const onMessage = (m: { cpu?: NodeJS.CpuUsage }) => {
          if (!m.cpu) return;
          child.off('message', onMessage);
          resolve(m.cpu.user + m.cpu.system);
        };
        child.on('message', onMessage);
        child.send('cpu');
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.send('stop');
      }),
  };
}

/** A bare Fastify app with one `GET /` answering `{"hello":"world"}`: the baseline of every HTTP benchmark. */
export function startBaseline(): Promise<BenchServer> {
  return startServer({ kind: 'baseline' });
}

/** The real service on a fresh SQLite file, with an account, an all-scope API key and an OAuth client. */
export function startApp(options: Omit<ServeOptions, 'kind'> = {}): Promise<BenchServer> {
  return startServer({ kind: 'app', ...options });
}

/** A JSON request to a bench server with its API key; throws unless the status is `expect`. */
export async function api<T = any>(server: BenchServer, method: string, path: string, body?: unknown, expect = method === 'POST' ? 201 : 200): Promise<T> {
  const res = await fetch(server.url + path, {
    method,
    headers: { 'x-api-key': server.apiKey!, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expect) throw new Error(`${method} ${path}: expected ${expect}, got ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** An access token from the app's token endpoint (client_credentials with the bench client). */
export async function accessToken(server: BenchServer, scope?: string): Promise<string> {
  const res = await fetch(`${server.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: tokenForm(server, scope) });
  const json = (await res.json()) as { access_token?: string };
  if (res.status !== 200 || !json.access_token) throw new Error(`token endpoint answered ${res.status} ${JSON.stringify(json)}`);
  return json.access_token;
}

export function tokenForm(server: BenchServer, scope?: string): string {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: server.clientId!, client_secret: server.clientSecret! });
  if (scope) form.set('scope', scope);
  return form.toString();
}

// ---------------------------------------------------------------------------------------------
// HTTP load

export interface LoadOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  connections?: number;
  seconds?: number;
  warmupSeconds?: number;
  /** A new body for every request (e.g. a fresh shipment id); `body` is then ignored. */
  nextBody?: () => string;
  /** A new path (with its query) for every request, on the host of `url`. */
  nextPath?: () => string;
  /** Stop after this many requests instead of after `seconds`. */
  amount?: number;
  /** Every response must have this status (default: any 2xx); otherwise the numbers mean nothing and it throws. */
  expectStatus?: number;
  /** A fixed request rate (requests/s over all connections) instead of as fast as possible. */
  rate?: number;
  /** The server under load: its CPU time per request is reported too. */
  server?: BenchServer;
}

export interface LoadResult {
  name: string;
  connections: number;
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Server CPU microseconds per request, when the server was given. */
  cpuPerRequest?: number;
}

/** The p-th percentile (nearest rank) of ascending samples; NaN for none. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

async function cannon(options: LoadOptions, seconds: number): Promise<{ latencies: Float64Array; statuses: Map<number, number>; errors: number; wall: number }> {
  let latencies = new Float64Array(1 << 16);
  let n = 0;
  const statuses = new Map<number, number>();
  const started = process.hrtime.bigint();
  const { nextBody, nextPath } = options;
  const instance = autocannon({
    url: options.url,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
    connections: options.connections ?? CONNECTIONS,
    ...(options.amount ? { amount: options.amount } : { duration: seconds }),
    ...(options.rate ? { overallRate: options.rate } : {}),
    ...(nextBody || nextPath
      ? {
          requests: [
            {
              method: options.method ?? (nextBody ? 'POST' : 'GET'),
              headers: options.headers,
              setupRequest: (req: Record<string, unknown>) => ({ ...req, ...(nextBody ? { body: nextBody() } : {}), ...(nextPath ? { path: nextPath() } : {}) }),
            } as never,
          ],
        }
      : {}),
  });
  // autocannon's own histogram has 1 ms resolution; our own samples keep the fractions.
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (n === latencies.length) {
      const grown = new Float64Array(n * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[n++] = ms;
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  });
  const result = await instance;
  const wall = Number(process.hrtime.bigint() - started) / 1e9;
  return { latencies: latencies.subarray(0, n).sort(), statuses, errors: result.errors + result.timeouts, wall };
}

/** The sentence under a load table naming the baseline the ratios use (`baselineMean`), then `more`. */
export function baselineSentence(base: LoadResult, more = ''): string {
  const cpu = base.cpuPerRequest === undefined ? '' : `, ${base.cpuPerRequest.toFixed(0)} µs of server CPU per request`;
  return `Baseline for the ratios: ${fmtRate(base.rps)} req/s, p99 ${base.p99.toFixed(2)} ms${cpu} (mean of before and after).${more ? ` ${more}` : ''}`;
}

/** The mean of several runs of one scenario (rates, percentiles and CPU per request averaged), for targets. */
export function meanOf(name: string, runs: LoadResult[]): LoadResult {
  const mean = (f: (r: LoadResult) => number) => runs.reduce((a, r) => a + f(r), 0) / runs.length;
  const cpu = runs.every((r) => r.cpuPerRequest !== undefined) ? mean((r) => r.cpuPerRequest!) : undefined;
  return {
    name,
    connections: runs[0]!.connections,
    requests: runs.reduce((a, r) => a + r.requests, 0),
    seconds: runs.reduce((a, r) => a + r.seconds, 0),
    rps: mean((r) => r.rps),
    p50: mean((r) => r.p50),
    p90: mean((r) => r.p90),
    p99: mean((r) => r.p99),
    max: Math.max(...runs.map((r) => r.max)),
    cpuPerRequest: cpu,
  };
}

/** The baseline the ratios use: the mean of the bare-Fastify runs before and after the scenarios. */
export function baselineMean(before: LoadResult, after: LoadResult): LoadResult {
  const cpu = before.cpuPerRequest === undefined || after.cpuPerRequest === undefined ? undefined : (before.cpuPerRequest + after.cpuPerRequest) / 2;
  return { ...before, name: 'baseline (mean of before and after)', rps: (before.rps + after.rps) / 2, p99: (before.p99 + after.p99) / 2, cpuPerRequest: cpu };
}

/** Drives `options.url` with autocannon (10 connections) for a warm-up, then for the measured run. */
export async function load(name: string, options: LoadOptions): Promise<LoadResult> {
  const seconds = options.seconds ?? SECONDS;
  const warmup = options.warmupSeconds ?? WARMUP_SECONDS;
  progress(`${name}: ${warmup}s warm-up, ${options.amount ? `${options.amount} requests` : `${seconds}s`} measured, ${options.connections ?? CONNECTIONS} connections`);
  if (warmup > 0) await cannon(options, warmup);
  const cpuBefore = await options.server?.cpuMicros();
  const { latencies, statuses, errors, wall } = await cannon(options, seconds);
  const cpuAfter = await options.server?.cpuMicros();
  const wrong = [...statuses].filter(([s]) => (options.expectStatus ? s !== options.expectStatus : s < 200 || s > 299));
  if (wrong.length || errors) {
    throw new Error(`${name}: ${errors} socket errors, unexpected statuses ${JSON.stringify(Object.fromEntries(wrong))}; the numbers would be meaningless`);
  }
  const result: LoadResult = {
    name,
    connections: options.connections ?? CONNECTIONS,
    requests: latencies.length,
    seconds: wall,
    rps: latencies.length / wall,
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1] ?? NaN,
  };
  if (cpuBefore !== undefined && cpuAfter !== undefined) result.cpuPerRequest = (cpuAfter - cpuBefore) / latencies.length;
  const cpu = result.cpuPerRequest === undefined ? '' : `, server CPU ${result.cpuPerRequest.toFixed(0)} µs/request`;
  progress(`${name}: ${fmtRate(result.rps)} req/s, p50 ${fmtMs(result.p50)}, p99 ${fmtMs(result.p99)}${cpu}`);
  return result;
}

// ---------------------------------------------------------------------------------------------
// In-process timing (for renderers and other code measured without HTTP)

export interface Timing {
  runs: number;
  median: number;
  p99: number;
  mean: number;
  min: number;
}

/** Runs `fn` `warmup` times unmeasured, then `runs` times, and returns the distribution in ms. */
export async function time(fn: () => unknown, runs = 200, warmup = 20): Promise<Timing> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples = new Float64Array(runs);
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    samples[i] = Number(process.hrtime.bigint() - t0) / 1e6;
  }
  samples.sort();
  return { runs, median: percentile(samples, 50), p99: percentile(samples, 99), mean: samples.reduce((a, b) => a + b, 0) / runs, min: samples[0]! };
}

// ---------------------------------------------------------------------------------------------
// Reporting

export function fmtRate(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function fmtMs(ms: number): string {
  return `${ms < 10 ? ms.toFixed(2) : ms.toFixed(1)} ms`;
}

export function table(header: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * One row per load result: requests/s, latency percentiles, requests/s as a ratio to the baseline, and
 * (when measured) the server's CPU time per request with the baseline's CPU per request divided by it,
 * which is what the requests/s ratio would be if the server had a core to itself.
 */
export function loadTable(results: LoadResult[], baselineOrRps: number | { rps: number; cpuPerRequest?: number }): string {
  const baseline = typeof baselineOrRps === 'number' ? { rps: baselineOrRps, cpuPerRequest: undefined } : baselineOrRps;
  const cpu = (r: LoadResult) => (r.cpuPerRequest === undefined ? '–' : `${r.cpuPerRequest.toFixed(0)} µs`);
  const cpuRatio = (r: LoadResult) => (r.cpuPerRequest === undefined || baseline.cpuPerRequest === undefined ? '–' : (baseline.cpuPerRequest / r.cpuPerRequest).toFixed(2));
  return table(
    ['scenario', 'connections', 'requests', 'req/s', 'p50', 'p90', 'p99', 'max', 'req/s ÷ baseline', 'server CPU / request', 'baseline CPU ÷ this CPU'],
    results.map((r) => [r.name, r.connections, r.requests.toLocaleString('en-US'), fmtRate(r.rps), fmtMs(r.p50), fmtMs(r.p90), fmtMs(r.p99), fmtMs(r.max), (r.rps / baseline.rps).toFixed(2), cpu(r), cpuRatio(r)]),
  );
}

export interface TargetCheck {
  what: string;
  measured: string;
  target: string;
  /** The measured value divided by the baseline's same metric in the same run. */
  ratio: number;
  met: boolean;
}

/** Throughput as a share of the baseline's: met when measured ≥ share × baseline. */
export function atLeastShare(what: string, measured: number, baseline: number, share: number, unit = 'req/s'): TargetCheck {
  return { what, measured: `${fmtRate(measured)} ${unit}`, target: `≥ ${share} × baseline (${fmtRate(share * baseline)} ${unit})`, ratio: measured / baseline, met: measured >= share * baseline };
}

/** An absolute floor, e.g. tokens/s; the ratio is to the baseline's value of the same unit. */
export function atLeast(what: string, measured: number, goal: number, baseline: number, unit: string): TargetCheck {
  return { what, measured: `${fmtRate(measured)} ${unit}`, target: `≥ ${fmtRate(goal)} ${unit}`, ratio: measured / baseline, met: measured >= goal };
}

/** An absolute ceiling in milliseconds, e.g. p99; the ratio is to the baseline's same percentile. */
export function atMostMs(what: string, measured: number, goal: number, baseline: number): TargetCheck {
  return { what, measured: fmtMs(measured), target: `≤ ${fmtMs(goal)}`, ratio: measured / baseline, met: measured <= goal };
}

export function targetTable(checks: TargetCheck[], baselineName = 'baseline'): string {
  return table(
    ['target', 'measured', 'target', `ratio to ${baselineName}`, 'met'],
    checks.map((c) => [c.what, c.measured, c.target, c.ratio.toFixed(2), c.met ? 'yes' : '**no**']),
  );
}

/** Where the numbers came from: CPU, cores, memory, Node, load average at the time, commit. */
export function machine(): string {
  const cpu = cpus();
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {}
  const [l1, l5] = loadavg();
  return `${cpu.length} × ${cpu[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${l1!.toFixed(2)} / ${l5!.toFixed(2)} (1 / 5 min) at the start, commit ${commit}`;
}

/** Berlin to New York crosses a customs border (contract §12): the declaration the benchmarks send. */
export const BENCH_CUSTOMS = {
  contentsType: 'merchandise',
  items: [{ description: 'Ceramic mug', quantity: 2, netWeight: { value: 0.8, unit: 'kg' }, value: { amount: 40, currency: 'EUR' }, hsCode: '691200', originCountry: 'DE' }],
  signer: 'Jürgen Müller',
};

/** The shipment every HTTP benchmark creates: a UPS worldwide saver parcel from Berlin to New York with UTF-8 addresses and its customs. */
export const BENCH_SHIPMENT = {
  carrier: 'UPS',
  service: 'worldwide_saver',
  from: { name: 'Jürgen Müller', street1: 'Hauptstraße 5', city: 'Berlin', postalCode: '10115', country: 'DE' },
  to: { name: 'Ελένη Παπαδοπούλου', street1: '350 Fifth Avenue', city: 'New York', state: 'NY', postalCode: '10118', country: 'US' },
  parcel: { weight: { value: 1.2, unit: 'kg' } },
  reference: 'bench',
  customs: BENCH_CUSTOMS,
};

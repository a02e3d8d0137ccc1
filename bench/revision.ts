// Another git revision of this service, side by side with this checkout: extracted into a temporary
// folder (with node_modules), and started exactly as an operator would (`node src/main.ts`, a fresh
// database, an API key from BOOTSTRAP_API_KEY). The day and addresses benchmarks use it for
// `npm run bench -- <name> --against <rev>`.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { progress } from './lib.ts';
import { freePort } from './ports.ts';

const env = process.env;
/** This checkout. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/+$/, '');

export interface Revision {
  /** 'this' or 'against' */
  role: 'this' | 'against';
  /** What it is, for the report. */
  title: string;
  root: string;
}

export interface Service {
  origin: string;
  key: string;
  env: Record<string, string>;
  root: string;
  logFile: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
function randomAlnum(n: number): string {
  return [...randomBytes(n)].map((b) => ALNUM[b % ALNUM.length]).join('');
}

export function logTail(file: string, lines = 15): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export async function startService(root: string, databaseUrl: string, dir: string, settings: Record<string, string>): Promise<Service> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const key = `sk_test_${randomAlnum(32)}`;
  // A clean environment: nothing from the caller's shell (a stray DATABASE_URL, WORKER_IDLE_MS …) leaks in.
  const serviceEnv: Record<string, string> = {
    PATH: env.PATH ?? '/usr/bin:/bin',
    HOME: env.HOME ?? '/tmp',
    LANG: env.LANG ?? 'C.UTF-8',
    APP_ENV: 'development',
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_BASE_URL: origin,
    DATABASE_URL: databaseUrl,
    BOOTSTRAP_API_KEY: key,
    SANDBOX_TRACKING: '0',
    ROLE: 'all',
    // The day's 16 users share 8 keys at over 100 requests a second each: limits would be the measurement.
    RATE_LIMIT_PER_SECOND: '0',
    LOG_LEVEL: 'info',
    MALLOC_ARENA_MAX: '1',
    MALLOC_MMAP_THRESHOLD_: '65536',
    MALLOC_TRIM_THRESHOLD_: '131072',
    ...settings,
  };
  const logFile = join(dir, 'server.log');
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--max-semi-space-size=8', 'src/main.ts'], { cwd: root, env: serviceEnv, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exited: number | null = null;
  child.once('exit', (code, signal) => (exited = code ?? (signal ? 128 : 1)));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited !== null) throw new Error(`the service in ${root} exited with ${exited} before it was ready:\n${logTail(logFile)}`);
    try {
      const res = await fetch(`${origin}/v1/health`);
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {}
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the service in ${root} did not answer GET /v1/health within 60 s:\n${logTail(logFile)}`);
    }
    await sleep(100);
  }
  return {
    origin,
    key,
    env: serviceEnv,
    root,
    logFile,
    child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
        child.once('exit', () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 2 ** 20 }).trim();
}

export function prepareRevision(rev: string, role: Revision['role']): { revision: Revision; remove: () => void } {
  const hash = git(['rev-parse', '--verify', `${rev}^{commit}`]);
  const short = git(['rev-parse', '--short', hash]);
  const dir = mkdtempSync(join(tmpdir(), `bench-${role}-`));
  try {
    progress(`${role} ${rev} (${short}): extracting into ${dir}`);
    execFileSync('sh', ['-c', `git archive --format=tar ${hash} | tar -x -C '${dir}'`], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    const theirLock = git(['show', `${hash}:package-lock.json`]);
    const ourLock = readFileSync(join(ROOT, 'package-lock.json'), 'utf8').trim();
    if (theirLock === ourLock) {
      progress(`${role} ${short}: same package-lock.json, linking node_modules`);
      symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    } else {
      progress(`${role} ${short}: package-lock.json differs, npm ci --prefer-offline`);
      execFileSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: ['ignore', 2, 2] });
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    revision: { role, title: `${rev} (${short})`, root: dir },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export function thisTitle(): string {
  let title = 'this checkout';
  try {
    const head = git(['rev-parse', '--short', 'HEAD']);
    const dirty = git(['status', '--porcelain', '--', 'src', 'package.json', 'package-lock.json']) !== '';
    title = `this checkout (${head}${dirty ? ' with uncommitted changes' : ''})`;
  } catch {}
  return title;
}

/** The user + system time (ms) of a /proc `stat` line, that of its reaped children, and its command name. */
function readStat(path: string): { comm: string; cpuMs: number; childrenMs: number } {
  const stat = readFileSync(path, 'utf8');
  // After the command name: utime, stime, cutime, cstime are the 12th to 15th fields.
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return {
    comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
    cpuMs: ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK,
    childrenMs: ((Number(fields[13]) + Number(fields[14])) * 1000) / CLK_TCK,
  };
}

/** CPU time (user + system, ms) a process has used, all its threads included; NaN where /proc is missing. */
export function processCpuMs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    return readStat(`/proc/${pid}/stat`).cpuMs;
  } catch {
    return NaN;
  }
}
/** The kinds of thread `threadCpuMs` tells apart, in the order reports give them. */
export const THREAD_KINDS = ['main thread', 'render threads', 'jobs thread', 'checkpointer', "V8's helpers", 'other'] as const;

/** The kind of a thread by the name the operating system lists it by (src/worker-thread.ts, src/db/sqlite.ts). */
function kindOf(comm: string): (typeof THREAD_KINDS)[number] {
  if (comm === 'WorkerThread') return 'render threads'; // piscina's, which gives its threads no name
  if (comm === 'jobs') return 'jobs thread';
  if (comm === 'checkpointer') return 'checkpointer';
  return comm.startsWith('V8Worker') ? "V8's helpers" : 'other';
}

/**
 * CPU time of a process's live threads so far (user + system, ms), by kind: its main thread (the
 * service's API), the render threads (piscina's, print files' included), the jobs thread of ROLE=all,
 * SQLite's checkpointer, V8's helper threads (garbage collection, compilation) and the rest (libuv's
 * pool). A thread that ended is not counted. A revision that does not name its threads counts its
 * jobs thread and checkpointer among the render threads.
 */
export function threadCpuMs(pid: number | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  if (pid === undefined) return out;
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const { comm, cpuMs } = readStat(`/proc/${pid}/task/${tid}/stat`);
      const kind = tid === String(pid) ? THREAD_KINDS[0] : kindOf(comm);
      out[kind] = (out[kind] ?? 0) + cpuMs;
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/**
 * CPU time (user + system, ms) of PostgreSQL on this machine: every process named `postgres` (of any
 * cluster), plus what a postmaster has reaped of backends that ended (their time moves into the
 * postmaster's children's time), so connections closing between two readings lose nothing; NaN
 * where /proc is missing.
 */
export function postgresCpuMs(): number {
  let pids: string[];
  try {
    pids = readdirSync('/proc');
  } catch {
    return NaN;
  }
  let total = 0;
  for (const pid of pids) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const { comm, cpuMs, childrenMs } = readStat(`/proc/${pid}/stat`);
      // A backend's own children's time is 0; the postmaster's holds its ended backends'.
      if (comm === 'postgres') total += cpuMs + childrenMs;
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

/** CPU time (ms) the whole machine has been busy, all cores (user, nice, system, irq, softirq of /proc/stat). */
export function machineCpuMs(): number {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = fields;
    return ((user + nice + system + irq + softirq) * 1000) / CLK_TCK;
  } catch {
    return NaN;
  }
}

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

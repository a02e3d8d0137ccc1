// A server for the benchmarks, in its own process so the load generator never shares its event loop:
// `baseline` is a bare Fastify "hello" route; `app` is the real service on a fresh SQLite file (or
// the DATABASE_URL given), with an account, an all-scope API key and an OAuth client ready.
// Started by bench/lib.ts through child_process.fork; reports over IPC, stops on "stop".
import Fastify from 'fastify';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger, serviceDestination } from '../src/log.ts';
import { closeContext, openContext } from '../src/bootstrap.ts';
import { buildApp } from '../src/app.ts';
import { startWorker, type Worker } from '../src/worker.ts';
import { createAccount, createApiKey, createClient } from '../src/auth/credentials.ts';
import { ALL_SCOPES } from '../src/auth/scopes.ts';

export interface ServeOptions {
  kind: 'baseline' | 'app';
  /** Extra settings for the app, as environment variables (e.g. SANDBOX_TRACKING). */
  env?: Record<string, string>;
  /** Run the background worker in the same process, as `npm start` does (ROLE=all). */
  worker?: boolean;
  /** Start the process with `npm start`'s memory settings (allocator arenas, young generation). */
  likeNpmStart?: boolean;
}

export interface ServeReady {
  url: string;
  pid: number;
  /** App only: */
  databaseUrl?: string;
  accountId?: string;
  apiKey?: string;
  clientId?: string;
  clientSecret?: string;
}

function send(message: unknown): void {
  process.send!(message);
}


async function serveBaseline(): Promise<{ ready: ServeReady; stop: () => Promise<void> }> {
  const app = Fastify();
  app.get('/', async () => ({ hello: 'world' }));
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { ready: { url, pid: process.pid }, stop: () => app.close() };
}

async function serveApp(options: ServeOptions): Promise<{ ready: ServeReady; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'shipping-bench-'));
  const port = await freePort();
  const env = {
    APP_ENV: 'development',
    DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`,
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'info',
    // The benchmarks measure throughput from one credential: rate limits would be the measurement.
    RATE_LIMIT_PER_SECOND: '0',
    ...options.env,
  };
  const config = loadConfig(env, 'bench');
  // The service logs every request at info as in production, through the service's own (buffered,
  // asynchronous) destination; the lines go to /dev/null, not a terminal.
  const log = createLogger(config.logLevel, serviceDestination('/dev/null'));
  const ctx = await openContext(config, log);
  const account = await createAccount(ctx.db, 'bench');
  const { key } = await createApiKey(ctx.db, account.id, ALL_SCOPES, false);
  const client = await createClient(ctx.db, account.id, { scopes: ALL_SCOPES, name: 'bench client' });
  const worker: Worker | null = options.worker ? startWorker(ctx) : null;
  const app = await buildApp(ctx);
  await app.listen({ host: '127.0.0.1', port });
  return {
    ready: {
      url: `http://127.0.0.1:${port}`,
      pid: process.pid,
      databaseUrl: config.databaseUrl,
      accountId: account.id,
      apiKey: key,
      clientId: client.clientId,
      clientSecret: client.clientSecret,
    },
    stop: async () => {
      await app.close();
      await worker?.stop();
      await closeContext(ctx);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

process.once('message', async (options: ServeOptions) => {
  try {
    const server = options.kind === 'baseline' ? await serveBaseline() : await serveApp(options);
    const stop = async () => {
      await server.stop();
      process.exit(0);
    };
    process.on('message', (m) => {
      if (m === 'stop') void stop();
      // CPU time of this process, so a benchmark can report server CPU per request (stabler than
      // requests/s when other work shares the machine).
      if (m === 'cpu') send({ cpu: process.cpuUsage() });
    });
    // The benchmark process went away without saying stop.
    process.on('disconnect', () => void stop());
    send({ ready: server.ready });
  } catch (err) {
    send({ error: (err as Error).stack ?? String(err) });
    process.exit(1);
  }
});

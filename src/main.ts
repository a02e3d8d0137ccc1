// Process entry: read config, build the app and the worker, listen, shut down gracefully.
import { stopTracing } from './tracing.ts';
import { setWebhookBacklogReader, startMetricsServer, type MetricsServer } from './metrics.ts';
import { deliveryBacklog } from './webhooks/service.ts';
import { readFileSync } from 'node:fs';
import { ConfigError, adminDatabase, inMemoryDatabase, loadConfig, type Config } from './config.ts';
import { createLogger } from './log.ts';
import { databaseProblem, ensureBootstrapCredentials, closeContext, openContext } from './bootstrap.ts';
import { buildApp } from './app.ts';
import { startWorker, type Worker } from './worker.ts';
import { startWorkerThread } from './worker-thread.ts';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

// Errors of a listen whose address cannot be resolved or is not one of this machine's.
const HOST_ERRORS = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'EADDRNOTAVAIL', 'EAFNOSUPPORT']);

/** Stops the start like a bad setting: one line naming it, exit code 78 (EX_CONFIG). */
function refuse(message: string): never {
  console.error(`configuration error: ${message}`);
  process.exit(78);
}

/** Why a listen failed, naming the host setting, when its address is to blame; else null. */
function hostRefusal(err: unknown, setting: string, host: string): string | null {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  return HOST_ERRORS.has(code) ? `${setting} "${host}" is not an address this machine can listen on (${code})` : null;
}

/** Why the API's listen failed, naming HOST or PORT, when a setting is to blame; else null. */
function listenRefusal(err: unknown, host: string, port: number): string | null {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return `PORT ${port} is already in use on ${host}`;
  if (code === 'EACCES') return `PORT ${port} on ${host} may not be listened on by this user (EACCES)`;
  return hostRefusal(err, 'HOST', host);
}

/** Stops a start whose database cannot be opened with one line naming DATABASE_URL (`databaseProblem`); anything else is left to throw. */
function databaseRefusal(err: unknown, databaseUrl: string): void {
  const problem = databaseProblem(err, databaseUrl);
  if (!problem) return;
  console.error(problem.message);
  process.exit(problem.exitCode);
}

async function main(): Promise<void> {
  const roleArg = process.argv.find((a) => a.startsWith('--role='))?.slice('--role='.length);
  let config: Config;
  try {
    config = loadConfig(roleArg ? { ...process.env, ROLE: roleArg } : process.env, version);
  } catch (err) {
    if (err instanceof ConfigError) refuse(err.message);
    throw err;
  }
  const log = createLogger(config.logLevel);
  const servesRequests = config.role !== 'worker';
  let ctx: Awaited<ReturnType<typeof openContext>>;
  try {
    ctx = await openContext(config, log, { servesRequests });
  } catch (err) {
    databaseRefusal(err, config.databaseUrl);
    throw err;
  }
  // BOOTSTRAP_API_KEY (and its client) work from the first request on; the first-run key is created
  // only once the process listens, below.
  await ensureBootstrapCredentials(ctx, { firstRunKey: false });
  const app = config.role !== 'worker' ? await buildApp(ctx) : null;
  let worker: Worker | null = null;
  // Metrics on a listener of their own (§17); a port taken by another process is logged, not fatal, but
  // a METRICS_HOST that is not this machine's is a bad setting.
  setWebhookBacklogReader(() => deliveryBacklog(ctx));
  let metrics: MetricsServer | null = null;
  if (config.metricsPort > 0) {
    try {
      metrics = await startMetricsServer(config.metricsHost, config.metricsPort, async () => (worker?.metrics ? [await worker.metrics()] : []));
      log.info({ port: metrics.port, host: config.metricsHost }, `metrics at http://${config.metricsHost}:${metrics.port}/metrics`);
    } catch (err) {
      const refusal = hostRefusal(err, 'METRICS_HOST', config.metricsHost);
      if (refusal) refuse(refusal);
      log.error({ err, port: config.metricsPort }, 'the metrics listener could not start (METRICS_PORT taken?); running without it');
    }
  }
  // Installed before listening, so a signal that arrives while starting still stops cleanly.
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, `shutting down: finishing ${app ? (worker ? 'in-flight requests and the jobs\' current step' : 'in-flight requests') : 'the jobs\' current step'}`);
    const force = setTimeout(() => {
      log.error('shutdown took longer than 20 s (a request or job still waiting, for the database perhaps); exiting without finishing it');
      process.exit(1);
    }, 20_000);
    force.unref();
    // The jobs finish their current step while the requests in flight are answered, and start no other.
    await Promise.all([app?.close(), worker?.stop()]);
    await metrics?.close();
    await closeContext(ctx);
    await stopTracing();
    log.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // Listening comes before the first-run key and the background jobs: a start refused for its HOST or
  // PORT has created no key that nobody saw, and leaves no jobs thread running.
  if (app) {
    try {
      await app.listen({ host: config.host, port: config.port });
    } catch (err) {
      const refusal = listenRefusal(err, config.host, config.port);
      if (refusal) refuse(refusal);
      throw err;
    }
  }
  // Only a process that serves HTTP prints the first-run key, so only such a process creates it.
  const { createdKey } = servesRequests ? await ensureBootstrapCredentials(ctx, { firstRunKey: true }) : {};
  if (closing) return; // a signal came while starting: shutdown stops what has started
  if (config.role === 'worker') worker = startWorker(ctx);
  if (config.role === 'all') {
    // Off the event loop that answers requests; an in-memory database cannot be shared with another thread.
    if (inMemoryDatabase(config.databaseUrl)) worker = startWorker(ctx);
    else {
      worker = await startWorkerThread(config, (code) => {
        log.fatal({ code }, 'the background jobs thread stopped; exiting so that the process is restarted');
        process.exit(70);
      });
    }
  }
  if (app) {
    const say = (s: string) => process.stdout.write(`${s}\n`);
    const database = adminDatabase(config.databaseUrl);
    const admin = database === null ? null : `${database}npm run admin --`;
    say('');
    say(`Shipping API ${version} (${config.env}) is serving ${config.baseUrl} on ${config.databaseUrl.startsWith('sqlite:') ? config.databaseUrl : 'PostgreSQL'}`);
    say(`  API reference: ${config.baseUrl}/docs   OpenAPI: ${config.baseUrl}/openapi.json`);
    say(`  Dashboard: ${config.publicBaseUrl}/dashboard${admin ? ` (a user to sign in with: echo '<password>' | ${admin} user create --account default --email <you@example.com>)` : ''}`);
    if (createdKey) {
      say('');
      say(`  An API key was created for account "default". It is shown this once; keep it:`);
      say(`    ${createdKey}`);
      say(`  Try it:`);
      say(`    curl -s -H 'X-API-Key: ${createdKey}' ${config.baseUrl}/shipments`);
    } else {
      say(`  Try it: curl -s -H 'X-API-Key: <your key>' ${config.baseUrl}/shipments`);
      if (admin) say(`  (new key: ${admin} key create --account default)`);
    }
    say('');
  } else {
    log.info('worker started');
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});

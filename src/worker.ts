// The background loop: runs each capability's job. The API only feeds jobs through the database, so
// any number of worker processes can run beside any number of API processes.
import type { AppContext } from './context.ts';
import type { Job } from './job.ts';

export type { Job };
import { purgeIdempotencyKeys } from './http/idempotency.ts';
import { purgeRateLimitBuckets } from './http/rate-limit.ts';
import { purgeAuthorizationState } from './oauth/authorize.ts';
import { runSandbox } from './tracking/sandbox.ts';
import { webhookJobs } from './webhooks/jobs.ts';
import { purgeRenderedDocuments } from './documents/service.ts';
import { processBatches } from './batches/service.ts';
import { jobFailures, jobLastRun, type metricsSnapshot } from './metrics.ts';
import { PURGE_CHUNK } from './db/index.ts';
import { scanManifests } from './manifests/service.ts';
import { purgeSessions } from './dashboard/service.ts';
import { fillRecipientSearch } from './shipments/service.ts';

const BUSY_WINDOW_MS = 1000;
/** The longest pause after runs of a job that failed in a row. */
const FAILING_PAUSE_MS = 5_000;

/**
 * A purge runs again at once only after taking a whole PURGE_CHUNK (more rows wait): rows that come of
 * age meanwhile, under steady traffic a few every run, wait for its next turn instead of keeping it busy.
 */
export function purging(run: Job['run']): Job['run'] {
  return async (ctx) => {
    const deleted = await run(ctx);
    return deleted >= PURGE_CHUNK ? deleted : 0;
  };
}

export function jobs(): Job[] {
  return [
    { name: 'purge-idempotency-keys', run: purging(purgeIdempotencyKeys), idleMs: 3600_000 },
    { name: 'purge-oauth-state', run: purging(purgeAuthorizationState), idleMs: 600_000 },
    { name: 'purge-rate-limit-buckets', run: purging(purgeRateLimitBuckets), idleMs: 600_000 },
    { name: 'purge-rendered-documents', run: purging(purgeRenderedDocuments), idleMs: 60_000 },
    { name: 'purge-dashboard-sessions', run: purging(purgeSessions), idleMs: 3600_000 },
    { name: 'sandbox-carrier', run: runSandbox },
    { name: 'batches', run: processBatches },
    { name: 'manifest-scans', run: scanManifests },
    { name: 'recipient-search', run: (ctx) => fillRecipientSearch(ctx), idleMs: 60_000 },
    ...webhookJobs(),
  ];
}

export interface Worker {
  stop(): Promise<void>;
  /** The metrics of the thread the jobs run on, when it is not this one (ROLE=all). */
  metrics?(): Promise<Awaited<ReturnType<typeof metricsSnapshot>>>;
  /** Resolves once every job has found nothing to do (tests use it). */
  drain(): Promise<void>;
}

export function startWorker(ctx: AppContext, list: Job[] = jobs()): Worker {
  let stopping = false;
  const sleepers = new Set<() => void>();
  const loops = list.map(async (job) => {
    // Its series from the start, at 0, so that an alert on it sees the first failure as an increase.
    jobFailures.inc({ task: job.name }, 0);
    let woken = false;
    let busyUntil = 0;
    let wake: (() => void) | null = null;
    const unsubscribe = job.wakeOn?.(() => {
      woken = true;
      busyUntil = Date.now() + BUSY_WINDOW_MS;
      wake?.();
    });
    // Runs failed in a row: each doubles the pause, up to FAILING_PAUSE_MS, so a database that is
    // down for a while costs a log line every few seconds, not ten a second.
    let failures = 0;
    while (!stopping) {
      if (woken && job.gatherMs) await new Promise((resolve) => setTimeout(resolve, job.gatherMs));
      woken = false;
      let handled = 0;
      try {
        handled = await job.run(ctx);
        failures = 0;
      } catch (err) {
        busyUntil = 0;
        failures++;
        jobFailures.inc({ task: job.name });
        ctx.log.error({ err, job: job.name, failures }, 'worker job failed; retrying after a pause');
      }
      jobLastRun.set({ task: job.name }, Date.now() / 1000);
      if (handled > 0) busyUntil = Date.now() + BUSY_WINDOW_MS;
      if (failures === 0 && (handled > 0 || woken)) continue;
      const idle = Math.min(job.idleMs ?? ctx.config.workerIdleMs, ctx.config.workerIdleMs * 20);
      // Never shorter than a healthy job's idle pause, however long WORKER_IDLE_MS is.
      const pause =
        failures > 0
          ? Math.max(idle, Math.min(Math.max(idle, 100) * 2 ** (failures - 1), FAILING_PAUSE_MS))
          : job.busyPollMs !== undefined && Date.now() < busyUntil
            ? Math.min(job.busyPollMs, idle)
            : idle;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(t);
          sleepers.delete(done);
          wake = null;
          resolve();
        };
        const t = setTimeout(done, pause);
        // A failing job sleeps its pause out whatever wakes it (stop() still ends it).
        wake = failures > 0 ? null : done;
        sleepers.add(done);
      });
    }
    unsubscribe?.();
  });
  return {
    async stop() {
      stopping = true;
      for (const job of list) job.stop?.();
      for (const wake of sleepers) wake();
      await Promise.all(loops);
      for (const job of list) await job.settle?.();
    },
    async drain() {
      for (let more = true; more; ) {
        more = false;
        for (const job of list) {
          while ((await job.run(ctx)) > 0) more = true;
          await job.settle?.();
        }
      }
    },
  };
}

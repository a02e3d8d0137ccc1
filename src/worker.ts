// The background loop: runs each capability's job. The API only feeds jobs through the database, so
// any number of worker processes can run beside any number of API processes.
import type { AppContext } from './context.ts';
import { purgeIdempotencyKeys } from './http/idempotency.ts';
import { purgeAuthorizationState } from './auth/authorize.ts';
import { runSandbox } from './tracking/sandbox.ts';

export interface Job {
  name: string;
  /** Does one batch of work; returns how many items it handled (0 = nothing to do right now). */
  run(ctx: AppContext): Promise<number>;
  /** Minimum milliseconds between two runs when the previous one found nothing. */
  idleMs?: number;
}

export function jobs(): Job[] {
  return [
    { name: 'purge-idempotency-keys', run: purgeIdempotencyKeys, idleMs: 3600_000 },
    { name: 'purge-oauth-state', run: purgeAuthorizationState, idleMs: 600_000 },
    { name: 'sandbox-carrier', run: runSandbox },
  ];
}

export interface Worker {
  stop(): Promise<void>;
  /** Resolves once every job has found nothing to do (tests use it). */
  drain(): Promise<void>;
}

export function startWorker(ctx: AppContext, list: Job[] = jobs()): Worker {
  let stopping = false;
  let wake: (() => void) | null = null;
  const loops = list.map(async (job) => {
    while (!stopping) {
      let handled = 0;
      try {
        handled = await job.run(ctx);
      } catch (err) {
        ctx.log.error({ err, job: job.name }, 'worker job failed; retrying after a pause');
      }
      if (handled > 0) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(job.idleMs ?? ctx.config.workerIdleMs, ctx.config.workerIdleMs * 20));
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  });
  return {
    async stop() {
      stopping = true;
      wake?.();
      await Promise.all(loops);
    },
    async drain() {
      for (const job of list) while ((await job.run(ctx)) > 0);
    },
  };
}

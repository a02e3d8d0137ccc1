// The worker loop (src/worker.ts): a job woken up runs at once, or, with gatherMs, after gathering
// what arrives meanwhile, so work arriving close together is handled in one run.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startWorker, type Job } from '../../src/worker.ts';
import type { AppContext } from '../../src/context.ts';

/** A job over an in-memory queue: each run takes everything queued and records how much it took. */
function queueJob(gatherMs?: number): { job: Job; add(): void; runs: number[] } {
  let queued = 0;
  let wake: (() => void) | undefined;
  const runs: number[] = [];
  const job: Job = {
    name: 'queue',
    idleMs: 60_000,
    gatherMs,
    wakeOn(w) {
      wake = w;
      return () => {
        wake = undefined;
      };
    },
    async run() {
      const taken = queued;
      queued = 0;
      if (taken > 0) runs.push(taken);
      return taken;
    },
  };
  return {
    job,
    add() {
      queued++;
      wake?.();
    },
    runs,
  };
}

// The loop reads only these settings of the context.
const ctx = { config: { workerIdleMs: 60_000 }, log: { error() {} } } as unknown as AppContext;

async function fourArrivals(gatherMs?: number): Promise<number[]> {
  const q = queueJob(gatherMs);
  const worker = startWorker(ctx, [q.job]);
  try {
    // Let the job find nothing and fall asleep for its idle minute.
    await sleep(20);
    for (let i = 0; i < 4; i++) {
      q.add();
      await sleep(10);
    }
    await sleep((gatherMs ?? 0) + 100);
    return q.runs;
  } finally {
    await worker.stop();
  }
}

describe('worker loop: wake-ups', () => {
  it('runs a woken job at once when it gathers nothing', async () => {
    const runs = await fourArrivals();
    assert.equal(runs.reduce((a, b) => a + b, 0), 4);
    assert.ok(runs.length >= 2, `each arrival 10 ms apart is handled as it comes: ${runs.join(', ')}`);
  });

  it('with gatherMs, handles what arrives within that time after a wake-up in one run', async () => {
    const runs = await fourArrivals(500);
    assert.deepEqual(runs, [4]);
  });
});

// The worker loop (src/worker.ts): a job woken up runs at once, or, with gatherMs, after gathering
// what arrives meanwhile, so work arriving close together is handled in one run.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { purging, startWorker, type Job } from '../../src/worker.ts';
import { PURGE_CHUNK } from '../../src/db/index.ts';
import type { AppContext } from '../../src/context.ts';
import { jobFailures, jobLastRun } from '../../src/metrics.ts';

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

describe('worker loop: its failures counted', () => {
  it('gives each job its series of shipping_worker_job_failures_total from the start, at 0, so an alert sees the first failure as an increase', async () => {
    const job: Job = { name: 'never-failing', idleMs: 60_000, run: async () => 0 };
    const worker = startWorker({ config: { workerIdleMs: 100 }, log: { error() {} } } as unknown as AppContext, [job]);
    try {
      const series = (await jobFailures.get()).values.find((v) => v.labels.task === 'never-failing');
      assert.equal(series?.value, 0);
    } finally {
      await worker.stop();
    }
  });
});

describe('worker loop: when each job last ran', () => {
  it('sets shipping_worker_job_last_run_timestamp_seconds after every run, failed ones too, so a stalled job or a missing worker shows', async () => {
    let runs = 0;
    const job: Job = {
      name: 'ticking',
      idleMs: 50,
      async run() {
        runs++;
        if (runs >= 2) throw new Error('the database is down');
        return 0;
      },
    };
    const lastRun = async () => (await jobLastRun.get()).values.find((v) => v.labels.task === 'ticking')?.value;
    assert.equal(await lastRun(), undefined, 'no series before the job runs');
    const worker = startWorker({ config: { workerIdleMs: 50 }, log: { error() {} } } as unknown as AppContext, [job]);
    try {
      await sleep(20);
      const first = await lastRun();
      assert.ok(first !== undefined && Math.abs(first - Date.now() / 1000) < 1, `the first run's end, in Unix seconds: ${first}`);
      // Every run after the first fails: the value moves on all the same.
      while (runs < 3) await sleep(20);
      assert.ok((await lastRun())! > first, 'moved on by the failed runs');
    } finally {
      await worker.stop();
    }
  });
});

describe('worker loop: purges', () => {
  it('a purge runs again at once only after deleting a whole PURGE_CHUNK, not for the few rows that come of age meanwhile', async () => {
    const deleted = [PURGE_CHUNK, 3, 3, 3];
    let runs = 0;
    const job: Job = { name: 'purge-test', idleMs: 60_000, run: purging(async () => deleted[runs++] ?? 0) };
    const worker = startWorker({ config: { workerIdleMs: 100 }, log: { error() {} } } as unknown as AppContext, [job]);
    try {
      await sleep(300);
      assert.equal(runs, 2, 'the whole chunk, then the 3 rows; the next run waits for its idle pause');
    } finally {
      await worker.stop();
    }
  });
});

describe('worker loop: a job that keeps failing', () => {
  it('waits twice as long after each failure in a row, logging each, and at the idle pace again once it succeeds', async () => {
    const started: number[] = [];
    let failing = true;
    let wake: (() => void) | undefined;
    const job: Job = {
      name: 'failing',
      idleMs: 100,
      // Woken every 20 ms, as a busy API wakes the webhook jobs: that must not cut the pause short.
      wakeOn(w) {
        wake = w;
        return () => {
          wake = undefined;
        };
      },
      async run() {
        started.push(Date.now());
        if (failing) throw new Error('the database is down');
        return 0;
      },
    };
    const logged: number[] = [];
    const quiet = { config: { workerIdleMs: 100 }, log: { error: (fields: { failures: number }) => logged.push(fields.failures) } } as unknown as AppContext;
    const counted = async () => (await jobFailures.get()).values.find((v) => v.labels.task === 'failing')?.value;
    const before = (await counted()) ?? 0;
    const worker = startWorker(quiet, [job]);
    const waking = setInterval(() => wake?.(), 20);
    try {
      // Runs at 0, 100, 300 and 700 ms (the next at 1,500): the gaps double (100, 200, 400).
      await sleep(1_250);
      const gaps = started.slice(1).map((t, i) => t - started[i]!);
      assert.ok(started.length >= 3 && started.length <= 5, `runs: ${started.length}`);
      // A timer never fires early (it may fire late on a busy machine).
      for (const [i, gap] of gaps.entries()) assert.ok(gap >= 100 * 2 ** i - 5, `gaps ${gaps.join(', ')} double`);
      assert.deepEqual(logged, started.map((_, i) => i + 1));
      // Each failure is counted for the alert on shipping_worker_job_failures_total (ops/alerts.yml).
      assert.equal(((await counted()) ?? 0) - before, started.length);
      failing = false;
      await sleep(1_000);
      const after = started.slice(-3);
      assert.ok(after[2]! - after[1]! < 300, `back at the idle pace: ${after.join(', ')}`);
    } finally {
      clearInterval(waking);
      await worker.stop();
    }
  });
});

describe('worker loop: the failing pause\'s bounds', () => {
  it('never pauses a failing job longer than 5 s, nor shorter than its idle pause', async () => {
    const started: number[] = [];
    const job: Job = {
      name: 'failing',
      idleMs: 3_000,
      async run() {
        started.push(Date.now());
        throw new Error('down');
      },
    };
    // Idle 3 s: failures pause 3 s (not the 100 ms a doubling from its floor would give), then 5 s (not 6).
    const slow = { config: { workerIdleMs: 3_000 }, log: { error() {} } } as unknown as AppContext;
    const worker = startWorker(slow, [job]);
    try {
      await sleep(9_500);
      const gaps = started.slice(1).map((t, i) => t - started[i]!);
      assert.equal(started.length, 3, `runs at ${gaps.join(', ')} ms apart`);
      assert.ok(gaps[0]! >= 2_995 && gaps[0]! < 4_500, `first pause ${gaps[0]} ms`);
      assert.ok(gaps[1]! >= 4_995 && gaps[1]! < 5_500 + 1_000, `second pause ${gaps[1]} ms`);
    } finally {
      await worker.stop();
    }
  });
});

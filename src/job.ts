// What a background job is to the worker loop (src/worker.ts), which runs every capability's jobs.
import type { AppContext } from './context.ts';

export interface Job {
  name: string;
  /** Does one batch of work; returns how many items it handled (0 = nothing to do right now). */
  run(ctx: AppContext): Promise<number>;
  /** Minimum milliseconds between two runs when the previous one found nothing. */
  idleMs?: number;
  /** A short poll when busy: for a second after finding work or being woken, pause only this long. */
  busyPollMs?: number;
  /** Subscribes to an in-process signal that work may have arrived; returns the unsubscribe function. */
  wakeOn?(wake: () => void): () => void;
  /**
   * After a wake-up, milliseconds to wait before running, so that work arriving close together is
   * handled in one run (one transaction for many items) instead of one run per wake-up.
   */
  gatherMs?: number;
  /** The worker is stopping: take no new work, even in a run already waiting for room (started work goes on). */
  stop?(): void;
  /** Waits for work the job started in the background (stop and drain call it). */
  settle?(): Promise<void>;
}

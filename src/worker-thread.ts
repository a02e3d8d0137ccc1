// The background jobs on a thread of their own, for a process that also serves HTTP (ROLE=all): the
// jobs get their own event loop and database connections, so a burst of webhook deliveries never
// delays a request. The thread is fed only through the database, like a worker process, plus a wake-up
// when this process writes a domain event (so webhooks leave at once rather than at the next poll).
import { Worker as Thread, isMainThread, parentPort, workerData } from 'node:worker_threads';
import type { Config } from './config.ts';
import type { AppContext } from './context.ts';
import { announceDomainEventWritten, onDomainEventWritten } from './db/events.ts';
import { closeContext, openContext } from './bootstrap.ts';
import { createLogger } from './log.ts';
import { startWorker, type Worker } from './worker.ts';
import { metricsSnapshot } from './metrics.ts';

/** The jobs thread's name, as the operating system lists it (at most 15 characters on Linux). */
export const JOBS_THREAD_NAME = 'jobs';

type FromThread = { ready: true } | { failed: string } | { stopped: true } | { metrics: Awaited<ReturnType<typeof metricsSnapshot>> };
type ToThread = 'wake' | 'stop' | 'metrics';

/** Starts the jobs on a new thread; resolves once the thread has opened the database and started them. */
export async function startWorkerThread(config: Config, onUnexpectedExit: (code: number) => void): Promise<Worker> {
  // Named, so `top -H` and /proc/<pid>/task tell it from the render threads (piscina's, named WorkerThread).
  const thread = new Thread(new URL(import.meta.url), { workerData: { config }, name: JOBS_THREAD_NAME });
  let stopping = false;
  const send = (m: ToThread) => thread.postMessage(m);
  const exited = new Promise<number>((resolve) => thread.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const onMessage = (m: FromThread) => {
      if ('ready' in m) resolve();
      else if ('failed' in m) reject(new Error(`the background jobs could not start: ${m.failed}`));
    };
    thread.on('message', onMessage);
    thread.once('error', reject);
    void exited.then((code) => reject(new Error(`the background jobs' thread exited with code ${code} while starting`)));
  });
  void exited.then((code) => stopping || onUnexpectedExit(code));
  // One wake-up message per turn of the event loop, however many events it wrote.
  let waking = false;
  const unsubscribe = onDomainEventWritten(() => {
    if (waking) return;
    waking = true;
    setImmediate(() => {
      waking = false;
      send('wake');
    });
  });
  return {
    // Once stopping, the thread may be gone: a scrape then has the API thread's metrics alone, at once.
    metrics: () =>
      stopping
        ? Promise.resolve([])
        : new Promise((resolve) => {
            const onMessage = (m: FromThread) => {
              if (!('metrics' in m)) return;
              thread.off('message', onMessage);
              resolve(m.metrics);
            };
            thread.on('message', onMessage);
            send('metrics');
          }),
    async stop() {
      stopping = true;
      unsubscribe();
      send('stop');
      await exited;
    },
    drain() {
      throw new Error('drain() runs the jobs in this thread; use startWorker for that');
    },
  };
}

async function runThread(config: Config): Promise<void> {
  const port = parentPort!;
  const log = createLogger(config.logLevel).child({ thread: 'jobs' });
  let worker: Worker;
  let ctx: AppContext;
  try {
    ctx = await openContext(config, log);
    worker = startWorker(ctx);
  } catch (err) {
    port.postMessage({ failed: (err as Error).message } satisfies FromThread);
    return;
  }
  port.on('message', (m: ToThread) => {
    if (m === 'wake') announceDomainEventWritten();
    if (m === 'metrics') void metricsSnapshot().then((metrics) => port.postMessage({ metrics } satisfies FromThread));
    if (m === 'stop') {
      void (async () => {
        await worker.stop();
        await closeContext(ctx);
        port.close();
      })();
    }
  });
  port.postMessage({ ready: true } satisfies FromThread);
}

if (!isMainThread && (workerData as { config?: Config } | null)?.config) await runThread((workerData as { config: Config }).config);

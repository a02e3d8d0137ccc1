// The WAL checkpointer of a SQLite file database, run in a worker thread (see startCheckpointer in
// sqlite.ts). node:sqlite is synchronous: a checkpoint on the service's own connection (SQLite's
// automatic one runs inside the COMMIT that crosses 1000 pages) copies the WAL into the database file
// and fsyncs both on the event loop, tens of milliseconds during which no request is served. Here it
// runs on its own connection in its own thread, so it never stalls the event loop.
//
// Every TICK_MS: a PASSIVE checkpoint, which never waits for and never blocks readers or writers (a
// busy checkpoint lock, e.g. another process's checkpointer, makes it return at once). Once the WAL
// has been fully copied and unchanged for IDLE_TICKS ticks and the file is larger than
// TRUNCATE_ABOVE_BYTES, one TRUNCATE checkpoint shrinks it to zero; it takes the write lock for an
// instant, so it runs only when nobody is writing, and gives up quickly (short busy_timeout) otherwise.
import { DatabaseSync } from 'node:sqlite';
import { statSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

export interface CheckpointerData {
  path: string;
  tickMs: number;
}

const TRUNCATE_ABOVE_BYTES = 1 << 20;
/** 64 MiB of 4 KiB pages. */
const RESTART_ABOVE_FRAMES = 16_384;
const IDLE_TICKS = 10;

interface CheckpointRow {
  busy: number;
  log: number;
  checkpointed: number;
}

const { path, tickMs } = workerData as CheckpointerData;
const db = new DatabaseSync(path);
db.exec('PRAGMA busy_timeout = 50');
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const restart = db.prepare('PRAGMA wal_checkpoint(RESTART)');
const truncate = db.prepare('PRAGMA wal_checkpoint(TRUNCATE)');

let lastLog = -1;
let idleTicks = 0;

function walBytes(): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

function tick(): void {
  try {
    const r = passive.get() as unknown as CheckpointRow;
    if (r.busy === 0 && r.log === r.checkpointed && r.log === lastLog) {
      if (++idleTicks === IDLE_TICKS && walBytes() > TRUNCATE_ABOVE_BYTES) truncate.get();
    } else {
      idleTicks = 0;
      // Under steady writes a PASSIVE checkpoint never quite catches up (frames arrive while it copies),
      // and SQLite rewinds the WAL only once one has: the file would grow without end. Past
      // RESTART_ABOVE_FRAMES, one RESTART checkpoint holds the write lock while it copies what arrived
      // since the PASSIVE one just above, so that the next commit starts the WAL again from its beginning.
      if (r.log > RESTART_ABOVE_FRAMES) restart.get();
    }
    lastLog = r.log;
  } catch {
    // SQLITE_BUSY or a transient I/O error: the next tick tries again.
  }
}

const timer = setInterval(tick, tickMs);
parentPort!.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  tick();
  db.close();
  parentPort!.close();
});

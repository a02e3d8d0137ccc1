// Answers read from a SQLite file, reused while nothing has committed to it.
//
// In WAL mode every SQLite connection, in any process, finds the database's state in the WAL-index
// header: the first 48 bytes of the `-shm` file, which each commit rewrites (its change counter, the
// last frame, the salts and a checksum over them) before the commit returns. Reading those bytes with
// one `pread` tells whether anything has committed since the last look, at a fraction of what a read
// transaction costs (two `fcntl` calls for the read lock, the B-tree descent, the row turned into a
// JavaScript string), and without any message between processes: a write by the admin command line,
// a worker process or another API process is seen by the very next read, as it is without the cache.
//
// The order is what makes a remembered answer safe: the header is read first, then (on a miss) the
// row. An answer kept under a header therefore reflects that state or a later one, and any later
// commit changes the header, so the next read drops everything read before it. A header that cannot be
// read turns the reuse off; nothing is ever answered from memory without a look at the header.
import { openSync, readSync, realpathSync } from 'node:fs';

/** The WAL-index header SQLite keeps first in the `-shm` file (struct WalIndexHdr, 48 bytes). */
const HEADER_WORDS = 12;
/** After a failed look, the next try waits this long (every read goes to SQLite meanwhile). */
const RETRY_MS = 1000;

// One read-only descriptor per `-shm` file, opened once and never closed while the process runs.
// Closing any descriptor of a file releases every POSIX lock the process holds on it, and SQLite's
// connections in this process (the read connection, the service's, the checkpointer's) hold theirs on
// this file: SQLite keeps its own descriptors open until its locks are gone for that reason, and the
// watch must too. It costs one descriptor per database file the process has opened.
const descriptors = new Map<string, number>();

function descriptorOf(shmPath: string): number {
  let fd = descriptors.get(shmPath);
  if (fd === undefined) descriptors.set(shmPath, (fd = openSync(shmPath, 'r')));
  return fd;
}

/** Tells, with one read of the WAL-index header, whether a transaction has committed since the last call. */
export class CommitWatch {
  readonly #path: string;
  readonly #now = new Int32Array(HEADER_WORDS);
  readonly #seen = new Int32Array(HEADER_WORDS);
  #generation = 0;
  #retryAt = 0;
  #closed = false;

  /**
   * `databasePath`: the SQLite file, which must exist. Its `-shm` is found next to the file a symbolic
   * link points to, as SQLite finds it.
   */
  constructor(databasePath: string) {
    this.#path = `${realpathSync(databasePath)}-shm`;
  }

  /**
   * A number that stays the same exactly while nothing has committed to the database, in any process,
   * since the previous call; -1 when the header cannot be read (then no answer may be reused).
   */
  generation(): number {
    if (this.#closed || (this.#retryAt !== 0 && Date.now() < this.#retryAt)) return -1;
    try {
      if (readSync(descriptorOf(this.#path), this.#now, 0, HEADER_WORDS * 4, 0) !== HEADER_WORDS * 4) return this.#failed();
    } catch {
      // No `-shm` (not in WAL mode) or a file that cannot be read now: no reuse until a later try works.
      return this.#failed();
    }
    this.#retryAt = 0;
    const now = this.#now;
    const seen = this.#seen;
    let same = true;
    for (let i = 0; i < HEADER_WORDS; i++) {
      if (now[i] !== seen[i]) {
        same = false;
        seen[i] = now[i]!;
      }
    }
    if (!same) this.#generation = (this.#generation + 1) % 0x40000000;
    return this.#generation;
  }

  #failed(): number {
    this.#retryAt = Date.now() + RETRY_MS;
    // Whatever is read next must count as a change.
    this.#seen.fill(0);
    this.#generation = (this.#generation + 1) % 0x40000000;
    return -1;
  }

  /** Stops looking (every later call answers -1). The descriptor stays open: see `descriptors`. */
  close(): void {
    this.#closed = true;
  }
}

/** Characters of answers kept at most (about 2 bytes each). */
export const DEFAULT_MAX_ANSWER_CHARS = 4 * 1024 * 1024;

/** What AnswerCache needs of a CommitWatch (tests count the looks). */
export interface Commits {
  generation(): number;
}

type Done = (err: Error | null, answer: string | null) => void;
/** Reads an answer: at once, or (a read of several queries) through a promise. */
type Load = () => string | null | Promise<string | null>;

/**
 * Text answers of single-row reads, remembered until the next commit to the database. Bounded in
 * characters: past the bound the oldest answers go first (a Map iterates in insertion order).
 */
export class AnswerCache {
  readonly #commits: Commits;
  readonly #maxChars: number;
  readonly #answers = new Map<string, string>();
  #generation = -1;
  #chars = 0;
  #waiting: { key: string; load: Load; done: Done }[] = [];

  constructor(commits: Commits, maxChars = DEFAULT_MAX_ANSWER_CHARS) {
    this.#commits = commits;
    this.#maxChars = maxChars;
  }

  /**
   * The answer for `key`: the one remembered if nothing has committed since it was read, else what
   * `load` reads now (synchronously, after the look at the header), remembered unless it is null.
   * `key` must name the query and every one of its parameters.
   */
  get(key: string, load: () => string | null): string | null {
    return this.#answer(this.#look(), key, load) as string | null;
  }

  /**
   * `get`, answered to `done` at the end of this turn of the event loop (setImmediate) together with
   * every other read asked for during the turn, after one look at the header for all of them. Each
   * was asked for before that look, so each answer holds every commit made before its request came
   * in, as a read of its own would; under load one `pread` then serves many requests.
   * `load` may answer through a promise (it starts after the look); its answer is remembered only if
   * no later look has seen a commit meanwhile. `done` is never called synchronously.
   */
  getAtEndOfTurn(key: string, load: Load, done: Done): void {
    this.#waiting.push({ key, load, done });
    if (this.#waiting.length === 1) setImmediate(this.#answerWaiting);
  }

  readonly #answerWaiting = (): void => {
    const waiting = this.#waiting;
    this.#waiting = [];
    const generation = this.#look();
    // Every read is answered, whatever one of them or its callback throws; a callback's error is
    // thrown again afterwards, as it would have been from a callback of its own.
    let thrown: { err: unknown } | undefined;
    for (const w of waiting) {
      let answer: string | null | Promise<string | null> = null;
      let failure: Error | null = null;
      try {
        answer = this.#answer(generation, w.key, w.load);
      } catch (err) {
        failure = err as Error;
      }
      if (answer instanceof Promise) {
        answer.then(
          (text) => w.done(null, text),
          (err: Error) => w.done(err, null),
        );
        continue;
      }
      try {
        w.done(failure, answer);
      } catch (err) {
        thrown ??= { err };
      }
    }
    if (thrown) throw thrown.err;
  };

  #look(): number {
    const generation = this.#commits.generation();
    if (generation !== this.#generation) {
      this.#answers.clear();
      this.#chars = 0;
      this.#generation = generation;
    }
    return generation;
  }

  #answer(generation: number, key: string, load: Load): string | null | Promise<string | null> {
    if (generation < 0) return load();
    const known = this.#answers.get(key);
    if (known !== undefined) return known;
    const answer = load();
    if (answer instanceof Promise) {
      return answer.then((text) => {
        // A look since the load began that saw a commit has dropped this generation's answers.
        if (text !== null && this.#generation === generation) this.#remember(key, text);
        return text;
      });
    }
    if (answer !== null) this.#remember(key, answer);
    return answer;
  }

  #remember(key: string, answer: string): void {
    if (answer.length > this.#maxChars / 16) return;
    this.#answers.set(key, answer);
    this.#chars += answer.length;
    for (const [oldest, text] of this.#answers) {
      if (this.#chars <= this.#maxChars) break;
      this.#answers.delete(oldest);
      this.#chars -= text.length;
    }
  }

  /** Answers held now, and their characters. */
  get size(): { answers: number; chars: number } {
    return { answers: this.#answers.size, chars: this.#chars };
  }
}

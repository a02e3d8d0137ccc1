// The webhook worker: fan-out turns domain events into deliveries, delivery sends them. Both claim
// their work in the database, so any number of processes share it and a crash loses nothing.
import { webhookDeliveries } from '../metrics.ts';
import type { AppContext } from '../context.ts';
import { createCache } from '../cache.ts';
import type { Job } from '../job.ts';
import * as outbox from '../db/events.ts';
import { onDomainEventWritten } from '../db/events.ts';
import { isoNow, uuidv7 } from '../db/ids.ts';
import { redactUrl } from '../log.ts';
import { sendOnce, verdict, type SendOptions } from './delivery.ts';
import { outboundPolicy, PinnedAgents } from './outbound.ts';
import { openSecret, secretKey } from './secret-box.ts';
import { signerFor, webhookHeaders, type Signer } from './signing.ts';
import * as store from './store.ts';

/** Deliveries in flight per process. */
export const DEFAULT_CONCURRENCY = 32;
/** Events fanned out per transaction (each becomes one delivery per subscriber). */
const EVENTS_PER_FANOUT = 50;
/** Claim new deliveries once this many slots are free, so claims come in batches. */
const MIN_CLAIM = 8;
/**
 * The fan-out's poll interval while busy (see Job.busyPollMs). This process's own events wake it at
 * their commit, so the poll only finds other processes' events; each poll is a query. The delivery
 * job has no busy poll: the fan-out wakes it whenever it leaves deliveries unclaimed, it claims again
 * as long as it finds any, and retries and other processes' leftovers wait at most WORKER_IDLE_MS.
 */
const BUSY_POLL_MS = 25;
/**
 * How long the fan-out waits after a commit wakes it, so that the events of the commits around it
 * go out in one fan-out (one transaction, one claim, one group commit) rather than one each.
 */
const FANOUT_GATHER_MS = 20;
/** How long a small batch of results waits for more while deliveries are in flight. */
const GROUP_COMMIT_WAIT_MS = 2;
/** Results written per transaction at most. */
const WRITE_BATCH = 256;
/** Webhooks whose signer is kept ready. */
const SIGNER_CACHE = 1000;
/** A webhook that has failed without a success for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;

/** The Standard Webhooks body of an event: the same bytes on every attempt (`data` is stored as JSON text). */
export function bodyOf(e: outbox.EventRow): string {
  return `{"id":${JSON.stringify(e.id)},"type":${JSON.stringify(e.type)},"timestamp":${JSON.stringify(e.created_at)},"data":${e.data}}`;
}

/**
 * Creates one pending delivery per subscriber of each undispatched event, in one transaction (paused
 * for a webhook deactivated since the event).
 * Given the worker's delivery engine, the deliveries it has room for are created already claimed by
 * it (leased, as a claim would lease them) and sent once the transaction commits, so they need no
 * claim of their own; a crash before they are recorded leaves them due when the lease runs out.
 */
export async function fanOut(ctx: AppContext, engine?: DeliveryEngine, options: { eventsWritten?: boolean } = {}): Promise<{ events: number; deliveries: number; claimed: number }> {
  // A poll looks before it opens a transaction; a fan-out woken by this process's commit knows.
  if (!options.eventsWritten && !(await outbox.anyUndispatched(ctx.db))) return { events: 0, deliveries: 0, claimed: 0 };
  const lease = await engine?.lease(ctx);
  try {
    let claimed: { deliveries: store.ClaimedDelivery[]; hooks: store.DeliveryTarget[]; events: outbox.EventRow[] } | undefined;
    const counts = await ctx.db.transaction().execute(async (tx) => {
      const now = isoNow();
      const events = await outbox.claimEvents(tx, ctx.storage.dialect, EVENTS_PER_FANOUT, now);
      if (events.length === 0) return { events: 0, deliveries: 0, claimed: 0 };
      // Times are RFC 3339 UTC with milliseconds: their text sorts as they do.
      const oldest = events.map((e) => e.created_at).sort()[0]!;
      const hooks = await store.subscribersOf(tx, [...new Set(events.map((e) => e.account_id))], oldest);
      const byAccount = Map.groupBy(
        hooks.map((h) => ({ hook: h, events: new Set<string>(JSON.parse(h.events)) })),
        (h) => h.hook.account_id,
      );
      const rows: store.DeliveryRow[] = [];
      for (const e of events) {
        for (const { hook, events: kinds } of byAccount.get(e.account_id) ?? []) {
          // A webhook created after the change did not subscribe to it, however late the fan-out runs; one
          // inactive now and unchanged since before the change was inactive then. One deactivated since
          // (a PATCH, a 410) was active at the change: its delivery waits, paused, as its others do.
          if (!kinds.has(e.type) || hook.created_at > e.created_at) continue;
          const paused = hook.active !== 1;
          if (paused && hook.updated_at <= e.created_at) continue;
          rows.push({
            id: uuidv7(),
            webhook_id: hook.id,
            account_id: e.account_id,
            event_id: e.id,
            type: e.type,
            status: 'pending',
            attempt_count: 0,
            next_attempt_at: paused ? null : now,
            locked_until: null,
            created_at: now,
            updated_at: now,
          });
        }
      }
      const due = rows.filter((r) => r.next_attempt_at !== null);
      const leased = lease ? due.slice(0, lease.take(due.length)) : [];
      for (const row of leased) row.next_attempt_at = row.locked_until = lease!.until;
      const inserted = await store.insertDeliveries(tx, rows);
      // A delivery that already existed (this event fanned out by another worker) is not this one's to send.
      claimed = { deliveries: leased.filter((r) => inserted.has(r.id)), hooks, events };
      return { events: events.length, deliveries: rows.length, claimed: claimed.deliveries.length };
    });
    if (claimed) lease?.start(claimed.deliveries, claimed.hooks, claimed.events);
    return counts;
  } finally {
    // Rolled back, or nothing to fan out: the held slots are given back (a no-op after a start).
    lease?.start([], [], []);
  }
}

interface Setup {
  ctx: AppContext;
  send: SendOptions;
  key: Buffer;
  leaseMs: number;
}

type Hook = store.DeliveryTarget;

/** Slots of the engine held for deliveries a fan-out creates already claimed (`DeliveryEngine.lease`). */
export interface FanOutLease {
  /** The lease the deliveries are created with (set by `take`). */
  until: string;
  /** Holds up to `wanted` slots; returns how many. Called at most once. */
  take(wanted: number): number;
  /** Once committed: sends these deliveries and gives back the slots left over; later calls do nothing. */
  start(deliveries: store.ClaimedDelivery[], hooks: Hook[], events: outbox.EventRow[]): void;
}

/** Slots of the engine held for deliveries about to start (`DeliveryEngine.#hold`). */
interface Slots {
  count: number;
  start(deliveries: store.ClaimedDelivery[], hooks: Hook[], events: outbox.EventRow[], lease: string): void;
}

interface Finished {
  result: store.AttemptResult;
  recorded: () => void;
}

/**
 * Claims due deliveries, keeps up to `capacity` of them in flight, and records their results in
 * group commits: whatever finished while the previous batch was being written goes in the next one.
 * A delivery holds its slot until its result is written, so a slow database slows the sending.
 */
export class DeliveryEngine {
  readonly #capacity: number;
  readonly #inFlight = new Set<Promise<void>>();
  /** Slots held by fan-outs whose deliveries start when their transaction commits. */
  #held = 0;
  #slotWaiters: (() => void)[] = [];
  /** Made once per context; the claim and the fan-out may both ask for it at once. */
  #setup: { ctx: AppContext; ready: Promise<Setup> } | null = null;
  #finished: Finished[] = [];
  #writing = false;
  /** Set by `stop`, for good: no new claim starts, by the delivery job or a fan-out (a stopped worker's jobs are not run again). */
  #stopping = false;
  // Decrypted secrets are turned into signers once per webhook and secret (a cache).
  readonly #signers = createCache<string, { sealed: string; signer: Signer }>({ max: SIGNER_CACHE });

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  #prepare(ctx: AppContext): Promise<Setup> {
    if (this.#setup?.ctx === ctx) return this.#setup.ready;
    const timeoutMs = ctx.config.webhookTimeoutMs;
    const ready = secretKey(ctx.db).then((key) => ({
      ctx,
      key,
      // A claim outlives any attempt (DNS + request are bounded by the timeout) with room to record it.
      leaseMs: 2 * timeoutMs + 1000,
      send: { agents: new PinnedAgents(timeoutMs), policy: outboundPolicy(ctx.config), timeoutMs, userAgent: `shipping-webhooks/${ctx.config.version}` },
    }));
    this.#setup = { ctx, ready };
    // A failed lookup is tried again by the next caller.
    ready.catch(() => {
      if (this.#setup?.ready === ready) this.#setup = null;
    });
    return ready;
  }

  /** Free slots: neither in flight nor held by a fan-out. */
  #room(): number {
    return this.#capacity - this.#inFlight.size - this.#held;
  }

  /** One claim: returns how many deliveries it started (they finish in the background). */
  async run(ctx: AppContext): Promise<number> {
    const setup = await this.#prepare(ctx);
    const minRoom = Math.min(MIN_CLAIM, this.#capacity);
    while (!this.#stopping && this.#room() < minRoom) await new Promise<void>((resolve) => this.#slotWaiters.push(resolve));
    // Once stopping, slots that free up take nothing new: the stop waits only for what is in flight.
    if (this.#stopping) return 0;
    // The slots are held while the claim is out, so a fan-out meanwhile cannot take them too.
    const slots = this.#hold(setup, this.#room());
    try {
      const now = Date.now();
      const lease = isoNow(now + setup.leaseMs);
      const claimed = await store.claimDueDeliveries(ctx.db, ctx.storage.dialect, slots.count, isoNow(now), lease);
      if (claimed.length === 0) return 0;
      const [hookRows, eventRows] = await Promise.all([
        store.webhooksByIds(ctx.db, [...new Set(claimed.map((d) => d.webhook_id))]),
        outbox.eventsByIds(ctx.db, [...new Set(claimed.map((d) => d.event_id))]),
      ]);
      slots.start(claimed, hookRows, eventRows, lease);
      return claimed.length;
    } finally {
      slots.start([], [], [], '');
    }
  }

  /** For a fan-out: a lease for deliveries it creates already claimed, and the slots to send them in. */
  async lease(ctx: AppContext): Promise<FanOutLease> {
    const setup = await this.#prepare(ctx);
    let slots: Slots | undefined;
    const lease: FanOutLease = {
      until: '',
      take: (wanted) => {
        // A second take would hold slots the first's `start` never gives back.
        if (slots) throw new Error('a fan-out lease is taken once');
        // Timed here, inside the fan-out's transaction: waiting for the write lock does not use it up.
        lease.until = isoNow(Date.now() + setup.leaseMs);
        slots = this.#hold(setup, this.#stopping ? 0 : Math.min(wanted, this.#room()));
        return slots.count;
      },
      start: (deliveries, hooks, events) => slots?.start(deliveries, hooks, events, lease.until),
    };
    return lease;
  }

  /**
   * Holds `count` free slots until `start`, which sends the deliveries given (at most `count`) and
   * gives back the rest; only the first call does anything, so a `finally` can always call it.
   */
  #hold(setup: Setup, count: number): Slots {
    const n = Math.max(0, count);
    this.#held += n;
    let done = false;
    return {
      count: n,
      start: (deliveries, hookRows, eventRows, lease) => {
        if (done) return;
        done = true;
        this.#held -= n;
        this.#startAll(setup, deliveries, hookRows, eventRows, lease);
        if (deliveries.length < n) this.#wakeSlotWaiters();
      },
    };
  }

  #startAll(setup: Setup, deliveries: store.ClaimedDelivery[], hookRows: Hook[], eventRows: outbox.EventRow[], lease: string): void {
    const hooks = new Map(hookRows.map((h) => [h.id, h]));
    const bodies = new Map(eventRows.map((e) => [e.id, bodyOf(e)]));
    for (const d of deliveries) {
      const p = this.#attempt(setup, d, hooks.get(d.webhook_id), bodies.get(d.event_id), lease).finally(() => {
        this.#inFlight.delete(p);
        this.#wakeSlotWaiters();
      });
      this.#inFlight.add(p);
    }
  }

  #wakeSlotWaiters(): void {
    const waiters = this.#slotWaiters;
    this.#slotWaiters = [];
    for (const w of waiters) w();
  }

  #signer(setup: Setup, hook: Hook): Signer | null {
    if (!hook.secret) return null;
    const cached = this.#signers.get(hook.id);
    if (cached?.sealed === hook.secret) return cached.signer;
    const signer = signerFor(openSecret(setup.key, hook.id, hook.secret));
    this.#signers.set(hook.id, { sealed: hook.secret, signer });
    return signer;
  }

  async #attempt(setup: Setup, d: store.ClaimedDelivery, hook: Hook | undefined, body: string | undefined, lease: string): Promise<void> {
    const { ctx } = setup;
    // Deleted since the claim: its deliveries went with it.
    if (!hook) return;
    if (body === undefined) {
      ctx.log.error({ webhookId: hook.id, deliveryId: d.id, eventId: d.event_id }, 'webhook delivery has no event; it stays pending');
      return;
    }
    try {
      const at = isoNow();
      const outcome = await sendOnce(setup.send, hook.url, webhookHeaders(d.event_id, body, this.#signer(setup, hook)), body);
      const attempt = d.attempt_count + 1;
      const v = verdict(outcome, attempt, ctx.config.webhookRetrySchedule);
      webhookDeliveries.inc({ outcome: v.status === 'pending' ? 'retrying' : v.status });
      const nextAttemptAt = v.status === 'pending' ? isoNow(Date.now() + v.delayMs) : null;
      await this.#record(setup, {
        deliveryId: d.id,
        webhookId: hook.id,
        lease,
        attempt: { id: uuidv7(), at, response_status: outcome.status, duration_ms: outcome.durationMs, error: outcome.error },
        status: v.status,
        nextAttemptAt,
        effect: v.status === 'succeeded' ? 'success' : v.status === 'failed' && v.reason === 'gone' ? 'gone' : 'failure',
      });
      if (v.status === 'succeeded' && !ctx.log.isLevelEnabled('debug')) return;
      const log = ctx.log.child({ webhookId: hook.id, deliveryId: d.id, eventId: d.event_id, type: d.type });
      const details = { attempt, responseStatus: outcome.status, durationMs: outcome.durationMs, error: outcome.error, url: redactUrl(hook.url) };
      if (v.status === 'succeeded') log.debug(details, 'webhook delivered');
      else if (v.status === 'pending') log.info({ ...details, nextAttemptAt }, 'webhook delivery attempt failed; will retry');
      else if (v.reason === 'exhausted') log.warn(details, 'webhook delivery failed after the last retry');
    } catch (err) {
      ctx.log.error({ err, webhookId: hook.id, deliveryId: d.id }, 'webhook delivery could not be completed; it is retried when its claim runs out');
    }
  }

  #record(setup: Setup, result: store.AttemptResult): Promise<void> {
    return new Promise<void>((recorded) => {
      this.#finished.push({ result, recorded });
      if (!this.#writing) void this.#write(setup);
    });
  }

  async #write(setup: Setup): Promise<void> {
    const { ctx } = setup;
    this.#writing = true;
    while (this.#finished.length > 0) {
      // While other deliveries are still out, a moment's wait lets their results share this commit.
      if (this.#finished.length < WRITE_BATCH && this.#inFlight.size > this.#finished.length) await new Promise((r) => setTimeout(r, GROUP_COMMIT_WAIT_MS));
      const batch = this.#finished.splice(0, WRITE_BATCH);
      try {
        const disabled = await store.recordAttempts(ctx.db, batch.map((f) => f.result), isoNow(Date.now() - DISABLE_AFTER_MS));
        for (const { webhookId, reason } of disabled) {
          ctx.log.warn({ webhookId }, reason === 'gone' ? 'webhook disabled: the receiver answered 410 Gone' : 'webhook disabled: failing without a success for 5 days');
        }
      } catch (err) {
        ctx.log.error({ err, deliveries: batch.map((f) => f.result.deliveryId) }, 'webhook attempts could not be recorded; they are retried when their claims run out');
      }
      for (const f of batch) f.recorded();
    }
    this.#writing = false;
  }

  async settle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight]);
  }

  /** Claims nothing more, by the delivery job or a fan-out: slots that free up stay free. */
  stop(): void {
    this.#stopping = true;
    this.#wakeSlotWaiters();
  }

  async close(): Promise<void> {
    await this.settle();
    const setup = this.#setup;
    this.#setup = null;
    await (await setup?.ready.catch(() => undefined))?.send.agents.close();
  }
}

/** The two webhook jobs for one worker; each call makes its own in-flight pool and connection cache. */
export function webhookJobs(options: { concurrency?: number } = {}): Job[] {
  const engine = new DeliveryEngine(options.concurrency ?? DEFAULT_CONCURRENCY);
  const deliveryWakers = new Set<() => void>();
  // Set when a commit of this process wrote events since the fan-out last ran.
  let eventsWritten = false;
  return [
    {
      name: 'webhook-fanout',
      busyPollMs: BUSY_POLL_MS,
      wakeOn: (wake) =>
        onDomainEventWritten(() => {
          eventsWritten = true;
          wake();
        }),
      gatherMs: FANOUT_GATHER_MS,
      run: async (ctx) => {
        const written = eventsWritten;
        eventsWritten = false;
        const { events, deliveries, claimed } = await fanOut(ctx, engine, { eventsWritten: written });
        // Deliveries the engine had no room for are claimed by its own job.
        if (deliveries > claimed) for (const wake of deliveryWakers) wake();
        return events;
      },
    },
    {
      name: 'webhook-delivery',
      wakeOn: (wake) => {
        deliveryWakers.add(wake);
        return () => deliveryWakers.delete(wake);
      },
      run: (ctx) => engine.run(ctx),
      stop: () => engine.stop(),
      settle: () => engine.close(),
    },
  ];
}

// The sandbox carrier: outside production, moves new labels along by itself so integrations see
// real tracking and webhooks without a carrier. Its events go through the same ingestion as the API.
import type { AppContext } from '../context.ts';
import { firstIdAt, isoNow } from '../db/ids.ts';
import type { TrackingStatus } from '../carriers/index.ts';
import { shipmentsByIds, type Address } from '../shipments/service.ts';
import { activeLabelsAfter, labelRecord } from '../labels/service.ts';
import { ingestInTransaction } from './service.ts';
import * as store from './store.ts';

export const SANDBOX_OUTCOMES = ['delivered', 'exception', 'returned'] as const;
export type SandboxOutcome = (typeof SANDBOX_OUTCOMES)[number];

/** Labels created longer ago than this when the sandbox first sees them are left alone. */
export const ENROLL_WINDOW_MS = 24 * 3600 * 1000;
/**
 * Label ids are taken when a label's transaction starts, so a label may become visible after one with
 * a higher id: each run looks again at the labels this much older than the newest one it took on.
 */
export const ENROLL_SETTLE_MS = 10_000;
const BATCH = 50;
const LABEL_PAGE = 200;

interface Step {
  status: TrackingStatus;
  at: 'origin' | 'destination';
  description: string;
}

/** The four steps of each outcome, one every `SANDBOX_STEP_SECONDS`. */
export const SANDBOX_SCRIPTS: Record<SandboxOutcome, readonly Step[]> = {
  delivered: [
    { status: 'pre_transit', at: 'origin', description: 'Shipping label created, awaiting item' },
    { status: 'in_transit', at: 'origin', description: 'Picked up and departed origin facility' },
    { status: 'out_for_delivery', at: 'destination', description: 'Out for delivery' },
    { status: 'delivered', at: 'destination', description: 'Delivered, front door' },
  ],
  exception: [
    { status: 'pre_transit', at: 'origin', description: 'Shipping label created, awaiting item' },
    { status: 'in_transit', at: 'origin', description: 'Picked up and departed origin facility' },
    { status: 'out_for_delivery', at: 'destination', description: 'Out for delivery' },
    { status: 'exception', at: 'destination', description: 'Delivery attempted, recipient not available' },
  ],
  returned: [
    { status: 'pre_transit', at: 'origin', description: 'Shipping label created, awaiting item' },
    { status: 'in_transit', at: 'origin', description: 'Picked up and departed origin facility' },
    { status: 'exception', at: 'destination', description: 'Address undeliverable, returning to sender' },
    { status: 'returned', at: 'origin', description: 'Returned to sender' },
  ],
};

/** The documented triggers: the shipment's `reference` containing SANDBOX_EXCEPTION or SANDBOX_RETURNED (any case). */
export function sandboxOutcome(reference: string | null): SandboxOutcome {
  const r = (reference ?? '').toUpperCase();
  if (r.includes('SANDBOX_RETURNED')) return 'returned';
  if (r.includes('SANDBOX_EXCEPTION')) return 'exception';
  return 'delivered';
}

function place(address: Address): string {
  return [address.city, address.state, address.country].filter(Boolean).join(', ');
}

/** The millisecond a uuidv7 was made. */
function timeOfId(id: string): number {
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

/** Takes on the active labels it has not seen yet, page by page; returns how many. */
async function enrollNewLabels(ctx: AppContext, nowMs: number, stepMs: number): Promise<number> {
  const newest = await store.newestEnrolled(ctx.db);
  const floor = nowMs - ENROLL_WINDOW_MS;
  let after = firstIdAt(newest === undefined ? floor : Math.max(floor, timeOfId(newest) - ENROLL_SETTLE_MS));
  let taken = 0;
  for (;;) {
    const labels = await activeLabelsAfter(ctx.db, after, LABEL_PAGE);
    if (labels.length === 0) return taken;
    const enrolled = await store.enrolledAmong(
      ctx.db,
      labels.map((l) => l.id),
    );
    const fresh = labels.filter((l) => !enrolled.has(l.id));
    const shipments = new Map((await shipmentsByIds(ctx.db, fresh.map((l) => l.shipment_id))).map((s) => [s.id, s]));
    await store.enroll(
      ctx.db,
      fresh.map((l) => ({
        label_id: l.id,
        account_id: l.account_id,
        outcome: sandboxOutcome(shipments.get(l.shipment_id)?.reference ?? null),
        step: 0,
        next_at: isoNow(nowMs + stepMs),
        created_at: isoNow(nowMs),
      })),
    );
    taken += fresh.length;
    if (labels.length < LABEL_PAGE) return taken;
    after = labels[labels.length - 1]!.id;
  }
}

/** One run of the job: takes new labels on, then does every step that is due. Returns steps done. */
export async function runSandbox(ctx: AppContext): Promise<number> {
  if (!ctx.config.sandboxTracking) return 0;
  const stepMs = ctx.config.sandboxStepSeconds * 1000;
  const nowMs = Date.now();

  const taken = await enrollNewLabels(ctx, nowMs, stepMs);

  let done = 0;
  for (const parcel of await store.dueParcels(ctx.db, isoNow(), BATCH)) {
    if (await advance(ctx, parcel, stepMs)) done++;
  }
  return done + taken;
}

/** Does the parcel's next step once, however many workers try: the conditional UPDATE decides. */
async function advance(ctx: AppContext, parcel: store.SandboxParcelRow, stepMs: number): Promise<boolean> {
  const script = SANDBOX_SCRIPTS[parcel.outcome as SandboxOutcome] ?? SANDBOX_SCRIPTS.delivered;
  const step = script[parcel.step];
  return ctx.db.transaction().execute(async (tx) => {
    const now = Date.now();
    const last = parcel.step + 1 >= script.length;
    if (!(await store.claimStep(tx, parcel.label_id, parcel.step, last ? null : isoNow(now + stepMs)))) return false;
    const label = await labelRecord(tx, null, parcel.label_id);
    const [shipment] = label ? await shipmentsByIds(tx, [label.shipment_id]) : [];
    if (!step || !label || !shipment || label.status !== 'active') {
      await store.stopSandbox(tx, [parcel.label_id]);
      return true;
    }
    const address: Address = step.at === 'origin' ? shipment.from : shipment.to;
    const state = await store.findLabelTracking(tx, label.id);
    // A parcel a manifest's scan has already accepted does not go back to awaiting pickup.
    if (step.status === 'pre_transit' && state?.last_event_at && state.status !== 'pre_transit') return true;
    const lastEventAt = state?.last_event_at;
    // The first step tells of the label's creation, so it is dated then: a manifest made before the
    // step ran stays later than it, and its acceptance scan moves the parcel on. Every step is strictly
    // after the previous event, so the order of a parcel's steps never rests on a tie.
    const since = step.status === 'pre_transit' ? Date.parse(label.created_at) : now;
    const at = Math.max(since, lastEventAt ? Date.parse(lastEventAt) + 1 : 0);
    await ingestInTransaction(
      tx,
      label.account_id,
      [{ trackingNumber: label.tracking_number, status: step.status, timestamp: isoNow(at), location: place(address), description: step.description }],
      'sandbox',
    );
    return true;
  });
}

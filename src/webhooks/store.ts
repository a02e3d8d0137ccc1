// Queries of webhooks, their deliveries and attempts, including the worker's claims.
import type { DialectName, Db, Tx } from '../db/index.ts';
import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhooksTable } from '../db/schema.ts';
import type { Page } from '../db/page.ts';

export type WebhookRow = WebhooksTable;
export type DeliveryRow = WebhookDeliveriesTable;
export type AttemptRow = WebhookAttemptsTable;

// ---------------------------------------------------------------------------------------------
// Webhooks

export async function insertWebhook(db: Db | Tx, row: WebhookRow): Promise<void> {
  await db.insertInto('webhooks').values(row).execute();
}

export async function findWebhook(db: Db | Tx, accountId: string, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
}

export async function listWebhooks(db: Db, accountId: string, page: Page): Promise<WebhookRow[]> {
  let q = db.selectFrom('webhooks').selectAll().where('account_id', '=', accountId);
  if (page.before) q = q.where('id', '<', page.before);
  return q.orderBy('id', 'desc').limit(page.limit + 1).execute();
}

export async function updateWebhook(tx: Db | Tx, id: string, changes: Partial<Omit<WebhookRow, 'id' | 'account_id' | 'created_at'>>): Promise<void> {
  await tx.updateTable('webhooks').set(changes).where('id', '=', id).execute();
}

export async function deleteWebhook(db: Db, accountId: string, id: string): Promise<boolean> {
  const r = await db.deleteFrom('webhooks').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Pending deliveries of an inactive webhook wait unscheduled (next_attempt_at null) until it is active again. */
export async function pauseDeliveries(tx: Db | Tx, webhookId: string, at: string): Promise<void> {
  await tx.updateTable('webhook_deliveries').set({ next_attempt_at: null, updated_at: at }).where('webhook_id', '=', webhookId).where('status', '=', 'pending').execute();
}

export async function resumeDeliveries(tx: Db | Tx, webhookId: string, at: string): Promise<void> {
  await tx
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: at, updated_at: at })
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'pending')
    .where('next_attempt_at', 'is', null)
    .execute();
}

// ---------------------------------------------------------------------------------------------
// Deliveries, as the API shows them

export async function listDeliveries(db: Db, webhookId: string, page: Page, status?: string): Promise<DeliveryRow[]> {
  let q = db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId);
  if (status) q = q.where('status', '=', status);
  if (page.before) q = q.where('id', '<', page.before);
  return q.orderBy('id', 'desc').limit(page.limit + 1).execute();
}

export async function attemptsOf(db: Db | Tx, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return db.selectFrom('webhook_attempts').selectAll().where('delivery_id', 'in', deliveryIds).orderBy('delivery_id').orderBy('id').execute();
}

export async function findDelivery(db: Db | Tx, webhookId: string, id: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).where('webhook_id', '=', webhookId).executeTakeFirst();
}

/** Starts the delivery over: pending, due now, a fresh run of the retry schedule, any claim dropped. */
export async function restartDelivery(db: Db | Tx, id: string, at: string): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ status: 'pending', attempt_count: 0, next_attempt_at: at, locked_until: null, updated_at: at }).where('id', '=', id).execute();
}

// ---------------------------------------------------------------------------------------------
// Fan-out

/** What a delivery needs of its webhook. */
const targetColumns = ['id', 'account_id', 'url', 'secret', 'active'] as const;
export type DeliveryTarget = Pick<WebhookRow, (typeof targetColumns)[number]>;

/** The webhooks of these accounts that are active, or were changed after `since` (perhaps deactivated after an event of then). */
export async function subscribersOf(tx: Tx, accountIds: string[], since: string): Promise<(DeliveryTarget & Pick<WebhookRow, 'events' | 'created_at' | 'updated_at'>)[]> {
  return tx
    .selectFrom('webhooks')
    .select([...targetColumns, 'events', 'created_at', 'updated_at'])
    .where('account_id', 'in', accountIds)
    .where((eb) => eb.or([eb('active', '=', 1), eb('updated_at', '>', since)]))
    .execute();
}

const INSERT_CHUNK = 500;

/** Inserts the deliveries that do not exist yet (one per webhook and event); returns the ids of those it inserted. */
export async function insertDeliveries(tx: Tx, rows: DeliveryRow[]): Promise<Set<string>> {
  const inserted = new Set<string>();
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const ids = await tx
      .insertInto('webhook_deliveries')
      .values(rows.slice(i, i + INSERT_CHUNK))
      .onConflict((oc) => oc.columns(['webhook_id', 'event_id']).doNothing())
      .returning('id')
      .execute();
    for (const { id } of ids) inserted.add(id);
  }
  return inserted;
}

// ---------------------------------------------------------------------------------------------
// Delivery claims and results

export type ClaimedDelivery = Pick<DeliveryRow, 'id' | 'webhook_id' | 'event_id' | 'type' | 'attempt_count'>;

/**
 * Takes up to `limit` due deliveries of active webhooks and leases them until `lease`: one statement,
 * with `FOR UPDATE SKIP LOCKED` on PostgreSQL so concurrent workers take disjoint sets. The claim
 * moves `next_attempt_at` to the end of the lease, so a delivery in flight is not due, and one whose
 * worker died is due again when the lease runs out.
 */
export async function claimDueDeliveries(db: Db, dialect: DialectName, limit: number, now: string, lease: string): Promise<ClaimedDelivery[]> {
  // A materialized CTE runs the locking select exactly once, so the claim never exceeds `limit`.
  return db
    .with(
      (cte) => cte('due').materialized(),
      (qb) => {
        let due = qb
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('status', '=', 'pending')
          .where('next_attempt_at', '<=', now)
          .where('webhook_id', 'in', qb.selectFrom('webhooks').select('id').where('active', '=', 1))
          .orderBy('next_attempt_at')
          .limit(limit);
        if (dialect === 'postgres') due = due.forUpdate().skipLocked();
        return due;
      },
    )
    .updateTable('webhook_deliveries')
    .set({ locked_until: lease, next_attempt_at: lease })
    .where('id', 'in', (eb) => eb.selectFrom('due').select('due.id'))
    .returning(['id', 'webhook_id', 'event_id', 'type', 'attempt_count'])
    .execute();
}

export async function webhooksByIds(db: Db, ids: string[]): Promise<DeliveryTarget[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('webhooks').select(targetColumns).where('id', 'in', ids).execute();
}

export interface AttemptResult {
  deliveryId: string;
  webhookId: string;
  /** The claim this worker holds; a result for a claim that was superseded (redelivery) only adds to the history. */
  lease: string;
  attempt: Omit<AttemptRow, 'delivery_id'>;
  status: 'pending' | 'succeeded' | 'failed';
  nextAttemptAt: string | null;
  /** What the attempt says about the webhook. */
  effect: 'success' | 'failure' | 'gone';
}

/** A webhook the recorded attempts disabled. */
export interface WebhookDisabled {
  webhookId: string;
  reason: 'gone' | 'failing';
}

const ATTEMPT_CHUNK = 500;

/**
 * Records finished attempts, in completion order, in one transaction (a group commit: one commit for
 * many deliveries). Updates each delivery only while its claim is still the worker's, adds every
 * attempt to its delivery's history, and updates the webhooks: a success clears `failing_since`, a
 * failure starts it, five days of it or a 410 disable the webhook and pause its deliveries.
 */
export async function recordAttempts(db: Db, results: AttemptResult[], disableIfFailingSince: string): Promise<WebhookDisabled[]> {
  const now = new Date().toISOString();
  return db.transaction().execute(async (tx) => {
    const applied = new Set<string>();
    // Successes of one claim share their lease and their new values: one statement per claim.
    for (const [lease, group] of Map.groupBy(results.filter((r) => r.status === 'succeeded'), (r) => r.lease)) {
      const rows = await tx
        .updateTable('webhook_deliveries')
        .set((eb) => ({ status: 'succeeded', attempt_count: eb('attempt_count', '+', 1), next_attempt_at: null, locked_until: null, updated_at: now }))
        .where('id', 'in', group.map((r) => r.deliveryId))
        .where('locked_until', '=', lease)
        .returning('id')
        .execute();
      for (const row of rows) applied.add(row.id);
    }
    for (const r of results) {
      if (r.status === 'succeeded') continue;
      const updated = await tx
        .updateTable('webhook_deliveries')
        .set((eb) => ({ status: r.status, attempt_count: eb('attempt_count', '+', 1), next_attempt_at: r.nextAttemptAt, locked_until: null, updated_at: now }))
        .where('id', '=', r.deliveryId)
        .where('locked_until', '=', r.lease)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) > 0) applied.add(r.deliveryId);
    }
    const superseded = results.filter((r) => !applied.has(r.deliveryId)).map((r) => r.deliveryId);
    const stillThere = superseded.length
      ? new Set((await tx.selectFrom('webhook_deliveries').select('id').where('id', 'in', superseded).execute()).map((r) => r.id))
      : new Set<string>();
    const attempts = results.filter((r) => applied.has(r.deliveryId) || stillThere.has(r.deliveryId)).map((r) => ({ ...r.attempt, delivery_id: r.deliveryId }));
    for (let i = 0; i < attempts.length; i += ATTEMPT_CHUNK) await tx.insertInto('webhook_attempts').values(attempts.slice(i, i + ATTEMPT_CHUNK)).execute();

    // Each webhook's state after this batch, folded in completion order.
    const hooks = new Map<string, { success: boolean; failingFrom: string | null; gone: boolean }>();
    for (const r of results) {
      if (!applied.has(r.deliveryId)) continue;
      const h = hooks.get(r.webhookId) ?? { success: false, failingFrom: null, gone: false };
      if (r.effect === 'success') {
        h.success = true;
        h.failingFrom = null;
      } else {
        h.failingFrom ??= r.attempt.at;
        if (r.effect === 'gone') h.gone = true;
      }
      hooks.set(r.webhookId, h);
    }
    const cleared = [...hooks].filter(([, h]) => h.failingFrom === null).map(([id]) => id);
    if (cleared.length) await tx.updateTable('webhooks').set({ failing_since: null }).where('id', 'in', cleared).where('failing_since', 'is not', null).execute();
    const disabled: WebhookDisabled[] = [];
    for (const [id, h] of hooks) {
      if (h.failingFrom === null) continue;
      // After a success in this batch the failures start afresh; otherwise an earlier start stands.
      let q = tx.updateTable('webhooks').set({ failing_since: h.failingFrom }).where('id', '=', id);
      if (!h.success) q = q.where('failing_since', 'is', null);
      await q.execute();
      let off = tx.updateTable('webhooks').set({ active: 0, updated_at: now }).where('id', '=', id).where('active', '=', 1);
      if (!h.gone) off = off.where('failing_since', '<=', disableIfFailingSince);
      if (Number((await off.executeTakeFirst()).numUpdatedRows) === 0) continue;
      await pauseDeliveries(tx, id, now);
      disabled.push({ webhookId: id, reason: h.gone ? 'gone' : 'failing' });
    }
    return disabled;
  });
}

export async function countPending(db: Db): Promise<number> {
  const row = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<string | number>().as('n')).where('status', '=', 'pending').executeTakeFirstOrThrow();
  return Number(row.n);
}

// Webhook subscriptions and their deliveries, as the API sees them. The worker (jobs.ts) does the sending.
import type { AppContext } from '../context.ts';
import { eventSubjects, type EventType } from '../db/events.ts';
import { isoNow, uuidv7 } from '../db/ids.ts';
import { Conflict, InvalidInput, NotFound, type FieldProblem } from '../errors.ts';
import type { Page } from '../db/page.ts';
import { sealSecret, secretKey } from './secret-box.ts';
import { secretProblem } from './signing.ts';
import * as store from './store.ts';

export interface Webhook {
  id: string;
  url: string;
  events: EventType[];
  active: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface NewWebhook {
  url: string;
  events: EventType[];
  active?: boolean;
  secret?: string;
}

export interface WebhookPatch {
  url?: string;
  events?: EventType[];
  active?: boolean;
  /** null removes the secret (deliveries go unsigned). */
  secret?: string | null;
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface Delivery {
  id: string;
  eventId: string;
  /** The shipment the event is about, or for `batch.completed` the batch. */
  subjectId: string;
  type: string;
  status: DeliveryStatus;
  attempts: { at: string; responseStatus: number | null; durationMs: number; error: string | null }[];
  nextAttemptAt: string | null;
  createdAt: string;
}

export function toWebhook(row: store.WebhookRow): Webhook {
  return { id: row.id, url: row.url, events: JSON.parse(row.events), active: row.active === 1, createdAt: row.created_at, updatedAt: row.updated_at };
}

function toDelivery(row: store.DeliveryRow, subjectId: string, attempts: store.AttemptRow[]): Delivery {
  return {
    id: row.id,
    eventId: row.event_id,
    subjectId,
    type: row.type,
    status: row.status as DeliveryStatus,
    attempts: attempts.map((a) => ({ at: a.at, responseStatus: a.response_status, durationMs: a.duration_ms, error: a.error })),
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
  };
}

/** Why the service refuses a URL the schema lets through (another scheme, no host, credentials), or undefined. */
function urlRefusal(ctx: AppContext, value: string): InvalidInput | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return new InvalidInput('url must be an absolute http or https URL', [{ field: 'url', message: 'is not an absolute URL' }]);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return new InvalidInput('url must be an absolute http or https URL', [{ field: 'url', message: 'must use http or https' }]);
  }
  // `http:/x` and `https:host` parse (WHATWG guesses the host) but name no authority (RFC 3986 `//host`).
  if (!/^https?:\/\/[^/]/i.test(value)) {
    return new InvalidInput('url must be an absolute http or https URL with a host (http://host/…)', [{ field: 'url', message: 'has no host' }]);
  }
  if (ctx.config.env === 'production' && url.protocol !== 'https:') {
    return new InvalidInput('url must use https', [{ field: 'url', message: 'must use https' }]);
  }
  if (url.username || url.password) {
    return new InvalidInput('url must not contain credentials; use secret to authenticate deliveries', [{ field: 'url', message: 'must not contain user:password' }]);
  }
  return undefined;
}

function secretRefusal(secret: string): InvalidInput | undefined {
  const problem = secretProblem(secret);
  return problem ? new InvalidInput(`secret is not usable: ${problem}`, [{ field: 'secret', message: problem }]) : undefined;
}

function checkUrl(ctx: AppContext, value: string): void {
  const refusal = urlRefusal(ctx, value);
  if (refusal) throw refusal;
}

function checkSecret(secret: string): void {
  const refusal = secretRefusal(secret);
  if (refusal) throw refusal;
}

/**
 * What the service's own rules (beyond the body's schema) say of a URL and a secret, both at once:
 * a form shows them beside the schema's problems instead of one round later.
 */
export function webhookRuleProblems(ctx: AppContext, input: { url?: string; secret?: string }): FieldProblem[] {
  const refusals = [input.url === undefined ? undefined : urlRefusal(ctx, input.url), input.secret === undefined ? undefined : secretRefusal(input.secret)];
  return refusals.flatMap((r) => r?.details ?? []);
}

async function sealed(ctx: AppContext, webhookId: string, secret: string | null | undefined): Promise<string | null> {
  if (secret === undefined || secret === null) return null;
  return sealSecret(await secretKey(ctx.db), webhookId, secret);
}

export async function createWebhook(ctx: AppContext, accountId: string, input: NewWebhook): Promise<Webhook> {
  checkUrl(ctx, input.url);
  if (input.secret !== undefined) checkSecret(input.secret);
  const now = isoNow();
  const id = uuidv7();
  const row: store.WebhookRow = {
    id,
    account_id: accountId,
    url: input.url,
    events: JSON.stringify(input.events),
    secret: await sealed(ctx, id, input.secret),
    active: input.active === false ? 0 : 1,
    created_at: now,
    updated_at: now,
    failing_since: null,
  };
  // A transaction, even for one statement, so that an Idempotency-Key marks this work done with it (src/db/commit-statement.ts).
  await ctx.db.transaction().execute((tx) => store.insertWebhook(tx, row));
  return toWebhook(row);
}

async function webhookRow(ctx: AppContext, accountId: string, id: string): Promise<store.WebhookRow> {
  const row = await store.findWebhook(ctx.db, accountId, id);
  if (!row) throw new NotFound('webhook', id);
  return row;
}

export async function getWebhook(ctx: AppContext, accountId: string, id: string): Promise<Webhook> {
  return toWebhook(await webhookRow(ctx, accountId, id));
}

export async function listWebhooks(ctx: AppContext, accountId: string, page: Page): Promise<Webhook[]> {
  return (await store.listWebhooks(ctx.db, accountId, page)).map(toWebhook);
}

/**
 * Changes take effect for the next attempt (the URL and secret are read when sending). Deactivating
 * pauses pending deliveries; activating resumes them and forgets earlier failures.
 */
export async function updateWebhook(ctx: AppContext, accountId: string, id: string, patch: WebhookPatch): Promise<Webhook> {
  if (patch.url !== undefined) checkUrl(ctx, patch.url);
  if (typeof patch.secret === 'string') checkSecret(patch.secret);
  const secret = patch.secret === undefined ? undefined : await sealed(ctx, id, patch.secret);
  return ctx.db.transaction().execute(async (tx) => {
    const row = await store.findWebhook(tx, accountId, id);
    if (!row) throw new NotFound('webhook', id);
    const now = isoNow();
    const changes: Parameters<typeof store.updateWebhook>[2] = { updated_at: now };
    if (patch.url !== undefined) changes.url = patch.url;
    if (patch.events !== undefined) changes.events = JSON.stringify(patch.events);
    if (secret !== undefined) changes.secret = secret;
    if (patch.active !== undefined && (patch.active ? 1 : 0) !== row.active) {
      changes.active = patch.active ? 1 : 0;
      if (patch.active) {
        changes.failing_since = null;
        await store.resumeDeliveries(tx, id, now);
      } else {
        await store.pauseDeliveries(tx, id, now);
      }
    }
    await store.updateWebhook(tx, id, changes);
    return toWebhook({ ...row, ...changes });
  });
}

export async function deleteWebhook(ctx: AppContext, accountId: string, id: string): Promise<void> {
  if (!(await store.deleteWebhook(ctx.db, accountId, id))) throw new NotFound('webhook', id);
}

export async function listDeliveries(ctx: AppContext, accountId: string, webhookId: string, page: Page, status?: DeliveryStatus): Promise<Delivery[]> {
  await webhookRow(ctx, accountId, webhookId);
  const rows = await store.listDeliveries(ctx.db, webhookId, page, status);
  const attempts = Map.groupBy(await store.attemptsOf(ctx.db, rows.map((r) => r.id)), (a) => a.delivery_id);
  const subjects = await eventSubjects(ctx.db, [...new Set(rows.map((r) => r.event_id))]);
  return rows.map((r) => toDelivery(r, subjects.get(r.event_id)!, attempts.get(r.id) ?? []));
}

/** Sends the delivery again with the same `webhook-id`: pending, due now, with a fresh retry schedule. */
export async function redeliver(ctx: AppContext, accountId: string, webhookId: string, deliveryId: string): Promise<Delivery> {
  const hook = await webhookRow(ctx, accountId, webhookId);
  const row = await store.findDelivery(ctx.db, webhookId, deliveryId);
  if (!row) throw new NotFound('delivery', deliveryId);
  if (hook.active !== 1) throw new Conflict(`webhook ${webhookId} is inactive; activate it (PATCH active: true) to deliver again`);
  const now = isoNow();
  // A transaction, even for one statement, so that an Idempotency-Key marks this work done with it (src/db/commit-statement.ts).
  await ctx.db.transaction().execute((tx) => store.restartDelivery(tx, deliveryId, now));
  const attempts = await store.attemptsOf(ctx.db, [deliveryId]);
  const subjects = await eventSubjects(ctx.db, [row.event_id]);
  return toDelivery({ ...row, status: 'pending', attempt_count: 0, next_attempt_at: now, locked_until: null, updated_at: now }, subjects.get(row.event_id)!, attempts);
}

/** Deliveries waiting for an attempt, for the metrics' backlog gauge (one count on the status index). */
export async function deliveryBacklog(ctx: AppContext): Promise<number> {
  return store.countPending(ctx.db);
}

/** The body of `POST /v1/webhooks`, for the dashboard's form (the same checks, the same messages). */
export { createWebhookBody } from './schemas.ts';

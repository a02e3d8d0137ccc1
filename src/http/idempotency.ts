// `Idempotency-Key` on every authenticated POST (docs/decisions.md, HTTP conventions): the same key and body within 24 h replays the first
// response; a different body is 422. Keys are kept per account in the database. The request's work
// marks its key inside its own transaction, so a key whose answer was lost is never worked again.
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler, preHandlerHookHandler } from 'fastify';
import { createHash, createHmac } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { isUniqueViolation, PURGE_CHUNK } from '../db/index.ts';
import { withCommitStatement } from '../db/commit-statement.ts';
import { isoNow } from '../db/ids.ts';
import { AppError, Conflict, IdempotencyKeyReused, InvalidInput } from '../errors.ts';
import { JSON_UTF8 } from './schemas.ts';

const KEY_TTL_MS = 24 * 3600 * 1000;
// A first request that has not finished after this long is taken to have died with its process.
const ABANDONED_MS = 60 * 1000;

declare module 'fastify' {
  interface FastifyRequest {
    /** The key this request claimed, and when: a retry that takes an abandoned claim over makes a new row. */
    idempotency?: { key: string; claimedAt: string };
  }
}

/**
 * What a key's request is kept as, to tell a retry from another request: an HMAC under a service
 * secret, since a body can hold a secret (a webhook's) that a plain hash would let anyone holding
 * the table try guesses against.
 */
function requestHash(key: Buffer, request: FastifyRequest): string {
  return createHmac('sha256', key).update(requestText(request)).digest('hex');
}

function requestText(request: FastifyRequest): string {
  return `${request.method} ${request.url}\n${request.body === undefined ? '' : JSON.stringify(request.body)}`;
}

/** Whether a stored fingerprint is this request's; a key claimed before fingerprints were keyed (plain SHA-256, gone 24 hours after an upgrade) counts too. */
function sameRequest(stored: string, hash: string, request: FastifyRequest): boolean {
  return stored === hash || stored === createHash('sha256').update(requestText(request)).digest('hex');
}

/**
 * Adds the two hooks to every POST route registered after this call that is not `public` (no
 * principal, no key), so GETs and public routes pay nothing for them.
 */
export function installIdempotency(app: FastifyInstance, ctx: AppContext): void {
  const { db } = ctx;
  /** Claims the key (the work goes on: when it was claimed), or answers the request itself (a replay or an error: null). */
  const claim = async (request: FastifyRequest, reply: FastifyReply, key: string): Promise<string | null> => {
    const accountId = request.principal!.accountId;
    const hash = requestHash(ctx.requestKey, request);
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const claimedAt = isoNow();
        await db.insertInto('idempotency_keys').values({ account_id: accountId, key, request_hash: hash, status_code: null, content_type: null, response_body: null, created_at: claimedAt }).execute();
        return claimedAt;
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
      const row = await db.selectFrom('idempotency_keys').selectAll().where('account_id', '=', accountId).where('key', '=', key).executeTakeFirst();
      if (!row) continue;
      const age = Date.now() - Date.parse(row.created_at);
      const abandoned = row.status_code === null && age > ABANDONED_MS;
      if (age > KEY_TTL_MS || (abandoned && row.work_committed === 0)) {
        let stale = db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).where('created_at', '=', row.created_at);
        // A slow first request may commit its work between that read and this delete: then the row stays.
        if (age <= KEY_TTL_MS) stale = stale.where('work_committed', '=', 0);
        await stale.execute();
        continue;
      }
      if (!sameRequest(row.request_hash, hash, request)) throw new IdempotencyKeyReused(`Idempotency-Key ${key} was used with a different request in the last 24 hours`);
      if (abandoned) {
        throw new Conflict(
          `the request with Idempotency-Key ${key} was carried out, but its answer could not be kept (the service failed or stopped before storing it); it is not carried out again: look its result up with a GET`,
        );
      }
      if (row.status_code === null) {
        // Most often the first is still at work. If its process failed before its work committed, its
        // claim lapses ABANDONED_MS after it began and the key is taken up again (once it committed,
        // the key is refused for good, above).
        const lapses = Math.max(1, Math.ceil((ABANDONED_MS - age) / 1000));
        const after = row.work_committed === 0 ? ` (if the service failed while carrying it out, the key is taken up again in ${lapses} s)` : '';
        throw new AppError(409, 'CONFLICT', `a request with Idempotency-Key ${key} is still being processed; retry shortly${after}`, { headers: { 'retry-after': '1' } });
      }
      reply
        .code(row.status_code)
        .header('idempotent-replayed', 'true')
        .type(row.content_type ?? JSON_UTF8)
        .send(row.response_body ?? '');
      return null;
    }
    throw new Conflict(`Idempotency-Key ${key} is contended; retry shortly`);
  };

  // Callback style, so that the rest of the request (the handler and its transactions) runs inside
  // `withCommitStatement`: each transaction it commits marks the key's row as "work committed". A
  // request so slow that a retry took its claim over (ABANDONED_MS) finds no row of its own to mark,
  // and its transaction does not commit: the retry's work is the one that counts.
  const preHandler: preHandlerHookHandler = (request, reply, done) => {
    const header = request.headers['idempotency-key'];
    if (request.method !== 'POST' || header === undefined || !request.principal) return done();
    // Node joins a repeated header with ", " (rawHeaders keeps them apart): two keys are not one.
    if (Array.isArray(header) || (header.includes(',') && sentTwice(request.raw.rawHeaders, 'idempotency-key'))) {
      return done(new InvalidInput('send one Idempotency-Key header, not several'));
    }
    const key = header;
    if (key.length < 1 || key.length > 255) return done(new InvalidInput('Idempotency-Key must be 1 to 255 characters'));
    claim(request, reply, key).then(
      (claimedAt) => {
        if (claimedAt === null) return;
        request.idempotency = { key, claimedAt };
        const mark = db.updateTable('idempotency_keys').set({ work_committed: 1 }).where('account_id', '=', request.principal!.accountId).where('key', '=', key).where('created_at', '=', claimedAt).compile();
        const takenOver = new Conflict(`the request with Idempotency-Key ${key} ran so long that a retry with the key took it over; nothing it did was kept`);
        withCommitStatement({ query: mark, refusal: takenOver }, done);
      },
      (err: Error) => done(err),
    );
  };

  const onSend: onSendHookHandler = async (request, reply, payload) => {
    const claim = request.idempotency;
    if (!claim || !request.principal) return payload;
    request.idempotency = undefined;
    const { key, claimedAt } = claim;
    const row = db.updateTable('idempotency_keys').where('account_id', '=', request.principal.accountId).where('key', '=', key).where('created_at', '=', claimedAt);
    // The answer goes out whatever happens here: a database that fails now (a 503 because it is down,
    // or gone right after the request committed) must not turn it into another error. The key then
    // stays "in progress", and a retry with it is 409 until it counts as abandoned (ABANDONED_MS),
    // then done again if none of its work committed, else 409 for good.
    try {
      // An error that changed nothing is not a result worth replaying: a refusal (a service that does
      // not run the route, an unknown shipment) or a server error whose work did not commit frees the
      // key, so the corrected request or the retry may use it. A server error after some work
      // committed leaves the key without an answer; a refusal after some work committed is kept.
      const unanswerable = typeof payload !== 'string' && !Buffer.isBuffer(payload);
      if (reply.statusCode >= 400 || unanswerable) {
        const freed = await db.deleteFrom('idempotency_keys').where('account_id', '=', request.principal.accountId).where('key', '=', key).where('created_at', '=', claimedAt).where('work_committed', '=', 0).executeTakeFirst();
        if (Number(freed.numDeletedRows) > 0 || reply.statusCode >= 500 || unanswerable) return payload;
      }
      await row.set({ status_code: reply.statusCode, content_type: String(reply.getHeader('content-type') ?? 'application/json'), response_body: payload.toString() }).execute();
    } catch (err) {
      request.log.warn({ err }, `the answer to Idempotency-Key ${key} could not be stored; a retry with it is refused (and after ${ABANDONED_MS / 1000} s done again only if none of its work committed)`);
    }
    return payload;
  };

  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    const config = route.config as FastifyContextConfig | undefined;
    if (!methods.includes('POST') || config?.public || config?.readOnly) return;
    // First among the route's own hooks, as the instance-level hooks they replace were.
    route.preHandler = route.preHandler === undefined ? [preHandler] : [preHandler, ...[route.preHandler].flat()];
    route.onSend = route.onSend === undefined ? [onSend] : [onSend, ...[route.onSend].flat()];
  });
}

/** Whether a header came more than once (`rawHeaders` alternates names and values). */
function sentTwice(rawHeaders: string[], name: string): boolean {
  let seen = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) seen++;
  return seen > 1;
}

/** Forgets keys older than 24 hours; the worker calls this now and then. */
export async function purgeIdempotencyKeys(ctx: AppContext): Promise<number> {
  const cutoff = new Date(Date.now() - KEY_TTL_MS).toISOString();
  // At most PURGE_CHUNK rows a statement (the job runs again while there are more); a key is its account and its text.
  const r = await ctx.db
    .deleteFrom('idempotency_keys')
    .where(({ eb, refTuple, selectFrom }) => eb(refTuple('account_id', 'key'), 'in', selectFrom('idempotency_keys').select(['account_id', 'key']).where('created_at', '<', cutoff).limit(PURGE_CHUNK).$asTuple('account_id', 'key')))
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}

/**
 * What a form sent a second time gets: the first sending's answer; or, when none came within a few
 * seconds, when the first was sent (`pending`), and whether that is so long ago that its process must
 * have died before it recorded one (`lost`).
 */
export type FormSending = { again: false; answer: string } | { again: true; answer: string } | { again: true; answer: null; sentAt: string; lost: boolean };

/** How long a second sending waits for the first one's answer (a double click arrives while the first is at work). */
const FORM_WAIT_MS = 5000;

/**
 * A form of the dashboard carried out at most once. `formKey` is a hidden field of the rendered form
 * (kept with the API's Idempotency-Keys, per account, for 24 hours): the first sending carries out
 * `work` and keeps its answer (the page to go to); the same form sent again (the browser's Back and
 * a second submit, a double click) gets that answer instead of doing it twice. `asks` is what the
 * form asks for (the fields that make its action, never a secret): the same form filled in otherwise
 * after Back (another carrier's day to close) is another action, carried out in turn. `work` must be
 * one transaction, so that when it throws (a refusal) nothing of it was kept: then neither is the
 * key, and the corrected form can be sent with it.
 */
export async function onceForForm(ctx: AppContext, accountId: string, formKey: string, asks: unknown, work: () => Promise<string>): Promise<FormSending> {
  const key = `dashboard-form:${formKey}:${createHash('sha256').update(JSON.stringify(asks) ?? '').digest('base64url').slice(0, 22)}`;
  const claimedAt = isoNow();
  try {
    await ctx.db.insertInto('idempotency_keys').values({ account_id: accountId, key, request_hash: 'dashboard form', status_code: null, content_type: null, response_body: null, created_at: claimedAt }).execute();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    for (const deadline = Date.now() + FORM_WAIT_MS; ; ) {
      const row = await ctx.db.selectFrom('idempotency_keys').select(['status_code', 'response_body', 'created_at']).where('account_id', '=', accountId).where('key', '=', key).executeTakeFirst();
      // The first sending was refused meanwhile (its key is gone): this one is carried out.
      if (!row) return onceForForm(ctx, accountId, formKey, asks, work);
      if (row.status_code && row.response_body) return { again: true, answer: row.response_body };
      if (Date.now() >= deadline) return { again: true, answer: null, sentAt: row.created_at, lost: Date.now() - Date.parse(row.created_at) > ABANDONED_MS };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  let answer: string;
  try {
    answer = await work();
  } catch (err) {
    await ctx.db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).where('created_at', '=', claimedAt).execute();
    throw err;
  }
  await ctx.db.updateTable('idempotency_keys').set({ status_code: 303, content_type: 'text/plain', response_body: answer, work_committed: 1 }).where('account_id', '=', accountId).where('key', '=', key).where('created_at', '=', claimedAt).execute();
  return { again: false, answer };
}

// The dashboard (§15): server-rendered pages for an account's users at /dashboard, over the same
// services as the API. This file is the plumbing every page shares: the session cookie, CSRF tokens
// on every form, form and file bodies, security headers, sign-in and sign-out, the stylesheet and
// script, and errors shown as pages. The pages themselves are in *-pages.ts beside it.
import type { FormSending } from '../http/idempotency.ts';
import cookie from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import multipart, { type MultipartFile } from '@fastify/multipart';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { toAppError } from '../http/errors.ts';
import { UnsupportedMediaType } from '../errors.ts';
import { charge, type RateLimiter } from '../http/rate-limit.ts';
import { errorSummary, field, html, page, readableTime, type PageFrame, type Section } from './html.ts';
import { sessionUser, signIn, signOut, type SessionUser } from './service.ts';
import { shipmentPages } from './shipment-pages.ts';
import { batchPages } from './batch-pages.ts';
import { manifestPages } from './manifest-pages.ts';
import { webhookPages } from './webhook-pages.ts';
import { keyPages } from './key-pages.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in user of a dashboard request (null when signed out). */
    dashboardUser: SessionUser | null;
  }
  interface FastifyContextConfig {
    /** Dashboard routes anyone may open (sign-in, the stylesheet); the others need a session. */
    signedOut?: boolean;
    /** Not charged to the user's rate-limit bucket (sign-out always works). */
    unlimited?: boolean;
    /** Takes a file upload (multipart/form-data); every other route refuses one before reading it. */
    upload?: boolean;
  }
}

/**
 * Route config of every dashboard page: `public` to the API's bearer check (the session hook below
 * guards it instead); OPEN pages need no session either.
 */
export const PAGE = { public: true } as const;
const OPEN = { public: true, signedOut: true } as const;
/** The sign-in form: open, and limited per client address as every sign-in form is. */
const SIGN_IN = { ...OPEN, limitedByAddress: true } as const;
/** A page whose form uploads a file. */
export const UPLOAD = { public: true, upload: true } as const;

const SESSION_COOKIE = 'dashboard_session';
const CSRF_COOKIE = 'dashboard_csrf';
/** The message of the page after a form (Post/Redirect/Get), shown once: never in a URL anyone can write. */
const NOTICE_COOKIE = 'dashboard_notice';
/** A notice that says an action was refused: shown as an alert, not as a success. */
const REFUSAL_COOKIE = 'dashboard_refusal';
const ONCE_COOKIE = 'dashboard_once';
const STYLESHEET = readFileSync(new URL('./assets/dashboard.css', import.meta.url), 'utf8');
const SCRIPT = readFileSync(new URL('./assets/dashboard.js', import.meta.url), 'utf8');
const ICON = readFileSync(new URL('./assets/favicon.svg', import.meta.url), 'utf8');
/** Uploaded CSV files are at most this big (1,000 items of a few hundred bytes each fit easily). */
export const MAX_UPLOAD_BYTES = 2 * 1024 * 1024;

/** What every page handler is given: the service's context, the user, and how to answer. */
export interface Dashboard {
  ctx: AppContext;
  /** The path the dashboard is reached at (the public base URL's path and /dashboard). */
  base: string;
  user(request: FastifyRequest): SessionUser;
  /** A whole page for the signed-in user, with a fresh CSRF token for its forms. */
  send(request: FastifyRequest, reply: FastifyReply, view: { title: string; section?: Section; notice?: string; status?: number; body: (csrfToken: string) => ReturnType<typeof html> }): FastifyReply;
  /** After a form: 303 to a page of the dashboard (Post/Redirect/Get), with an optional notice. */
  redirect(reply: FastifyReply, path: string, notice?: string, refused?: boolean): FastifyReply;
  /**
   * After a form whose answer shows something once (a new API key): 303 to `path`, the value riding
   * in a signed HttpOnly cookie for that page alone, for a minute. Refreshing the page, or going back
   * to it, never posts the form again. `name` tells apart two values for one page (what a form sent
   * again made, beside the first sending's value, which it must not replace).
   */
  redirectOnce(reply: FastifyReply, path: string, value: string, name?: string): FastifyReply;
  /** What redirectOnce sent to `path` (under `name`), once: the cookie is cleared as it is read. */
  takeOnce(request: FastifyRequest, reply: FastifyReply, path: string, name?: string): string | undefined;
  /** The posted form (urlencoded or multipart). */
  form(request: FastifyRequest): FormFields;
}

/** A posted form's fields, read by name: only fields the page asks for by name are ever looked at. */
export interface FormFields {
  /** The field's first value ('' when absent or a file). */
  one(name: string): string;
  /** Every value of a repeated field (a checkbox group). */
  all(name: string): string[];
  /** An uploaded file: its bytes and the name the browser gave it. */
  file(name: string): UploadedFile | undefined;
}

/** A file of a multipart form, as `onFile` keeps it. */
export interface UploadedFile {
  bytes: Buffer;
  /** The file's name on the sender's machine, as the browser sent it ('' when none). */
  name: string;
}

function isUploadedFile(v: unknown): v is UploadedFile {
  return typeof v === 'object' && v !== null && Buffer.isBuffer((v as UploadedFile).bytes);
}

export function formFields(body: unknown): FormFields {
  const fields = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const values = (name: string): unknown[] => (Object.hasOwn(fields, name) ? [fields[name]].flat() : []);
  return {
    one: (name) => {
      const v = values(name)[0];
      return typeof v === 'string' ? v : '';
    },
    all: (name) => values(name).filter((v): v is string => typeof v === 'string'),
    file: (name) => values(name).find(isUploadedFile),
  };
}

/**
 * The fields of a multipart form whose reading stopped at its file (one over the limit): those the
 * browser sent before the file, as the multipart plugin holds them (`{type: 'field', value}` parts).
 */
export function fieldsSentBefore(body: unknown): FormFields {
  const parts = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const values: Record<string, string[]> = Object.create(null);
  for (const [name, part] of Object.entries(parts)) {
    const texts = [part].flat().flatMap((p) => (isFieldPart(p) ? [p.value] : []));
    if (texts.length) values[name] = texts;
  }
  return formFields(values);
}

function isFieldPart(v: unknown): v is { type: 'field'; value: string } {
  return typeof v === 'object' && v !== null && (v as { type?: unknown }).type === 'field' && typeof (v as { value?: unknown }).value === 'string';
}

/** A urlencoded body as fields; repeated names (checkbox groups) become lists. */
function parseForm(body: string): Record<string, string | string[]> {
  // No prototype: a field named __proto__ is a field like any other.
  const out: Record<string, string | string[]> = Object.create(null);
  for (const [k, v] of new URLSearchParams(body)) {
    const had = out[k];
    out[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
  }
  return out;
}

/** Paths only a form's POST answers (a confirmation page, an action), each with the page it is on. */
const POSTED_ONLY: [RegExp, string][] = [
  [/\/(?:invalidate|label|print-file|return)$/, ''],
  [/\/keys\/[^/]+\/revoke$/, '/keys'],
  [/\/deliveries\/[^/]+\/redeliver$/, ''],
  [/\/sign-out$/, ''],
];

/**
 * The page a form was on, from its Referer (which may come from anywhere: `safeNext` keeps only the
 * dashboard's own paths): a confirmation page, which only a POST answers, gives the page it confirms
 * for, so that signing in does not lead to a 404.
 */
function refererPath(referer: string | undefined): string | undefined {
  if (!referer) return undefined;
  try {
    const url = new URL(referer);
    const posted = POSTED_ONLY.find(([pattern]) => pattern.test(url.pathname));
    return posted ? url.pathname.replace(posted[0], posted[1]) : `${url.pathname}${url.search}`;
  } catch {
    return undefined;
  }
}

/**
 * Only a path inside the dashboard may be returned to after sign-in (no open redirect), judged as the
 * browser will resolve it (`/dashboard/../x` is `/x`), and sent in that resolved form.
 */
function safeNext(base: string, next: unknown): string {
  const fallback = `${base}/shipments`;
  if (typeof next !== 'string' || !next.startsWith(`${base}/`) || next.startsWith('//') || /[\\\s]/.test(next)) return fallback;
  const resolved = new URL(next, 'http://dashboard.invalid');
  return resolved.pathname.startsWith(`${base}/`) ? resolved.pathname + resolved.search : fallback;
}

export async function dashboardRoutes(app: FastifyInstance, ctx: AppContext, limiter: RateLimiter | null): Promise<void> {
  const publicUrl = new URL(ctx.config.publicBaseUrl);
  const base = `${publicUrl.pathname.replace(/\/+$/, '')}/dashboard`;
  const secure = ctx.config.env !== 'development';
  const cookieOpts = { path: base, httpOnly: true, sameSite: 'lax' as const, secure };
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    // Label previews and downloads are the API's own signed links, on the public base URL.
    `img-src 'self' ${publicUrl.origin}`,
    "connect-src 'self'",
    `form-action 'self' ${publicUrl.origin}`,
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');

  // Signed cookies (the notice after a form) carry an HMAC under a key of this service.
  await app.register(cookie, { secret: createHmac('sha256', ctx.urlKey).update('dashboard cookies').digest('base64url') });
  await app.register(csrf, {
    cookieKey: CSRF_COOKIE,
    cookieOpts,
    // A token is bound to the session it was made for: one from the sign-in page, or from another
    // session, is refused (and a cookie set from a sibling host cannot forge one).
    getUserInfo: (request: FastifyRequest) => request.dashboardUser?.sessionId ?? 'signed-out',
    csrfOpts: { hmacKey: createHmac('sha256', ctx.urlKey).update('dashboard csrf').digest() },
  });
  // A file's value in the body is its bytes with its name (`UploadedFile`), read whole: it is at most MAX_UPLOAD_BYTES.
  const onFile = async (part: MultipartFile) => {
    part.value = { bytes: await part.toBuffer(), name: part.filename ?? '' };
  };
  await app.register(multipart, { attachFieldsToBody: 'keyValues', onFile, limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 20, parts: 21, fieldSize: 16 * 1024 } });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 256 * 1024 }, (_request, body, done) => done(null, parseForm(body as string)));
  app.decorateRequest('dashboardUser', null);

  app.addHook('onRequest', async (request, reply) => {
    reply
      .header('content-security-policy', csp)
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'same-origin')
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-store');
    const config = request.routeOptions.config;
    // A file is read only where a form uploads one; elsewhere it is refused before its body is read.
    if (!config.upload && /^multipart\//i.test(request.headers['content-type'] ?? '')) throw new UnsupportedMediaType('this form does not take a file upload');
    request.dashboardUser = await sessionUser(ctx, request.cookies[SESSION_COOKIE]);
    // A signed-in user's pages take tokens of their own bucket, as an API key's requests do.
    if (request.dashboardUser && limiter && !config.signedOut && !config.unlimited) await charge(limiter, reply, `user:${request.dashboardUser.userId}`);
    if (request.dashboardUser || config.signedOut) return;
    if (request.method === 'GET') return reply.redirect(`${base}/sign-in?next=${encodeURIComponent(request.url.replace(/^\/dashboard/, base))}`, 303);
    // A form sent after the session ended: nothing is done, the sign-in page says so, and signing in
    // leads back to the page the form was on (from its Referer).
    const from = refererPath(request.headers.referer);
    return d.redirect(reply, `/sign-in${from ? `?next=${encodeURIComponent(from)}` : ''}`, 'Your session had ended, so the form was not sent and nothing was done. Sign in, then send it again.', true);
  });
  // Every form carries the page's token; checked once the body (urlencoded or multipart) is read.
  app.addHook('preHandler', (request, reply, done) => {
    if (request.method !== 'POST') return done();
    app.csrfProtection(request, reply, done);
  });

  const frameOf = (request: FastifyRequest, reply: FastifyReply, title: string, extra: Partial<PageFrame> = {}): PageFrame & { csrfToken: string } => {
    const user = request.dashboardUser;
    return { base, title, csrfToken: reply.generateCsrf({ userInfo: user?.sessionId ?? 'signed-out' }), ...(user ? { user } : {}), ...extra };
  };

  const d: Dashboard = {
    ctx,
    base,
    user(request) {
      if (!request.dashboardUser) throw new Error('dashboard route without a session');
      return request.dashboardUser;
    },
    send(request, reply, view) {
      // Only a notice this service signed is shown: a cookie planted by another host is ignored.
      const carried = takeSigned(request, reply, NOTICE_COOKIE, cookieOpts);
      const refusal = takeSigned(request, reply, REFUSAL_COOKIE, cookieOpts);
      const shown = (text: string | undefined) => (text !== undefined && text.length <= 300 ? text : undefined);
      const notice = view.notice ?? shown(refusal) ?? shown(carried);
      const refused = view.notice === undefined && shown(refusal) !== undefined;
      const frame = frameOf(request, reply, view.title, { ...(view.section ? { section: view.section } : {}), ...(notice ? { notice, ...(refused ? { refused } : {}) } : {}) });
      return reply.status(view.status ?? 200).type('text/html; charset=utf-8').send(page(frame, view.body(frame.csrfToken)));
    },
    redirect(reply, path, notice, refused = false) {
      if (notice) reply.setCookie(refused ? REFUSAL_COOKIE : NOTICE_COOKIE, encodeURIComponent(notice), { ...cookieOpts, maxAge: 60, signed: true });
      return reply.redirect(`${base}${path}`, 303);
    },
    redirectOnce(reply, path, value, name) {
      reply.setCookie(name ? `${ONCE_COOKIE}_${name}` : ONCE_COOKIE, encodeURIComponent(value), { ...cookieOpts, path: `${base}${path}`, maxAge: 60, signed: true });
      return reply.redirect(`${base}${path}`, 303);
    },
    takeOnce(request, reply, path, name) {
      return takeSigned(request, reply, name ? `${ONCE_COOKIE}_${name}` : ONCE_COOKIE, { ...cookieOpts, path: `${base}${path}` });
    },
    form(request) {
      return formFields(request.body);
    },
  };

  const notFoundPage = (request: FastifyRequest, reply: FastifyReply) =>
    d.send(request, reply, { title: 'Not found', status: 404, body: () => html`<h1>Not found</h1><p>There is no page at ${request.url.split('?')[0]}.</p><p><a href="${base}/shipments">Back to the shipments</a></p>` });
  // Anything thrown (a foreign id, a refused form token, a database failure) is shown as a page.
  app.setErrorHandler((err: FastifyError, request, reply) => {
    // An address whose id is not one (`/shipments/not-an-id`) names no page, as an unknown id does not.
    if (err.validationContext === 'params') return notFoundPage(request, reply);
    const csrfFailure = err.code === 'FST_CSRF_INVALID_TOKEN' || err.code === 'FST_CSRF_MISSING_SECRET';
    const appErr = toAppError(err, request);
    if (appErr.status >= 500) request.log.error({ err }, 'dashboard page failed');
    const fileTooLarge = err.code === 'FST_REQ_FILE_TOO_LARGE';
    const status = csrfFailure ? 403 : fileTooLarge ? 413 : Math.min(appErr.status, 500);
    const title = status === 404 ? 'Not found' : status === 403 ? 'Form expired' : status === 429 ? 'Too many requests' : status >= 500 ? 'Something went wrong' : 'That did not work';
    const message = csrfFailure
      ? 'The form was sent without its security token or from another session. Go back, reload the page and try again.'
      : fileTooLarge ? `The file is larger than ${MAX_UPLOAD_BYTES / 1024 / 1024} MiB.`
      : status >= 500 ? `Something went wrong on our side. The request id is ${request.id}.`
      : appErr.message;
    reply.headers(appErr.headers);
    return d.send(request, reply, { title, status, body: () => html`<h1>${title}</h1><p>${message}</p><p><a href="${base}/shipments">Back to the shipments</a></p>` });
  });
  app.setNotFoundHandler(notFoundPage);

  const signInPage = (request: FastifyRequest, reply: FastifyReply, o: { status?: number; email?: string; error?: string; next?: string }) =>
    d.send(request, reply, {
      title: 'Sign in',
      status: o.status ?? 200,
      body: (token) => html`<h1>Sign in to the dashboard</h1>
${errorSummary(undefined, o.error)}
<form method="post" action="${base}/sign-in" class="narrow">
<input type="hidden" name="_csrf" value="${token}"><input type="hidden" name="next" value="${o.next ?? ''}">
${field({ label: 'Email address', name: 'email', type: 'email', value: o.email ?? '', required: true, autocomplete: 'username' })}
${field({ label: 'Password', name: 'password', type: 'password', required: true, autocomplete: 'current-password' })}
<button type="submit">Sign in</button>
</form>
<p class="hint">No account yet? Ask whoever runs this service: they create users (<code>npm run admin -- user create</code>).</p>`,
    });

  app.get('/', { config: PAGE, schema: { hide: true } }, async (_request, reply) => reply.redirect(`${base}/shipments`, 303));

  app.get<{ Querystring: { next?: string } }>('/sign-in', {
    config: OPEN,
    schema: { hide: true, querystring: { type: 'object', properties: { next: { type: 'string', maxLength: 2000 } } } },
    handler: async (request, reply) => {
      if (request.dashboardUser) return reply.redirect(safeNext(base, request.query.next), 303);
      return signInPage(request, reply, { next: request.query.next ?? '' });
    },
  });

  app.post('/sign-in', {
    config: SIGN_IN,
    schema: { hide: true },
    handler: async (request, reply) => {
      const form = d.form(request);
      const email = form.one('email');
      const next = form.one('next');
      const result = await signIn(ctx, email, form.one('password'), request.ip);
      if (!result.ok) {
        request.log.info({ status: result.status }, 'dashboard sign-in failed');
        if (result.retryAfter) reply.header('retry-after', String(result.retryAfter));
        return signInPage(request, reply, { status: result.status, email, error: result.error, next });
      }
      // Signing in again ends the session the browser had; a new CSRF secret with the new session:
      // nothing seen before signing in answers a form after it.
      if (request.dashboardUser) await signOut(ctx, request.dashboardUser.sessionId);
      reply.clearCookie(CSRF_COOKIE, cookieOpts);
      reply.setCookie(SESSION_COOKIE, result.token, cookieOpts);
      return reply.redirect(safeNext(base, next), 303);
    },
  });

  app.post('/sign-out', {
    config: { ...PAGE, unlimited: true },
    schema: { hide: true },
    handler: async (request, reply) => {
      await signOut(ctx, d.user(request).sessionId);
      reply.clearCookie(SESSION_COOKIE, cookieOpts).clearCookie(CSRF_COOKIE, cookieOpts);
      return d.redirect(reply, '/sign-in', 'You are signed out.');
    },
  });

  for (const [name, type, body] of [['dashboard.css', 'text/css; charset=utf-8', STYLESHEET], ['dashboard.js', 'text/javascript; charset=utf-8', SCRIPT], ['favicon.svg', 'image/svg+xml', ICON]] as const) {
    app.get(`/assets/${name}`, {
      config: OPEN,
      schema: { hide: true },
      handler: async (_request, reply) => reply.header('cache-control', 'public, max-age=3600').type(type).send(body),
    });
  }

  shipmentPages(app, d);
  batchPages(app, d);
  manifestPages(app, d);
  webhookPages(app, d);
  keyPages(app, d);
}

/**
 * A signed cookie this service set (a notice, a value shown once), read once: it is cleared as it is
 * read; undefined when it is absent or not this service's.
 */
function takeSigned(request: FastifyRequest, reply: FastifyReply, name: string, options: Parameters<FastifyReply['clearCookie']>[1]): string | undefined {
  const carried = request.cookies[name];
  if (carried === undefined) return undefined;
  reply.clearCookie(name, options);
  const signed = request.unsignCookie(carried);
  if (!signed.valid || !signed.value) return undefined;
  try {
    return decodeURIComponent(signed.value);
  } catch {
    return undefined;
  }
}

/**
 * Where a form sent again goes (onceForForm): to what the first sending made, saying so; or, when
 * that has no answer yet, to the list where it will appear, saying when it was sent.
 */
export function sentAgain(d: Dashboard, reply: FastifyReply, sending: Exclude<FormSending, { again: false }>, what: { made: string; list: string }): FastifyReply {
  if (sending.answer !== null) return d.redirect(reply, sending.answer, `This form was already sent: this is the ${what.made} it made. Nothing new was created.`);
  const at = readableTime(sending.sentAt);
  return d.redirect(
    reply,
    what.list,
    sending.lost
      ? `This form was sent at ${at}, and what it made was not recorded. Look for its ${what.made} in this list before sending it again.`
      : `This form was sent at ${at} and is still being carried out: its ${what.made} appears in this list once it is made.`,
  );
}

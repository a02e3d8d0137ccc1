// The browser side of the authorization-code flow: GET {auth_url}/oauth/authorize, the sign-in and
// consent forms it leads to, and their stylesheet. Pages, never JSON: errors render as HTML too.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import { toAppError } from '../http/errors.ts';
import { decide, signIn, startAuthorization, type Outcome, type Query } from './authorize.ts';
import { FORM_BODY_LIMIT } from './token-endpoint.ts';
import { consentPage, errorPage, signInPage, STYLESHEET, type PagePaths } from './pages/pages.ts';

const COOKIE = 'oauth_browser';

const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });
const redirect = (description: string) => ({ description, type: 'null' });
const pageResponses = {
  200: html('The next page of the flow'),
  400: html('An error page: the request or the form is not valid'),
  403: html('The form did not carry a valid CSRF token or came from another browser'),
  415: html('The form was not sent as application/x-www-form-urlencoded'),
  429: html('Too many failed sign-ins; Retry-After says when to try again'),
  500: html('An internal error'),
} as const;

const formBody = {
  type: 'object',
  properties: {
    request: { type: 'string', description: 'The pending authorization request (hidden field).' },
    csrf_token: { type: 'string', description: 'The CSRF token of the page (hidden field).' },
  },
} as const;

function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The CSP source a form may be redirected to: the client's origin, or its scheme for app URIs. */
function cspSource(uri: string): string {
  const u = new URL(uri);
  return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : u.protocol;
}

function pageHeaders(reply: FastifyReply, formAction: string): FastifyReply {
  return reply
    .header('content-security-policy', `default-src 'none'; style-src 'self'; img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`)
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache');
}

export function authorizeRoutes(app: FastifyInstance, ctx: AppContext, prefix: string): void {
  const base = `${prefix}/oauth/authorize`;
  const paths: PagePaths = { stylesheet: `${prefix}/oauth/assets/authorize.css`, signIn: `${base}/sign-in`, consent: `${base}/consent` };
  const secure = ctx.config.authBaseUrl.startsWith('https://');

  const render = (reply: FastifyReply, outcome: Outcome): FastifyReply => {
    switch (outcome.kind) {
      case 'redirect':
        return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(outcome.location, reply.request.method === 'GET' ? 302 : 303);
      case 'error':
        return pageHeaders(reply, "'none'").status(outcome.status).type('text/html; charset=utf-8').send(errorPage(paths, outcome.title, outcome.message));
      case 'signin': {
        if (outcome.setBrowserCookie) {
          reply.header('set-cookie', `${COOKIE}=${outcome.setBrowserCookie}; Path=${prefix}/oauth; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`);
        }
        if (outcome.retryAfter) reply.header('retry-after', String(outcome.retryAfter));
        const { client, pending } = outcome.view;
        const page = signInPage(paths, { clientName: client.name, requestId: pending.id, csrfToken: pending.csrf_token, email: outcome.email, error: outcome.error });
        return pageHeaders(reply, "'self'").status(outcome.status).type('text/html; charset=utf-8').send(page);
      }
      case 'consent': {
        const { client, pending, scopes } = outcome.view;
        const page = consentPage(paths, {
          clientName: client.name,
          requestId: pending.id,
          csrfToken: pending.csrf_token,
          scopes,
          email: outcome.user.email,
          accountName: outcome.user.accountName,
          returnHost: new URL(pending.redirect_uri).host || pending.redirect_uri,
        });
        // The answer is a redirect to the client, which form-action must allow as well.
        return pageHeaders(reply, `'self' ${cspSource(pending.redirect_uri)}`).status(200).type('text/html; charset=utf-8').send(page);
      }
    }
  };

  const formOf = (request: FastifyRequest): Record<string, string> | null => {
    const type = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/x-www-form-urlencoded') return null;
    return (request.body as Record<string, string> | undefined) ?? {};
  };
  const notAForm = (reply: FastifyReply) => render(reply, { kind: 'error', status: 415, title: 'Invalid form', message: 'The form must be sent as application/x-www-form-urlencoded.' });

  // Anything thrown on these routes (a malformed form, a database failure) is shown as a page too.
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const appErr = toAppError(err, request);
    if (appErr.status >= 500) request.log.error({ err }, 'authorization page failed');
    const message =
      appErr.status >= 500 ? 'Something went wrong on our side. Go back to the application and try again.'
      : appErr.status === 415 ? 'The form must be sent as application/x-www-form-urlencoded.'
      : appErr.message;
    // A limit's Retry-After (and the other headers an error carries) reach the browser too.
    reply.headers(appErr.headers);
    const title = appErr.status >= 500 ? 'Something went wrong' : appErr.status === 429 ? 'Too many requests' : 'Invalid request';
    return render(reply, { kind: 'error', status: Math.min(appErr.status, 500), title, message });
  });

  app.get(base, {
    config: { public: true },
    attachValidation: true,
    schema: {
      tags: ['oauth'],
      operationId: 'authorize', summary: 'Start the authorization-code flow (RFC 6749 §4.1, PKCE S256)',
      description:
        'Opens the sign-in page, then the consent page; answers with a redirect to `redirect_uri` carrying `code` and `state`, or an RFC 6749 §4.1.2.1 `error`. ' +
        'An unknown client or an unregistered `redirect_uri` shows an error page and never redirects.',
      querystring: {
        type: 'object',
        properties: {
          response_type: { type: 'string', enum: ['code'] },
          client_id: { type: 'string' },
          redirect_uri: { type: 'string', description: 'Exactly one of the client’s registered redirect URIs; may be left out when it has only one.' },
          scope: { type: 'string', description: 'Space-separated scopes; omitted means all the client may have.' },
          state: { type: 'string', description: 'Returned unchanged.' },
          code_challenge: { type: 'string', description: 'base64url(SHA-256(code_verifier)).' },
          code_challenge_method: { type: 'string', enum: ['S256'] },
        },
      },
      response: { ...pageResponses, 302: redirect('Back to the client with `code` and `state`, or with `error`') },
    },
    // The handler checks the parameters itself, so that errors become pages or redirects, never JSON.
    handler: async (request, reply) => render(reply, await startAuthorization(ctx, request.query as Query, readCookie(request, COOKIE), request.ip)),
  });

  app.post(`${base}/sign-in`, {
    config: { public: true, limitedByAddress: true },
    bodyLimit: FORM_BODY_LIMIT,
    attachValidation: true,
    schema: {
      tags: ['oauth'],
      operationId: 'submitSignIn', summary: 'Sign-in form of the authorization page', description: 'The sign-in form of the authorization page posts here; on success the consent page follows. Browsers only (CSRF-protected form).',
      consumes: ['application/x-www-form-urlencoded'],
      body: { ...formBody, properties: { ...formBody.properties, email: { type: 'string' }, password: { type: 'string', format: 'password' } } },
      response: pageResponses,
    },
    handler: async (request, reply) => {
      const form = formOf(request);
      if (!form) return notAForm(reply);
      return render(reply, await signIn(ctx, form, readCookie(request, COOKIE), request.ip));
    },
  });

  app.post(`${base}/consent`, {
    config: { public: true },
    bodyLimit: FORM_BODY_LIMIT,
    attachValidation: true,
    schema: {
      tags: ['oauth'],
      operationId: 'submitConsent', summary: 'Consent form of the authorization page', description: 'The consent form posts here; approving redirects to the client with a code, denying with `error=access_denied`.',
      consumes: ['application/x-www-form-urlencoded'],
      body: { ...formBody, properties: { ...formBody.properties, decision: { type: 'string', enum: ['approve', 'deny'] } } },
      response: { ...pageResponses, 303: redirect('Back to the client with `code` and `state`, or with `error=access_denied`') },
    },
    handler: async (request, reply) => {
      const form = formOf(request);
      if (!form) return notAForm(reply);
      return render(reply, await decide(ctx, form, readCookie(request, COOKIE)));
    },
  });

  app.get(paths.stylesheet, {
    config: { public: true },
    schema: { tags: ['oauth'], operationId: 'getAuthorizationStylesheet', summary: 'Stylesheet of the authorization pages', description: 'The stylesheet of the sign-in and consent pages (served by the service itself: the pages load nothing from elsewhere).', response: { 200: { description: 'CSS', content: { 'text/css': { schema: { type: 'string' } } } } } },
    handler: async (_request, reply) => reply.header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').type('text/css; charset=utf-8').send(STYLESHEET),
  });
}

import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { ALL_SCOPES } from '../auth/scopes.ts';
import { FORM_BODY_LIMIT, handleTokenRequest, parseForm } from './token-endpoint.ts';
import { tokenEndpointError } from './errors.ts';
import { GRANTS } from './grants.ts';
import { authorizeRoutes } from './authorize-routes.ts';

const oauthError = {
  type: 'object',
  required: ['error', 'error_description'],
  additionalProperties: false,
  description: 'RFC 6749 §5.2 error',
  properties: {
    error: { type: 'string', enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope', 'temporarily_unavailable', 'server_error'] },
    error_description: { type: 'string' },
  },
} as const;

/** The path part of `{auth_url}`, where the OAuth routes live. */
export function authPrefix(ctx: AppContext): string {
  return new URL(ctx.config.authBaseUrl).pathname.replace(/\/+$/, '');
}

export function authRoutes(app: FastifyInstance, ctx: AppContext): void {
  const prefix = authPrefix(ctx);
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (request, body, done) => {
    // A route's parameters are those its body schema declares.
    const declared = (request.routeOptions.schema?.body as { properties?: object } | undefined)?.properties;
    try {
      done(null, parseForm(body as string, declared && Object.keys(declared)));
    } catch (err) {
      done(err as Error, undefined);
    }
  });

  // The authorization pages, in a child scope (it inherits the form parser) with an HTML error handler.
  void app.register(async (pages) => authorizeRoutes(pages, ctx, prefix));

  app.post(`${prefix}/oauth/token`, {
    config: { public: true, oauth: true, limitedByAddress: true },
    // The form parser's limit, here too, so that the error names it.
    bodyLimit: FORM_BODY_LIMIT,
    errorHandler: tokenEndpointError,
    schema: {
      tags: ['oauth'],
      operationId: 'issueToken', summary: 'Issue an access token',
      description: 'RFC 6749 token endpoint. `application/x-www-form-urlencoded` only. Client authentication by `client_secret_post` (client_id and client_secret fields) or `client_secret_basic` (HTTP Basic).',
      consumes: ['application/x-www-form-urlencoded'],
      body: {
        examples: [{ grant_type: 'client_credentials', client_id: 'cli_3f9a2b7c', client_secret: 'cs_example_secret', scope: 'read:shipments write:labels' }],
        type: 'object',
        properties: {
          grant_type: { type: 'string', description: '`client_credentials`, `authorization_code` or `refresh_token`.' },
          client_id: { type: 'string' },
          client_secret: { type: 'string', format: 'password' },
          scope: { type: 'string', description: 'Space-separated scopes, e.g. `read:labels write:labels` (`labels:read` is accepted too).' },
          code: { type: 'string' },
          redirect_uri: { type: 'string' },
          code_verifier: { type: 'string' },
          refresh_token: { type: 'string' },
        },
      },
      response: {
        200: {
          type: 'object',
          required: ['access_token', 'token_type', 'expires_in'],
          properties: {
            access_token: { type: 'string' },
            token_type: { type: 'string', enum: ['Bearer'] },
            expires_in: { type: 'integer' },
            scope: { type: 'string' },
            refresh_token: { type: 'string' },
          },
        },
        400: oauthError,
        401: oauthError,
        429: { ...oauthError, description: 'An RFC 6749 error, `temporarily_unavailable` (a code of §4.1.2.1): too many requests from this address; Retry-After says when to send again' },
        500: { ...oauthError, description: 'An RFC 6749 error, `server_error` (a code of §4.1.2.1); the request id is in X-Request-Id' },
        503: { ...oauthError, description: 'An RFC 6749 error, `temporarily_unavailable` (a code of §4.1.2.1): the database cannot be reached; Retry-After says when to send again' },
      },
    },
    handler: async (request, reply) => {
      const token = await handleTokenRequest(ctx, request);
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(token);
    },
  });

  app.get(`${prefix}/.well-known/jwks.json`, {
    config: { public: true },
    schema: {
      tags: ['oauth'],
      operationId: 'getJsonWebKeySet', summary: 'Public keys that verify access tokens and stamp indicia', description: 'The JSON Web Key Set (RFC 7517) of the service\'s signing keys, current and rotated: verify access tokens (`use: sig`) and stamp indicia with it.',
      response: { 200: { type: 'object', required: ['keys'], properties: { keys: { type: 'array', items: { type: 'object', additionalProperties: true } } } } },
    },
    handler: async (_request, reply) => {
      await ctx.keys.reload();
      return reply.header('cache-control', 'public, max-age=300').send(ctx.keys.jwks());
    },
  });

  // RFC 8414 §3 inserts the well-known segment before the issuer's path; the issuer-relative place is
  // kept too, because that is where many clients look.
  const metadataPaths = prefix ? [`/.well-known/oauth-authorization-server${prefix}`, `${prefix}/.well-known/oauth-authorization-server`] : ['/.well-known/oauth-authorization-server'];
  for (const [i, path] of metadataPaths.entries()) {
    app.get(path, {
      config: { public: true },
      schema: {
        tags: ['oauth'],
        operationId: i === 0 ? 'getAuthorizationServerMetadata' : 'getAuthorizationServerMetadataAtIssuerPath',
        summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
        description:
          i === 0
            ? 'Where the endpoints are and what the server supports (grants, scopes, PKCE methods), for OAuth client libraries that discover them.'
            : 'The same metadata at the issuer-relative place, where many clients look.',
        response: { 200: { type: 'object', additionalProperties: true } },
      },
      handler: async () => authorizationServerMetadata(ctx),
    });
  }
}

export function authorizationServerMetadata(ctx: AppContext): Record<string, unknown> {
  const base = ctx.config.authBaseUrl;
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    jwks_uri: `${base}/.well-known/jwks.json`,
    grant_types_supported: Object.keys(GRANTS),
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
    scopes_supported: [...ALL_SCOPES],
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${ctx.config.baseUrl}/docs`,
  };
}

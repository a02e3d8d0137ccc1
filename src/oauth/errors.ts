// The wording of OAuth errors, on the token endpoint and in the authorization redirect: a description
// holds only what RFC 6749 §5.2 allows, however much of the request it repeats.
import type { FastifyError, FastifyRequest } from 'fastify';
import { AppError, OAuthError } from '../errors.ts';
import { toAppError } from '../http/errors.ts';

const NOT_IN_DESCRIPTION = /[^\x20\x21\x23-\x5B\x5D-\x7E]/gu;

/** `text` with each character that may not appear in an `error_description` (`"`, `\`, controls, non-ASCII) replaced by `?`. */
export function errorDescription(text: string): string {
  return text.replace(NOT_IN_DESCRIPTION, '?');
}

/**
 * The token route's error handler: it words the error and passes it on to the app's handler
 * (src/http/errors.ts), which gives it the RFC 6749 shape. A failure of ours goes on unchanged, for the log.
 */
export function tokenEndpointError(err: FastifyError, request: FastifyRequest): never {
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    throw new OAuthError('invalid_request', errorDescription(`content type ${request.headers['content-type'] ?? '(none)'} is not supported; send application/x-www-form-urlencoded`));
  }
  const appErr = toAppError(err, request);
  if (appErr.status >= 500) throw err;
  const description = errorDescription(appErr.message);
  if (description === appErr.message) throw appErr;
  if (appErr instanceof OAuthError) {
    throw new OAuthError(appErr.error as ConstructorParameters<typeof OAuthError>[0], description, { basicChallenge: 'www-authenticate' in appErr.headers });
  }
  throw new AppError(appErr.status, appErr.code, description, { headers: appErr.headers });
}

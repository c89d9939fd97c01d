// A presented refresh token of no format the service issues (neither 12 characters of [a-z0-9] nor a v2
// token). POST /token checks the shape first and answers 400 "Refresh token is not valid"; the OAuth
// server's /oauth/token does not, and answers it as a token it cannot find, as the original does.
import { ApiError, apiError } from '../errors.js';

/** `oauthClientId`: the client POST /oauth/token authenticated, null at POST /token. */
export function malformedToken(oauthClientId: string | null): ApiError {
  return oauthClientId === null ? apiError('refresh_token_not_valid') : apiError('refresh_token_not_found');
}

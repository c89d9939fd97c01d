// POST /oauth/token with grant_type=refresh_token (docs/oauth-server.md#token-endpoint): the service's
// refresh rotation (grants/refresh-token.ts), for a token of a session issued to the authenticated client
// only; the new access token carries the client and the scopes again. A client deleted meanwhile ends the
// session (src/db/oauth-clients.ts deleteOAuthClient), refreshed or not.
import { findOAuthClient, type OAuthClientRow } from '../../db/oauth-clients.js';
import { ApiError } from '../errors.js';
import { OAuthRefusal } from '../grants/oauth-refusal.js';
import { refresh } from '../grants/refresh-token.js';
import type { TokenResponse } from '../sessions/issue.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { clientGone } from './client-auth.js';
import { oauthTokenBody } from './code-grant.js';
import type { TokenParams } from './token-params.js';

export async function refreshForClient(
  ctx: AppContext,
  req: ApiRequest,
  client: OAuthClientRow,
  p: TokenParams,
): Promise<Record<string, unknown>> {
  if (!p.refresh_token) throw new OAuthRefusal('invalid_request', 'refresh_token is required for refresh_token grant');
  // The rotation checks that the token's session belongs to this client, on the row it reads anyway.
  try {
    const { body } = await refresh(req, ctx, p.refresh_token, client.id);
    return oauthTokenBody(body as TokenResponse);
  } catch (err) {
    // The rotation holds the session's row, so a delete of the client ends the session after it or finds
    // it ended; a refusal because the delete came first is answered as a refresh after the delete is.
    if ((err instanceof ApiError || err instanceof OAuthRefusal) && !(await findOAuthClient(ctx.db, client.id))) throw clientGone();
    throw err;
  }
}

// POST /oauth/token with grant_type=refresh_token (docs/oauth-server.md#token-endpoint): the service's
// refresh rotation (grants/refresh-token.ts), for a token of a session issued to the authenticated client
// only; the new access token carries the client and the scopes again.
import { findTokenSessionClient } from '../../db/oauth-consents.js';
import type { OAuthClientRow } from '../../db/oauth-clients.js';
import { OAuthRefusal } from '../grants/oauth-refusal.js';
import { refresh } from '../grants/refresh-token.js';
import { sha256Hex } from '../crypto/tokens.js';
import type { TokenResponse } from '../sessions/issue.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { oauthTokenBody } from './code-grant.js';
import type { TokenParams } from './token-params.js';

export async function refreshForClient(
  ctx: AppContext,
  req: ApiRequest,
  client: OAuthClientRow,
  p: TokenParams,
): Promise<Record<string, unknown>> {
  if (!p.refresh_token) throw new OAuthRefusal('invalid_request', 'refresh_token is required for refresh_token grant');
  const session = await findTokenSessionClient(ctx.db, sha256Hex(p.refresh_token));
  // an unknown token is left to the rotation, which answers it as the /token grant does
  if (session && !session.oauth_client_id)
    throw new OAuthRefusal('invalid_client', 'Client authentication not allowed for non-OAuth session');
  if (session && session.oauth_client_id !== client.id)
    throw new OAuthRefusal('invalid_client', "Client does not match the session's OAuth client");
  const { body } = await refresh(req, ctx, p.refresh_token, { client_id: client.id, scope: session?.scopes ?? '' });
  return oauthTokenBody(body as TokenResponse);
}

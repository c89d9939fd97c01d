// POST /oauth/token with grant_type=authorization_code (docs/oauth-server.md#token-endpoint): the code's
// request is locked, checked in the original's order (client, resource, redirect URI, PKCE, user),
// deleted and a session issued to the client in one transaction — a refused exchange changes nothing
// and a code is exchanged once, even by concurrent requests; the client's row is held meanwhile, so a
// concurrent delete of the client either refuses the exchange or ends its session. Refusals are RFC 6749
// error bodies.
import { tx } from '../../db/pool.js';
import { deleteAuthorization, lockApprovedCode, type AuthorizationRow } from '../../db/oauth-authorizations.js';
import { lockLiveOAuthClient, type OAuthClientRow } from '../../db/oauth-clients.js';
import { findUserById, type UserRow } from '../../db/users.js';
import { OAuthRefusal } from '../grants/oauth-refusal.js';
import { issueSession, issuingTx, type TokenResponse } from '../sessions/issue.js';
import { actorOf } from '../users/actor.js';
import { isBanned } from '../users/user-json.js';
import { safeEqual, sha256Hex } from '../crypto/tokens.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { codeHash } from './authorization-code.js';
import { clientGone } from './client-auth.js';
import { idTokenClaims } from './id-token.js';
import { parseScopes } from './scopes.js';
import type { TokenParams } from './token-params.js';

const invalidGrant = (description: string) => new OAuthRefusal('invalid_grant', description);

export async function exchangeCode(
  ctx: AppContext,
  req: ApiRequest,
  client: OAuthClientRow,
  p: TokenParams,
): Promise<Record<string, unknown>> {
  if (!p.code) throw new OAuthRefusal('invalid_request', 'code is required for authorization_code grant');
  const { row, issued } = await issuingTx(
    ctx,
    async (c) => {
      // The client again, under a share lock: a delete that began since it authenticated is refused as
      // after the delete; one that comes later waits for this session and ends it (lockLiveOAuthClient).
      if (!(await lockLiveOAuthClient(c, client.id))) throw clientGone();
      const row = await lockApprovedCode(c, codeHash(p.code));
      if (!row) throw invalidGrant('Invalid authorization code');
      const user = await checkCode(c, row, client, p);
      await deleteAuthorization(c, row.id);
      const issued = await issueSession(ctx, c, user, 'oauth_provider/authorization_code', req, {
        audit: {
          actor: actorOf(user),
          action: 'login',
          traits: { provider_type: 'oauth_provider_authorization_code', client_id: client.id },
        },
        oauth: { client_id: client.id, scope: row.scope },
      });
      return { row, issued };
    },
    req.signal,
  );
  return oauthTokenBody(issued, await idTokenFor(ctx, issued, client, row));
}

async function checkCode(
  c: Parameters<Parameters<typeof tx>[1]>[0],
  row: AuthorizationRow,
  client: OAuthClientRow,
  p: TokenParams,
): Promise<UserRow> {
  if (row.expired) throw invalidGrant('Authorization code has expired');
  if (row.client_id !== client.id) throw invalidGrant('Authorization code was not issued for this client');
  if (p.resource && p.resource !== (row.resource ?? ''))
    throw invalidGrant('Authorization code resource does not match the resource parameter');
  if (p.redirect_uri && p.redirect_uri !== row.redirect_uri) throw invalidGrant('Invalid redirect_uri');
  const pkce = pkceProblem(row, p.code_verifier);
  if (pkce) throw invalidGrant(`PKCE verification failed: ${pkce}`);
  if (!row.user_id) throw invalidGrant('Authorization code has no associated user');
  const user = await findUserById(c, row.user_id);
  if (!user || user.deleted_at) throw invalidGrant('User not found for authorization code');
  if (isBanned(user)) throw new OAuthRefusal('access_denied', 'User is banned');
  return user;
}

function pkceProblem(row: AuthorizationRow, verifier: string): string | null {
  if (!row.code_challenge) return null;
  if (!verifier) return 'code_verifier is required when PKCE challenge is present';
  const expected = row.code_challenge_method === 'plain' ? verifier : Buffer.from(sha256Hex(verifier), 'hex').toString('base64url');
  return safeEqual(row.code_challenge, expected) ? null : 'code challenge does not match previously saved code verifier';
}

async function idTokenFor(ctx: AppContext, issued: TokenResponse, client: OAuthClientRow, row: AuthorizationRow): Promise<string | null> {
  const scopes = parseScopes(row.scope);
  // an openid code is only issued with an asymmetric key (authorize-params.ts); a key changed since then is no 500
  if (!scopes.includes('openid') || ctx.jwt.algorithm === 'HS256') return null;
  const user = issued.user as { id: string };
  const fresh = await findUserById(ctx.db, user.id);
  return fresh ? ctx.jwt.sign(idTokenClaims(ctx, fresh, client.id, scopes, row.nonce)) : null;
}

/**
 * The OAuth token response: the user object and expires_at are left out, as the original leaves them. Its
 * members come in the original's order: it answers a map, whose keys its encoder writes sorted.
 */
export function oauthTokenBody(issued: TokenResponse, idToken: string | null = null): Record<string, unknown> {
  return {
    access_token: issued.access_token,
    expires_in: issued.expires_in,
    ...(idToken ? { id_token: idToken } : {}),
    refresh_token: issued.refresh_token,
    token_type: issued.token_type,
  };
}

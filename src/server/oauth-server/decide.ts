// The consent API's two steps on a pending authorization request (docs/oauth-server.md#consent): showing
// it to the signed-in user (which claims it for them and, when they already consented to every scope,
// approves it at once) and the user's decision. Each runs in one transaction under the request's row
// lock, so two concurrent calls cannot both issue a code. Both take the user's row first (as a deletion
// does before its cascade reaches the request) and then check that the caller's session is still there:
// a code is a new credential, and a session a logout, a revocation or another session's new password
// ended while the request waited must not hand one out (403 session_not_found, as the bearer check).
import { ApiError, apiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import {
  approveAuthorization,
  lockAuthorization,
  setAuthorizationStatus,
  setAuthorizationUser,
  type AuthorizationRow,
} from '../../db/oauth-authorizations.js';
import { lockActiveConsent, upsertConsent } from '../../db/oauth-consents.js';
import { lockLiveUserById } from '../../db/users.js';
import { assertSessionStillLive } from '../auth/session-still-live.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { codeHash, newAuthorizationCode } from './authorization-code.js';
import { errorRedirect, withQuery } from './redirects.js';
import { hasAllScopes, parseScopes } from './scopes.js';

const notFound = () => apiError('oauth_authorization_not_found');

/** An expired request is marked expired (committed) and answered 404; the outcome carries that. */
type Locked = { row: AuthorizationRow } | { expired: true };

async function lockPending(c: Parameters<Parameters<typeof tx>[1]>[0], authorizationId: string, wait = false): Promise<Locked> {
  const row = await lockAuthorization(c, authorizationId, wait);
  if (!row) throw notFound();
  if (row.expired && row.status === 'pending') {
    await setAuthorizationStatus(c, row.id, 'expired');
    return { expired: true };
  }
  if (row.expired) throw notFound();
  return { row };
}

/** Approves under the lock: a new code; answers the redirect carrying it. */
async function issueCode(c: Parameters<Parameters<typeof tx>[1]>[0], row: AuthorizationRow): Promise<string> {
  const code = newAuthorizationCode();
  await approveAuthorization(c, row.id, codeHash(code));
  return withQuery(row.redirect_uri, { code, state: row.state });
}

/**
 * The caller's user row, locked, and its session checked under it. A user deleted since the bearer check
 * took its requests with it (their foreign key cascades): the request is not found.
 */
async function lockCaller(c: Parameters<Parameters<typeof tx>[1]>[0], userId: string, sessionId: string | null): Promise<void> {
  if (!(await lockLiveUserById(c, userId))) throw notFound();
  await assertSessionStillLive(c, sessionId);
}

/** GET: the pending request, now the caller's; or {redirect_url} when an earlier consent covers its scopes. */
export async function showAuthorization(
  ctx: AppContext,
  req: ApiRequest<unknown>,
  authorizationId: string,
  userId: string,
  sessionId: string | null,
): Promise<{ row: AuthorizationRow; redirectUrl?: string }> {
  const outcome = await tx(
    ctx.db,
    async (c) => {
      await lockCaller(c, userId, sessionId);
      // Waits for a concurrent GET or decision rather than skip the row: the same user's second fetch must
      // find the request too (the first claimed it for them), and a decision is read as it committed.
      const locked = await lockPending(c, authorizationId, true);
      if ('expired' in locked) return locked;
      const { row } = locked;
      if (row.status !== 'pending') throw apiError('oauth_authorization_not_pending');
      if (row.user_id === null) {
        await setAuthorizationUser(c, row.id, userId);
        const consent = await lockActiveConsent(c, userId, row.client_id);
        // The consent already covers the request and is left as it is: its scopes and granted_at change
        // only when the user approves on the consent page (docs/oauth-server.md#consent).
        if (consent && hasAllScopes(parseScopes(consent.scopes), parseScopes(row.scope))) {
          return { row, redirectUrl: await issueCode(c, row) };
        }
      } else if (row.user_id !== userId) throw notFound();
      return { row };
    },
    req.signal,
  );
  if ('expired' in outcome) throw notFound();
  return outcome;
}

/** POST consent: approve (a code in the redirect) or deny (error=access_denied in the redirect). */
export async function decide(
  ctx: AppContext,
  req: ApiRequest<unknown>,
  authorizationId: string,
  userId: string,
  sessionId: string | null,
  action: 'approve' | 'deny',
): Promise<string> {
  const outcome: string | ApiError = await tx(
    ctx.db,
    async (c) => {
      await lockCaller(c, userId, sessionId);
      const locked = await lockPending(c, authorizationId);
      if ('expired' in locked) return notFound();
      const { row } = locked;
      if (row.status !== 'pending') throw apiError('oauth_authorization_no_longer_pending');
      if (row.user_id !== userId) throw notFound();
      if (action === 'approve') {
        // Each scope once: a request may name one many times (up to its 4,096 characters), and the consent
        // holds 2,048 (the original fails the insert then).
        await upsertConsent(c, userId, row.client_id, [...new Set(parseScopes(row.scope))].join(' '));
        return issueCode(c, row);
      }
      await setAuthorizationStatus(c, row.id, 'denied');
      return errorRedirect(row.redirect_uri, 'access_denied', 'User denied the request', row.state);
    },
    req.signal,
  );
  if (outcome instanceof ApiError) throw outcome;
  return outcome;
}

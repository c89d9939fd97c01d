// grant_type=refresh_token (docs/tokens-and-sessions.md#refresh-rotation transitions table): rotation with reuse detection.
// Steps: pre-validate → find the token with its session's state → the session limits → an active token: lock the session and
// rotate in one statement (the usual path, two round trips in all) → an already-rotated token: answer it
// without locking → anything else (and an active token that could not be rotated after all): in a
// transaction, lock the session, rotate if the token is still active, else decide on the state read under
// the lock: hand back the existing child, give a rotated token another child within the reuse interval,
// or refuse → sign outside the lock; with the custom access token hook or a KMS key, whose signature may
// fail, all of it runs in one transaction with the signature, so a failure changes nothing
// (grants/refresh-answer.ts).
// The session row lock (select … for update) is what makes 1,000 concurrent refreshes of one token yield
// exactly one child: each waiter finds the token revoked once the winner committed, re-reads the state,
// and answers the active token, which is the winner's child (test/refresh.test.ts pins this).
import { ApiError, apiError } from '../errors.js';
import { inTransaction, type Queryable } from '../../db/pool.js';
import {
  branchRefreshToken,
  findPresentedToken,
  readTokenState,
  recordRefresh,
  revokeSessionTokens,
  rotateRefreshToken,
  type LockedTokenState,
  type PresentedToken,
  type TokenState,
} from '../../db/refresh-tokens.js';
import { lockAndRotate } from '../../db/refresh-rotation.js';
import { lockSessionUser } from '../../db/sessions.js';
import { auditEntry, type AuditEntry } from '../../db/audit-log.js';
import { isPlausibleRefreshToken, isRowRefreshToken, safeEqual, sha256Hex } from '../crypto/tokens.js';
import { isBanned } from '../users/user-json.js';
import type { OAuthClaims } from '../sessions/issue.js';
import { answerRefresh, type RefreshDecision } from './refresh-answer.js';
import { childRefreshToken, childSecretOf } from '../sessions/child-token.js';
import { actorOf, type ActingUser } from '../users/actor.js';
import { sessionPolicy } from '../sessions/policy.js';
import { grantSchema } from '../http/validate.js';
import type { AppContext } from '../context.js';
import type { Grant } from './grant.js';
import { OAuthRefusal, refusalResponse } from './oauth-refusal.js';
import { SESSION_ENDED, checkSessionClient, clientOf, malformedToken, type Client } from './refresh-checks.js';
import { refreshV2, refuseV2Reuse, upgradeToV2Locked, upgradesSession } from './refresh-token-v2.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';

const notFound = () => apiError('refresh_token_not_found');
const alreadyUsed = () => apiError('refresh_token_already_used');
const banned = () => apiError('refresh_token_user_banned');

const schema = grantSchema('refresh_token');

export const refreshToken: Grant<ReturnType<typeof schema>> = {
  grantType: 'refresh_token',
  schema,
  handle: (req, ctx, body) => refresh(req, ctx, body.refresh_token ?? ''),
};

/**
 * The refresh of a presented token; `oauthClientId`, the OAuth server client that POST /oauth/token
 * authenticated (src/server/oauth-server/refresh-grant.ts): only the session's own client may refresh a
 * session issued to an app, and only at that endpoint, as the original.
 */
export async function refresh(
  req: ApiRequest,
  ctx: AppContext,
  presented: string,
  oauthClientId: string | null = null,
): Promise<ApiResponse> {
  if (!isPlausibleRefreshToken(presented)) throw malformedToken(oauthClientId);
  // As the original tells them apart (exactly 12 characters is a row's token, anything longer a v2 token),
  // but for the 22-character tokens the original issued before April 2025, which an adopted database holds.
  if (!isRowRefreshToken(presented)) return refreshV2(req, ctx, presented, oauthClientId);
  const found = await findPresentedToken(ctx.db, sha256Hex(presented), sessionPolicy(ctx.config));
  if (!found) throw notFound();
  if (isBanned(found)) throw banned();
  if (found.session_ended) throw apiError(SESSION_ENDED[found.session_ended]);
  // The client last, as the original checks it.
  if (oauthClientId !== null) checkSessionClient(found.oauth_client_id, oauthClientId);
  if (oauthClientId === null && found.oauth_client_id) {
    return refusalResponse(new OAuthRefusal('invalid_client', 'Client authentication required for OAuth session'), req);
  }
  const oauth: OAuthClaims | null = oauthClientId === null ? null : { client_id: oauthClientId, scope: found.scopes ?? '' };
  const child = childRefreshToken(childSecretOf(ctx.config.jwt), presented);
  const client = clientOf(req);

  // An active token is rotated by one statement (rotateAtOnce), the usual path. Already rotated (the
  // losers of a concurrent refresh, a client that lost the response): the answer is the committed
  // child, so no lock is needed. A reuse detection racing with this read could revoke
  // that child a moment later; the client then sees exactly what it would have seen a moment later.
  // A session SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE moves to v2 does so at the refresh of its active
  // token (or of the token that move revoked); a revoked token of a session still holding an active one
  // is decided below as ever.
  const upgrading = upgradesSession(ctx.config, found.session_id) && (!found.revoked || found.active_id === null);
  const decide = async (q: Queryable): Promise<RefreshDecision> =>
    upgrading
      ? upgradeToV2Locked(ctx, q, found, client)
      : ((await rotateAtOnce(q, found, child, client)) ??
        (found.revoked && answersWithChild(ctx, found, found.id, child)
          ? await existingChild(q, found, child, client)
          : await decideLocked(ctx, q, found, presented, child, client)));
  return answerRefresh(ctx, req, decide, found.session_created_at, oauth);
}

/**
 * The usual path, an active token: lock, rotate and read the response's AMR and identities in one
 * statement (src/db/refresh-rotation.ts). Null when the token is not active, or was not rotated after all,
 * which writes nothing: decideLocked then decides as for any other token (the session logged out or the
 * user banned meanwhile, the token rotated by a concurrent refresh whose lock the statement waited for, or
 * revoked as a reuse), so every refusal and every reuse decision is made there.
 * The audit rows name the user as findPresentedToken read it, one statement before the lock (decideLocked
 * names the user as locked): the same snapshot-level race the lock's own read of the user row has.
 */
async function rotateAtOnce(q: Queryable, found: PresentedToken, child: string, client: Client): Promise<RefreshDecision | null> {
  if (found.revoked) return null;
  const rotated = await lockAndRotate(q, {
    parentId: found.id,
    sessionId: found.session_id,
    childHash: sha256Hex(child),
    client,
    audit: rotationAudit(client, ownerOf(found)),
    now: new Date(),
  });
  return rotated && { user: rotated.user, sessionId: found.session_id, token: child, reads: rotated, outcome: 'rotated' };
}

/** The user a presented token belongs to, as far as the rotation's audit rows name it. */
export const ownerOf = (found: PresentedToken): ActingUser => ({
  id: found.user_id,
  email: found.email,
  phone: found.phone,
  raw_user_meta_data: found.raw_user_meta_data,
  is_sso_user: found.is_sso_user,
});

/**
 * Every case but the usual one, in a transaction: lock the session, rotate if the token still looks
 * active, else decide on the state read under the lock. `child` is the presented token's first child.
 */
function decideLocked(
  ctx: AppContext,
  q: Queryable,
  found: PresentedToken,
  presented: string,
  child: string,
  client: Client,
): Promise<RefreshDecision> {
  return inTransaction(q, async (c): Promise<RefreshDecision> => {
    const locked = await lockSessionUser(c, found.session_id);
    if (!locked) return notFound(); // the session was logged out meanwhile
    const { user } = locked;
    if (isBanned(user)) return banned();
    // Optimistic: the token looked active, and the rotation writes (and audits) only if it still is.
    if (!found.revoked && (await rotateRefreshToken(c, found.id, sha256Hex(child), client, rotationAudit(client, user)))) {
      return { user, sessionId: found.session_id, token: child, outcome: 'rotated' };
    }
    // Revoked, possibly by the previous lock holder. A separate statement after the lock: its fresh
    // snapshot sees what that holder committed (under READ COMMITTED the locking statement itself
    // would not refresh the other rows of its query).
    const state = await readTokenState(c, found.id, found.session_id);
    if (!state) return notFound();
    // The active token may be a later child of the presented one (a branch, below): derived with its generation.
    const secret = childSecretOf(ctx.config.jwt);
    const activeChild = state.active_generation ? childRefreshToken(secret, presented, state.active_generation) : child;
    if (answersWithChild(ctx, state, found.id, activeChild)) {
      await recordRefresh(c, found.session_id, client, refreshedAudit(client, user));
      return { user, sessionId: found.session_id, token: activeChild, outcome: 'reused_parent' };
    }
    if (branchesWithinInterval(ctx, state)) {
      const another = childRefreshToken(secret, presented, state.children);
      if (await branchRefreshToken(c, found.id, sha256Hex(another), client, rotationAudit(client, user))) {
        return { user, sessionId: found.session_id, token: another, outcome: 'rotated' };
      }
    }
    return refuseReuse(ctx, c, found.session_id, locked.movedToV2);
  });
}

/** The rotation's audit rows, written by the rotation statement itself: token_revoked, token_refreshed. */
export const rotationAudit = (client: Client, user: ActingUser): AuditEntry[] => [
  auditEntry(client.request, actorOf(user), 'token_revoked'),
  auditEntry(client.request, actorOf(user), 'token_refreshed'),
];

/** The audit row of a refresh answered with an existing token: token_refreshed, as the original writes it. */
const refreshedAudit = (client: Client, user: ActingUser): AuditEntry[] => [auditEntry(client.request, actorOf(user), 'token_refreshed')];

/**
 * The previous token answered without the lock: the session records the refresh (time, user agent, ip) and
 * token_refreshed is audited, as the original does for every refresh it answers, in the one statement that
 * also reads the user (the round trip this path always made).
 */
async function existingChild(q: Queryable, found: PresentedToken, child: string, client: Client): Promise<RefreshDecision> {
  const user = await recordRefresh(q, found.session_id, client, refreshedAudit(client, ownerOf(found)));
  return user ? { user, sessionId: found.session_id, token: child, outcome: 'reused_parent' } : notFound();
}

/**
 * A revoked token that is the immediately previous one (the active token is its child) is answered with
 * that existing child, never a new one: the client that failed to save the response, and every loser of
 * a concurrent refresh (docs/tokens-and-sessions.md#refresh-rotation step 3). The hash check guards the derivation (a JWT_SECRET change
 * would derive another text).
 * The reuse interval bounds this, as the docs/tokens-and-sessions.md#refresh-rotation transitions table says ("reuse interval elapsed →
 * the session's tokens revoked"), when rotation is on and an interval is set: a previous token presented later
 * than that is treated as stolen. With no interval (the default, 0) the original's rule holds and the
 * previous token is always answered; otherwise two tabs refreshing a moment apart would log the user out.
 */
function answersWithChild(ctx: AppContext, state: TokenState, tokenId: string, child: string): boolean {
  const isPrevious = state.active_parent_id === tokenId && state.active_hash !== null && safeEqual(state.active_hash, sha256Hex(child));
  const { refreshTokenRotationEnabled: rotation, refreshTokenReuseIntervalSeconds: interval } = ctx.config.security;
  return isPrevious && !(rotation && interval > 0 && state.revoked_for > interval);
}

/**
 * A rotated token (one with a child) other than the one just before the active token, presented within
 * SECURITY_REFRESH_TOKEN_REUSE_INTERVAL of its revocation, gets another child, as the original swaps any
 * revoked token within that interval; the active token stays valid. Two exceptions (docs/differences.md):
 * a token revoked by reuse detection was never rotated, so it stays refused and the detection is not undone
 * within the interval; and a token revoked before an MFA verification raised the session stays refused, so
 * that a stolen aal1 token cannot mint aal2 tokens.
 */
function branchesWithinInterval(ctx: AppContext, state: LockedTokenState): boolean {
  const interval = ctx.config.security.refreshTokenReuseIntervalSeconds;
  return state.revoked && state.children > 0 && state.revoked_at_current_level && interval > 0 && state.revoked_for <= interval;
}

/**
 * Any other revoked token is a reuse: an older token than the immediately previous one, or the previous
 * one, after the interval (with none set, at once), or a token revoked without being rotated (its family
 * no longer active). With rotation enabled every live token of the session is revoked, as the original
 * does, branches given within the reuse interval included — committed, then refused; with rotation
 * disabled it is only refused (docs/tokens-and-sessions.md#reuse-detection transitions table). A session
 * that has moved to v2 (a service no longer upgrading reads its 12-character tokens here) is ended as a
 * v2 reuse ends it: revoking its rows would leave its v2 token refreshing.
 */
async function refuseReuse(ctx: AppContext, c: Queryable, sessionId: string, movedToV2: boolean): Promise<ApiError> {
  if (movedToV2) return refuseV2Reuse(ctx, c, sessionId);
  if (ctx.config.security.refreshTokenRotationEnabled) {
    const revoked = await revokeSessionTokens(c, sessionId);
    ctx.log.warn({ sessionId, revoked }, "refresh token reuse detected: the session's tokens revoked");
  }
  return alreadyUsed();
}

// grant_type=refresh_token for the original's v2 tokens (docs/tokens-and-sessions.md#v2-refresh-tokens),
// and the move of a 12-character session to v2 (SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE).
// A v2 token names its session and a counter; the session row holds the key and the counter of the one
// valid token. The difference (session's counter − token's) decides:
//   < 0  never issued: 400 validation_failed "Not Issued By This Server";
//   = 0  the current token: the counter advances by one compare-and-set statement (the usual path);
//   > 0  an older token: answered with the current one, counter unchanged, when the client likely failed
//        to save the last answer (difference 1), the session was refreshed within
//        SECURITY_REFRESH_TOKEN_REUSE_INTERVAL (concurrent refreshes), or SECURITY_REFRESH_TOKEN_ALLOW_REUSE
//        is on; otherwise reuse: with rotation on the whole session is deleted, then 400
//        refresh_token_already_used either way.
// Everything but the usual path is decided in a transaction holding the session's row lock, on the
// counter read under it; with a signature that may fail, the whole refresh is one transaction
// (grants/refresh-answer.ts).
import { apiError, type ApiError } from '../errors.js';
import { inTransaction, type Queryable } from '../../db/pool.js';
import {
  advanceV2Counter,
  deleteSession,
  findV2Session,
  isNewestToken,
  lockV2Session,
  recordV2Reuse,
  upgradeToV2,
  type V2Session,
} from '../../db/refresh-v2.js';
import { readTokenState, recordRefresh, revokeSessionTokens, type PresentedToken } from '../../db/refresh-tokens.js';
import { auditEntry, type AuditEntry } from '../../db/audit-log.js';
import { encodeV2Token, parseV2Token, upgradesToV2, v2SignatureMatches, type ParsedV2Token } from '../crypto/refresh-token-v2.js';
import { newSessionKey, openSessionKey } from '../sessions/refresh-key.js';
import { sessionPolicy } from '../sessions/policy.js';
import type { OAuthClaims } from '../sessions/issue.js';
import { answerRefresh, type RefreshDecision } from './refresh-answer.js';
import { isBanned } from '../users/user-json.js';
import { actorOf, type ActingUser } from '../users/actor.js';
import { OAuthRefusal, refusalResponse } from './oauth-refusal.js';
import { SESSION_ENDED, checkSessionClient, clientOf, malformedToken, type Client } from './refresh-checks.js';
import type { Config } from '../config/types.js';
import type { AppContext } from '../context.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';

const notFound = () => apiError('refresh_token_not_found');
const banned = () => apiError('refresh_token_user_banned');
const alreadyUsed = () => apiError('refresh_token_already_used');
const notIssuedHere = () => apiError('refresh_token_not_issued_here');

/** Whether a refresh of this 12-character session's active token turns it into a v2 session. */
export function upgradesSession(config: Config, sessionId: string): boolean {
  const { refreshTokenAlgorithmVersion: version, refreshTokenUpgradePercentage: percentage } = config.security;
  return version === 2 && upgradesToV2(sessionId, percentage);
}

/** The refresh of a presented v2 token; `oauthClientId` as for refresh() in grants/refresh-token.ts. */
export async function refreshV2(req: ApiRequest, ctx: AppContext, presented: string, oauthClientId: string | null): Promise<ApiResponse> {
  const token = parseV2Token(presented);
  if (!token) throw malformedToken(oauthClientId);
  const found = await findV2Session(ctx.db, token.sessionId, sessionPolicy(ctx.config));
  // A session without a key is a 12-character session: a v2 token naming it was made up, as is one whose
  // signature its key does not give. Both are answered as an unknown token, as the original does.
  if (!found || found.v2_key === null || found.v2_counter === null) throw notFound();
  const { key, resealed } = openSessionKey(ctx.config, token.sessionId, found.v2_key);
  if (!v2SignatureMatches(token, key)) throw notFound();
  if (isBanned(found)) throw banned();
  if (found.session_ended) throw apiError(SESSION_ENDED[found.session_ended]);
  // The client last, as the original checks it.
  if (oauthClientId !== null) checkSessionClient(found.oauth_client_id, oauthClientId);
  if (oauthClientId === null && found.oauth_client_id) {
    return refusalResponse(new OAuthRefusal('invalid_client', 'Client authentication required for OAuth session'), req);
  }
  // The counter only grows, and a client learns a token only after the advance that made it committed:
  // a token ahead of this read is ahead of every later one too.
  if (BigInt(found.v2_counter) < token.counter) throw notIssuedHere();
  const oauth: OAuthClaims | null = oauthClientId === null ? null : { client_id: oauthClientId, scope: found.scopes ?? '' };
  const client = clientOf(req);
  const signing = { key, resealed };

  const current = BigInt(found.v2_counter) === token.counter;
  const decide = async (q: Queryable) =>
    (current ? await advanceAtOnce(q, token, found, signing, client) : null) ?? (await decideV2Locked(ctx, q, token, signing, client));
  return answerRefresh(ctx, req, decide, found.session_created_at, oauth);
}

type Signing = { key: Buffer; resealed: string | null };

const refreshedAudit = (client: Client, user: ActingUser): AuditEntry[] => [auditEntry(client.request, actorOf(user), 'token_refreshed')];
const ownerOf = (found: V2Session): ActingUser => ({
  id: found.user_id,
  email: found.email,
  phone: found.phone,
  raw_user_meta_data: found.raw_user_meta_data,
  is_sso_user: found.is_sso_user,
});

/** The usual path: the current token, advanced in one statement. Null when it did not advance (see advanceV2Counter). */
async function advanceAtOnce(
  q: Queryable,
  token: ParsedV2Token,
  found: V2Session,
  signing: Signing,
  client: Client,
): Promise<RefreshDecision | null> {
  return advance(q, token, signing, client, refreshedAudit(client, ownerOf(found)));
}

async function advance(
  q: Queryable,
  token: ParsedV2Token,
  signing: Signing,
  client: Client,
  audit: AuditEntry[],
): Promise<RefreshDecision | null> {
  const advanced = await advanceV2Counter(q, {
    sessionId: token.sessionId,
    counter: token.counter.toString(),
    client,
    audit,
    resealedKey: signing.resealed,
    now: new Date(),
  });
  if (!advanced) return null;
  const next = encodeV2Token(token.sessionId, BigInt(advanced.counter), signing.key);
  return { user: advanced.user, sessionId: token.sessionId, token: next, reads: advanced, outcome: 'rotated' };
}

/** Every case but the usual one, on the counter read under the session's lock. */
function decideV2Locked(ctx: AppContext, q: Queryable, token: ParsedV2Token, signing: Signing, client: Client): Promise<RefreshDecision> {
  const { sessionId } = token;
  return inTransaction(q, async (c): Promise<RefreshDecision> => {
    const locked = await lockV2Session(c, sessionId);
    if (!locked || locked.v2_counter === null) return notFound(); // logged out meanwhile
    if (isBanned(locked.user)) return banned();
    const current = BigInt(locked.v2_counter);
    const difference = current - token.counter;
    if (difference < 0n) return notIssuedHere();
    if (difference === 0n) return (await advance(c, token, signing, client, refreshedAudit(client, locked.user))) ?? notFound();
    const { refreshTokenReuseIntervalSeconds: interval, refreshTokenAllowReuse } = ctx.config.security;
    const concurrent = locked.since_refresh < interval;
    const failedToSave = difference === 1n;
    if (concurrent || failedToSave || refreshTokenAllowReuse) {
      await recordV2Reuse(c, sessionId, client, refreshedAudit(client, locked.user), signing.resealed);
      return { user: locked.user, sessionId, token: encodeV2Token(sessionId, current, signing.key), outcome: 'reused_parent' };
    }
    return refuseV2Reuse(ctx, c, sessionId, { behind: difference.toString() });
  });
}

/**
 * Reuse of a token of a session that has moved to v2, a v2 token or one of its earlier 12-character
 * tokens, under the session's lock: with rotation on the whole session is deleted, its key and counter with
 * it, so that no token of it refreshes any more and its access tokens are refused (revoking its
 * `refresh_tokens` rows alone would leave its v2 token refreshing); then 400 refresh_token_already_used
 * either way, committed: the session stays deleted.
 */
export async function refuseV2Reuse(ctx: AppContext, c: Queryable, sessionId: string, detail: object = {}): Promise<ApiError> {
  if (ctx.config.security.refreshTokenRotationEnabled) {
    await deleteSession(c, sessionId);
    ctx.log.warn({ sessionId, ...detail }, 'refresh token reuse detected: session logged out');
  }
  return alreadyUsed();
}

/**
 * A 12-character token of a session SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE moves to v2, under the
 * session's lock: the token is revoked and, instead of a 12-character child, the session gets a key (or
 * keeps its own) and the answer is its v2 token, counter 0 (audited token_revoked, token_refreshed, as a
 * rotation). The token revoked by that move, presented again, is answered with the session's current v2
 * token (the refresh recorded and audited) as long as a previous 12-character token would be answered with its child
 * (docs/tokens-and-sessions.md#refresh-rotation step 3); any other revoked token is a reuse, which ends the
 * session as a v2 token's reuse does once the session has a key (refuseV2Reuse), else is refused as for
 * 12-character sessions.
 */
export function upgradeToV2Locked(ctx: AppContext, q: Queryable, found: PresentedToken, client: Client): Promise<RefreshDecision> {
  const sessionId = found.session_id;
  return inTransaction(q, async (c): Promise<RefreshDecision> => {
    const locked = await lockV2Session(c, sessionId);
    if (!locked) return notFound();
    if (isBanned(locked.user)) return banned();
    const fresh = locked.v2_key === null ? newSessionKey(ctx.config, sessionId) : null;
    const audit = [
      auditEntry(client.request, actorOf(locked.user), 'token_revoked'),
      auditEntry(client.request, actorOf(locked.user), 'token_refreshed'),
    ];
    const upgraded = await upgradeToV2(c, { tokenId: found.id, sessionId, key: fresh?.stored ?? (locked.v2_key as string), client, audit });
    if (upgraded) {
      const key = fresh && upgraded.v2_key === fresh.stored ? fresh.key : openSessionKey(ctx.config, sessionId, upgraded.v2_key).key;
      return { user: locked.user, sessionId, token: encodeV2Token(sessionId, BigInt(upgraded.v2_counter), key), outcome: 'rotated' };
    }
    const state = await readTokenState(c, found.id, sessionId);
    if (!state) return notFound();
    const { refreshTokenRotationEnabled: rotation, refreshTokenReuseIntervalSeconds: interval } = ctx.config.security;
    const withinInterval = !(rotation && interval > 0 && state.revoked_for > interval);
    if (locked.v2_key !== null && locked.v2_counter !== null && state.active_id === null && withinInterval) {
      if (await isNewestToken(c, found.id, sessionId)) {
        const { key } = openSessionKey(ctx.config, sessionId, locked.v2_key);
        const token = encodeV2Token(sessionId, BigInt(locked.v2_counter), key);
        await recordRefresh(c, sessionId, client, refreshedAudit(client, locked.user));
        return { user: locked.user, sessionId, token, outcome: 'reused_parent' };
      }
    }
    // The session moved on to v2 (its key stays after the move): its reuse ends it as a v2 token's does.
    if (locked.v2_key !== null) return refuseV2Reuse(ctx, c, sessionId);
    if (rotation) await revokeSessionTokens(c, sessionId);
    return alreadyUsed();
  });
}

// The answer of a refresh (docs/tokens-and-sessions.md#refresh-rotation), shared by both token formats:
// what the rotation (or a v2 token's advance) decided, signed into a token response. With the custom access
// token hook or a KMS key the signature may fail, so the decision's writes and the signature run in one
// transaction, as the original's refresh runs them: a failure leaves the presented token as it was, and a
// later retry is a first refresh. Without them the decision writes on the pool (one statement on the usual
// path) and the signature follows.
import { ApiError } from '../errors.js';
import type { Queryable } from '../../db/pool.js';
import type { UserRow } from '../../db/users.js';
import { issuingTx, signsInTransaction, tokenResponse, type OAuthClaims, type ResponseReads } from '../sessions/issue.js';
import type { AppContext } from '../context.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';

/**
 * What a refresh decided: the token to answer, `reads` when the statement that wrote it also read the
 * response's AMR and identities, and how it was answered (auth_token_refreshes_total): a new token, or the
 * existing one of a previous token. A refusal (a reuse) is a value, so that what it wrote commits first.
 */
export type RefreshDecision =
  { user: UserRow; sessionId: string; token: string; reads?: ResponseReads; outcome: 'rotated' | 'reused_parent' } | ApiError;

/** `decide` on the pool or inside the signature's transaction, then the token response; a refusal thrown after its commit. */
export async function answerRefresh(
  ctx: AppContext,
  req: ApiRequest,
  decide: (q: Queryable) => Promise<RefreshDecision>,
  sessionCreatedAt: Date | undefined,
  oauth: OAuthClaims | null,
): Promise<ApiResponse> {
  const signed = async (q: Queryable) => {
    const decision = await decide(q);
    if (decision instanceof ApiError) return decision;
    // The session's creation time is read only under a session policy: SESSIONS_ALLOW_LOW_AAL needs it to cap exp.
    const session = { id: decision.sessionId, created_at: sessionCreatedAt };
    const body = await tokenResponse(ctx, q, decision.user, session, decision.token, decision.reads, req, undefined, oauth);
    return { body, outcome: decision.outcome };
  };
  const answered = signsInTransaction(ctx) ? await issuingTx(ctx, signed, req.signal) : await signed(ctx.db);
  if (answered instanceof ApiError) throw answered;
  ctx.metrics.refresh(answered.outcome);
  return { body: answered.body };
}

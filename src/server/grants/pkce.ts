// grant_type=pkce (docs/tokens-and-sessions.md#pkce-flow-state): exchanges the auth code of a finished PKCE flow, with the
// verifier whose challenge the flow stored, for a session. The flow is spent by the exchange.
import { apiError } from '../errors.js';
import { lockUserOfAuthCode } from '../../db/users.js';
import { deleteFlowState, lockFlowStateByAuthCode, type FlowStateRow } from '../../db/flow-state.js';
import { verifierMatches } from '../verify/pkce-challenge.js';
import { isBanned } from '../users/user-json.js';
import { issueSession, issuingTx } from '../sessions/issue.js';
import { grantSchema } from '../http/validate.js';
import { actorOf } from '../users/actor.js';
import type { Grant } from './grant.js';

const schema = grantSchema('auth_code', 'code_verifier');

export const pkce: Grant<ReturnType<typeof schema>> = {
  grantType: 'pkce',
  schema,
  async handle(req, ctx, body) {
    const authCode = body.auth_code ?? '';
    const verifier = body.code_verifier ?? '';
    if (!authCode || !verifier) throw apiError('pkce_grant_incomplete');
    const response = await issuingTx(
      ctx,
      async (c) => {
        // The user's row before the flow's, the order every writer of a user's rows takes them in (a user's
        // deletion locks the row and then cascades to its flows): the other way round, an exchange beside an
        // admin's deletion of its user deadlocked (a 500). The flow is read again under its lock.
        const owner = await lockUserOfAuthCode(c, authCode);
        const flow = await lockFlowStateByAuthCode(c, authCode);
        if (!flow) throw apiError('flow_state_not_found');
        if (isFlowExpired(flow, ctx.config.external.flowStateExpirySeconds)) {
          throw apiError('flow_state_expired');
        }
        if (
          !flow.code_challenge ||
          !flow.code_challenge_method ||
          !verifierMatches(flow.code_challenge, flow.code_challenge_method, verifier)
        ) {
          throw apiError('bad_code_verifier');
        }
        // A flow's user is set before its code is handed out and never changes, so the row locked above is its
        // user's (null: deleted, and the flow with it).
        const user = owner && owner.id === flow.user_id ? owner : null;
        if (!user) throw apiError('flow_state_not_found');
        if (isBanned(user)) throw apiError('user_banned_at_sign_in');
        await deleteFlowState(c, flow.id);
        const session = await issueSession(ctx, c, user, flow.authentication_method, req, {
          audit: { actor: actorOf(user), action: 'login', traits: { provider_type: flow.provider_type } },
        });
        if (flow.provider_access_token) session.provider_token = flow.provider_access_token;
        if (flow.provider_refresh_token) session.provider_refresh_token = flow.provider_refresh_token;
        return session;
      },
      req.signal,
    );
    return { body: response };
  },
};

/**
 * EXTERNAL_FLOW_STATE_EXPIRY_DURATION counts from the flow's creation, except for magic links, where it
 * counts from the moment the link was followed (the mail may sit unread for a while).
 */
function isFlowExpired(flow: FlowStateRow, lifetimeSeconds: number, now = Date.now()): boolean {
  const start = flow.authentication_method === 'magiclink' ? (flow.auth_code_issued_at ?? flow.created_at) : flow.created_at;
  return start.getTime() + lifetimeSeconds * 1000 < now;
}

// grant_type=pkce (REFERENCE §2.2, §4.6): exchanges the auth code of a finished PKCE flow, with the
// verifier whose challenge the flow stored, for a session. The flow is spent by the exchange.
import { ApiError, badRequest } from '../errors.js';
import { tx } from '../../db/pool.js';
import { lockUserById } from '../../db/users.js';
import { deleteFlowState, lockFlowStateByAuthCode, type FlowStateRow } from '../../db/flow-state.js';
import { verifierMatches } from '../verify/pkce-challenge.js';
import { isBanned } from '../users/user-json.js';
import { issueSession } from '../sessions/issue.js';
import { bodySchema, STRING } from '../http/validate.js';
import { actorOf } from '../users/actor.js';
import type { Grant } from './grant.js';

export const pkce: Grant = {
  grantType: 'pkce',
  schema: bodySchema({ auth_code: STRING, code_verifier: STRING }),
  async handle(req, ctx) {
    const body = req.body();
    const authCode = (body.auth_code as string | undefined) ?? '';
    const verifier = (body.code_verifier as string | undefined) ?? '';
    if (!authCode || !verifier) throw badRequest('invalid request: both auth code and code verifier should be non-empty');
    const response = await tx(ctx.db, async (c) => {
      const flow = await lockFlowStateByAuthCode(c, authCode);
      if (!flow) throw new ApiError(404, 'flow_state_not_found', 'invalid flow state, no valid flow state found');
      if (isFlowExpired(flow, ctx.config.external.flowStateExpirySeconds)) {
        throw new ApiError(422, 'flow_state_expired', 'invalid flow state, flow state has expired');
      }
      if (!flow.code_challenge || !flow.code_challenge_method || !verifierMatches(flow.code_challenge, flow.code_challenge_method, verifier)) {
        throw new ApiError(400, 'bad_code_verifier', 'code challenge does not match previously saved code verifier');
      }
      const user = flow.user_id ? await lockUserById(c, flow.user_id) : null;
      if (!user) throw new ApiError(404, 'flow_state_not_found', 'invalid flow state, no valid flow state found');
      if (isBanned(user)) throw new ApiError(400, 'user_banned', 'User is banned');
      await deleteFlowState(c, flow.id);
      const session = await issueSession(ctx, c, user, flow.authentication_method, req,
        { audit: { actor: actorOf(user), action: 'login', traits: { provider: flow.provider_type || 'email' } } });
      if (flow.provider_access_token) session.provider_token = flow.provider_access_token;
      if (flow.provider_refresh_token) session.provider_refresh_token = flow.provider_refresh_token;
      return session;
    }, req.signal);
    return { body: response };
  },
};

/**
 * EXTERNAL_FLOW_STATE_EXPIRY_DURATION counts from the flow's creation, except for magic links, where it
 * counts from the moment the link was followed (the mail may sit unread for a while).
 */
function isFlowExpired(flow: FlowStateRow, lifetimeSeconds: number, now = Date.now()): boolean {
  const start = flow.authentication_method === 'magiclink' ? flow.auth_code_issued_at ?? flow.created_at : flow.created_at;
  return start.getTime() + lifetimeSeconds * 1000 < now;
}

// The consent API the operator's consent page calls for the signed-in user (docs/oauth-server.md#consent):
// GET /oauth/authorizations/{authorization_id} and POST /oauth/authorizations/{authorization_id}/consent,
// as @supabase/auth-js's supabase.auth.oauth.getAuthorizationDetails / approveAuthorization /
// denyAuthorization call them. A browser's Origin, when sent, must be an allowed redirect target.
import { apiError } from '../errors.js';
import { findOAuthClient } from '../../db/oauth-clients.js';
import type { Authenticated } from '../auth/principal.js';
import type { ApiRequest, BodyCheck, GuardedHandler } from '../http/types.js';
import type { AppContext } from '../context.js';
import { clientSummary } from '../oauth-server/client-json.js';
import { decide, showAuthorization } from '../oauth-server/decide.js';
import { oauthJsonBody } from '../oauth-server/json-body.js';
import { fieldNames } from '../http/field-names.js';
import { withFields } from '../http/validate.js';

export const getAuthorization: GuardedHandler<Authenticated> = async (req, ctx, { user, session }) => {
  checkOrigin(req, ctx);
  const { row, redirectUrl } = await showAuthorization(ctx, req, req.params.authorization_id ?? '', user.id, session?.id ?? null);
  if (redirectUrl) return { body: { redirect_url: redirectUrl } };
  const client = await findOAuthClient(ctx.db, row.client_id);
  if (!client) throw apiError('oauth_authorization_not_found');
  const user_ = user.email ? { id: user.id, email: user.email } : { id: user.id };
  return {
    body: {
      authorization_id: row.authorization_id,
      redirect_uri: row.redirect_uri,
      client: clientSummary(client),
      user: user_,
      scope: row.scope,
    },
  };
};

interface ConsentBody {
  action: string;
}

/** The consent body: an action of the wrong JSON type is the original's "invalid JSON body". */
export const consentBody: BodyCheck<ConsentBody> = withFields(fieldNames(['action']), (body) => {
  const { action } = body;
  if (action !== undefined && action !== null && typeof action !== 'string') throw apiError('oauth_consent_bad_json');
  return { action: action ?? '' };
});

export const postConsent: GuardedHandler<Authenticated, ConsentBody> = async (req, ctx, { user, session }) => {
  checkOrigin(req, ctx);
  const { action } = oauthJsonBody(req, 'oauth_consent_bad_json');
  if (action !== 'approve' && action !== 'deny') throw apiError('oauth_consent_action');
  return { body: { redirect_url: await decide(ctx, req, req.params.authorization_id ?? '', user.id, session?.id ?? null, action) } };
};

/** The consent page is on an allowed site: a browser's Origin that is not an allowed target is refused. */
function checkOrigin(req: ApiRequest<unknown>, ctx: AppContext): void {
  const origin = req.headers.origin;
  if (origin && ctx.redirect(origin) === null) throw apiError('oauth_unauthorized_origin');
}

// OAUTH_SERVER_ENABLED gates every OAuth 2.1 server route, as the original's middleware does: off, they
// answer 404 feature_disabled (docs/oauth-server.md#settings); before anything else, or after the guard
// where the original checks the bearer first.
import { apiError } from '../errors.js';
import type { AppContext } from '../context.js';
import type { GuardedHandler } from '../http/types.js';

export function oauthServerEnabled(ctx: AppContext): void {
  if (!ctx.config.oauthServer.enabled) throw apiError('oauth_server_disabled');
}

/**
 * The switch checked after the route's guard, for the admin client routes and /user/oauth/grants: the
 * original checks the bearer there first, so a caller without one gets 401 whether the server is on or not.
 */
export const afterGuard =
  <P, B>(handler: GuardedHandler<P, B>): GuardedHandler<P, B> =>
  (req, ctx, principal) => {
    oauthServerEnabled(ctx);
    return handler(req, ctx, principal);
  };

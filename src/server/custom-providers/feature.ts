// CUSTOM_OAUTH_ENABLED gates /admin/custom-providers after the admin guard, as the original's sub-router
// (under the admin one) does: a caller without an admin token gets 401/403 whether the switch is on or not.
// /authorize refuses custom:<id> providers on its own when the switch is off (custom-providers/lookup.ts).
import { apiError } from '../errors.js';
import type { AppContext } from '../context.js';
import type { GuardedHandler } from '../http/types.js';

export function customOAuthEnabled(ctx: AppContext): void {
  if (!ctx.config.customOAuth.enabled) throw apiError('custom_oauth_disabled');
}

/** The handler, run only while CUSTOM_OAUTH_ENABLED is on; checked once the route's guard has passed. */
export const whenCustomOAuthEnabled =
  <P, B>(handler: GuardedHandler<P, B>): GuardedHandler<P, B> =>
  (req, ctx, principal) => {
    customOAuthEnabled(ctx);
    return handler(req, ctx, principal);
  };

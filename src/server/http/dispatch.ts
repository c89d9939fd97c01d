// Makes a route of the table runnable, once at start: the feature switch, then the per-client limit, then the
// captcha (or the captcha, then the limit, where the route says captchaFirst, as the original's /signup and
// /token), then the guard, then the handler with the principal the guard found. A user's route (PUT /user,
// a factor's challenge and verify) checks the token before its limit, as the original nests those limits
// inside its sign-in check: a caller without a valid token is answered 401/403 and spends nothing of the
// client's allowance.
import { authenticate, authenticateSigningOut, authenticateWithIdentities } from '../auth/bearer.js';
import { requireAdmin } from '../auth/admin.js';
import { limited, takeClientLimit } from '../limits/per-client.js';
import { captchaChecked } from '../auth/captcha-guard.js';
import type { ApiRequest, BucketChoice, GuardedHandler, Route, Run } from './types.js';
import type { AppContext } from '../context.js';
import type { ClientBucket } from '../auth/principal.js';
import { withAfterUserCreated } from '../hooks/after-user-created.js';

export function compileRoute(route: Route): Run {
  // Innermost: the after-user-created hook runs once the handler (and its transaction) is done.
  let run = withAfterUserCreated(guarded(route));
  const captcha = route.captcha;
  const withCaptcha = (inner: Run) => (captcha ? captchaChecked(inner, captcha === true ? undefined : captcha) : inner);
  if (!route.captchaFirst) run = withCaptcha(run);
  if (route.limit && !limitsAfterGuard(route)) run = limited(route.limit, run);
  if (route.captchaFirst) run = withCaptcha(run);
  if (route.feature) run = gated(route.feature, run);
  return run;
}

/** A switched-off feature answers its own error before the limit, the captcha or the bearer is looked at. */
function gated(feature: NonNullable<Route['feature']>, run: Run): Run {
  return async (req, ctx) => {
    feature(ctx);
    return run(req, ctx);
  };
}

const limitsAfterGuard = (route: Route) =>
  route.guard === 'user' || route.guard === 'user+identities' || route.guard === 'user-signing-out';

function guarded(route: Route): Run {
  const limit = limitsAfterGuard(route) ? route.limit : undefined;
  switch (route.guard) {
    case 'none':
      return route.handler as Run;
    case 'user':
      return withPrincipal(authenticate, route.handler, limit);
    case 'user+identities':
      return withPrincipal(authenticateWithIdentities, route.handler, limit);
    case 'user-signing-out':
      return withPrincipal(authenticateSigningOut, route.handler, limit);
    case 'admin':
      return withPrincipal(requireAdmin, route.handler);
  }
}

/** The handler, given the principal `identify` finds; then, for a user's route, its per-client limit is taken. */
function withPrincipal<P>(
  identify: (req: ApiRequest, ctx: AppContext) => Promise<P>,
  handler: GuardedHandler<P, any>, // eslint-disable-line @typescript-eslint/no-explicit-any -- the route's B, checked in its module
  limit?: ClientBucket | BucketChoice,
): Run {
  if (!limit) return async (req, ctx) => handler(req, ctx, await identify(req, ctx));
  return async (req, ctx) => {
    const principal = await identify(req, ctx);
    await takeClientLimit(limit, req, ctx);
    return handler(req, ctx, principal);
  };
}

// Makes a route of the table runnable, once at start: the feature switch, then the per-client limit, then the
// captcha (or the captcha, then the limit, where the route says captchaFirst, as the original's /signup and
// /token), then the guard, then the handler with the principal the guard found. A user's route (PUT /user,
// a factor's challenge and verify) checks the token before its limit, as the original nests those limits
// inside its sign-in check: a caller without a valid token is answered 401/403 and spends nothing of the
// client's allowance.
import { authenticate, authenticateWithIdentities } from '../auth/bearer.js';
import { requireAdmin } from '../auth/admin.js';
import { limited, takeClientLimit } from '../limits/per-client.js';
import { captchaChecked } from '../auth/captcha-guard.js';
import type { Route, Run } from './types.js';
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

const limitsAfterGuard = (route: Route) => route.guard === 'user' || route.guard === 'user+identities';

function guarded(route: Route): Run {
  const limit = limitsAfterGuard(route) ? route.limit : undefined;
  switch (route.guard) {
    case 'none':
      return route.handler as Run;
    case 'user': {
      const handler = route.handler;
      if (!limit) return async (req, ctx) => handler(req, ctx, await authenticate(req, ctx));
      return async (req, ctx) => {
        const principal = await authenticate(req, ctx);
        await takeClientLimit(limit, req, ctx);
        return handler(req, ctx, principal);
      };
    }
    case 'user+identities': {
      const handler = route.handler;
      if (!limit) return async (req, ctx) => handler(req, ctx, await authenticateWithIdentities(req, ctx));
      return async (req, ctx) => {
        const principal = await authenticateWithIdentities(req, ctx);
        await takeClientLimit(limit, req, ctx);
        return handler(req, ctx, principal);
      };
    }
    case 'admin': {
      const handler = route.handler;
      return async (req, ctx) => handler(req, ctx, await requireAdmin(req, ctx));
    }
  }
}

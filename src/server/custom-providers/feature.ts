// CUSTOM_OAUTH_ENABLED gates /admin/custom-providers before anything else, as the original's middleware
// does; /authorize refuses custom:<id> providers on its own when the switch is off (custom-providers/lookup.ts).
import { apiError } from '../errors.js';
import type { AppContext } from '../context.js';

export function customOAuthEnabled(ctx: AppContext): void {
  if (!ctx.config.customOAuth.enabled) throw apiError('custom_oauth_disabled');
}

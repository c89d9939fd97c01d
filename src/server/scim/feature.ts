// EXPERIMENTAL_SCIM_ENABLED owns every path under /scim/v2, as the original's middleware on its SCIM router
// does: off (the default), any path and any method there answers 404 feature_disabled, in the service's
// error shape, so the prefix looks like a disabled feature rather than a SCIM server.
import { apiError } from '../errors.js';
import type { AppContext } from '../context.js';

export function scimEnabled(ctx: AppContext): void {
  if (!ctx.config.scim.enabled) throw apiError('scim_disabled');
}

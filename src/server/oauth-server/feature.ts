// OAUTH_SERVER_ENABLED gates every OAuth 2.1 server route before anything else, as the original's
// middleware does: off, they answer 404 feature_disabled (docs/oauth-server.md#settings).
import { apiError } from '../errors.js';
import type { AppContext } from '../context.js';

export function oauthServerEnabled(ctx: AppContext): void {
  if (!ctx.config.oauthServer.enabled) throw apiError('oauth_server_disabled');
}

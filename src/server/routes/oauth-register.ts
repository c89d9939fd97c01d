// POST /oauth/clients/register (docs/oauth-server.md#clients): an app registers itself, when
// OAUTH_SERVER_ALLOW_DYNAMIC_REGISTRATION is on; rate-limited per client (RATE_LIMIT_OAUTH_DYNAMIC_CLIENT_REGISTER).
import { apiError } from '../errors.js';
import type { Handler } from '../http/types.js';
import { clientJson } from '../oauth-server/client-json.js';
import { registerClient } from '../oauth-server/register.js';
import { oauthJsonBody } from '../oauth-server/json-body.js';
import type { RegisterParams } from '../oauth-server/client-params.js';

export const registerOAuthClient: Handler<RegisterParams> = async (req, ctx) => {
  if (!ctx.config.oauthServer.allowDynamicRegistration) throw apiError('oauth_dynamic_registration_disabled');
  const { client, secret } = await registerClient(ctx, oauthJsonBody(req), 'dynamic');
  return { status: 201, body: clientJson(client, secret) };
};

// GET /authorize and GET|POST /callback (docs/api.md#get-authorize, docs/oauth.md#the-flow).
import { ApiError } from '../errors.js';
import { DiscoveryError, ProviderError } from '../providers/outbound.js';
import { apiError } from '../errors.js';
import { startFlow } from '../oauth/start.js';
import { handleCallback } from '../oauth/callback.js';
import type { Handler } from '../http/types.js';

/**
 * Always a 302 to the provider, as the original: skip_http_redirect is honoured by
 * GET /user/identities/authorize only (auth-js's skipBrowserRedirect builds the /authorize URL itself).
 */
export const authorize: Handler = async (req, ctx) => {
  const url = await providerUrl(() => startFlow(req, ctx, null));
  return { status: 302, headers: { Location: url } };
};

export const callback: Handler = (req, ctx) => handleCallback(req, ctx);

/**
 * A provider whose discovery document cannot be had is, as in the original, one it cannot build: 400
 * validation_failed "Unsupported provider: …". Any other failure to reach it for its URL is a 500 naming it.
 */
export async function providerUrl(start: () => Promise<string>): Promise<string> {
  try {
    return await start();
  } catch (err) {
    if (err instanceof ApiError || !(err instanceof ProviderError)) throw err;
    if (err instanceof DiscoveryError) throw apiError('provider_unsupported', `Unsupported provider: ${err.message}`);
    throw apiError('oauth_profile_failed', `Error reaching the external provider: ${err.message}`);
  }
}

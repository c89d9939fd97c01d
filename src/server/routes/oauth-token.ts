// POST /oauth/token (docs/oauth-server.md#token-endpoint): the client authenticates (client-auth.ts),
// then the grant it asks for, if it registered it: authorization_code or refresh_token. Grant refusals
// are RFC 6749 bodies {error, error_description} with status 400, as the original answers them.
import type { Handler } from '../http/types.js';
import { OAuthRefusal, refusalResponse } from '../grants/oauth-refusal.js';
import { authenticateClient } from '../oauth-server/client-auth.js';
import { splitList } from '../oauth-server/client-json.js';
import { exchangeCode } from '../oauth-server/code-grant.js';
import { refreshForClient } from '../oauth-server/refresh-grant.js';
import { readTokenParams, TOKEN_PARAMS, UnreadableParams, type TokenParams } from '../oauth-server/token-params.js';
import { apiError } from '../errors.js';
import type { ApiRequest } from '../http/types.js';

const NO_PARAMS = Object.fromEntries(TOKEN_PARAMS.map((n) => [n, ''])) as TokenParams;

/**
 * A JSON body that does not parse, or a malformed form, fails the client's authentication first (the
 * original's middleware reads the credentials from it), unless the credentials came in the Authorization
 * header or could be read all the same; then, after the client authenticates, it is the grant's
 * invalid_request (`refusal`).
 */
function readParams(req: ApiRequest): { params: TokenParams; refusal?: OAuthRefusal } {
  try {
    return { params: readTokenParams(req) };
  } catch (err) {
    if (!(err instanceof UnreadableParams)) throw err;
    if (err.credentials) return { params: err.credentials, refusal: err };
    if (!(req.headers.authorization ?? '').startsWith('Basic ')) {
      throw apiError('oauth_client_credentials', `Invalid client credentials: ${err.authReason}`);
    }
    return { params: NO_PARAMS, refusal: err };
  }
}

export const oauthToken: Handler = async (req, ctx) => {
  try {
    const { params, refusal } = readParams(req);
    const client = await authenticateClient(req, ctx, params);
    if (refusal) throw refusal;
    const grantType = params.grant_type;
    if (!grantType) throw new OAuthRefusal('invalid_request', 'grant_type is required');
    // Basic credentials with an empty client id authenticate no client, as in the original
    if (!client) throw new OAuthRefusal('invalid_client', 'Client authentication required');
    if (!splitList(client.grant_types).includes(grantType)) {
      throw new OAuthRefusal('unsupported_grant_type', `Client is not allowed to use grant type: ${grantType}`);
    }
    const body =
      grantType === 'authorization_code' ? await exchangeCode(ctx, req, client, params) : await refreshForClient(ctx, req, client, params);
    return { body, headers: { 'Cache-Control': 'no-store' } };
  } catch (err) {
    if (err instanceof OAuthRefusal) return refusalResponse(err, req);
    throw err;
  }
};

// GET /oauth/authorize (docs/oauth-server.md#authorization): an app sends the user here. The client and
// its redirect URI are checked first and answered as JSON errors (a redirect URI not yet trusted is never
// redirected to); every later problem goes back to the app as error=invalid_request. A valid request is
// stored pending and the user sent to the operator's consent page with its authorization_id.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { apiError } from '../errors.js';
import { databaseFault } from '../../db/faults.js';
import { findOAuthClient } from '../../db/oauth-clients.js';
import { insertAuthorization } from '../../db/oauth-authorizations.js';
import { canonicalUuid } from '../uuid-text.js';
import type { Handler } from '../http/types.js';
import { splitList } from '../oauth-server/client-json.js';
import { readAuthorizeParams } from '../oauth-server/authorize-params.js';
import { errorRedirect, found } from '../oauth-server/redirects.js';
import { signsIdTokens } from './oauth-server-metadata.js';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export const oauthAuthorize: Handler = async (req, ctx) => {
  const clientId = req.query.get('client_id') ?? '';
  const redirectUri = req.query.get('redirect_uri') ?? '';
  if (!clientId) throw apiError('oauth_client_id_required');
  if (!redirectUri) throw apiError('oauth_redirect_uri_required');
  // any spelling the original's UUID reading takes ({…}, 32 bare digits, urn:uuid:…) names the client
  const id = canonicalUuid(clientId);
  if (!id) throw apiError('oauth_authorize_client_format');
  const client = await findOAuthClient(ctx.db, id);
  if (!client) throw apiError('oauth_authorize_client_unknown');
  if (!splitList(client.redirect_uris).includes(redirectUri)) throw apiError('oauth_authorize_redirect_uri');

  const state = req.query.get('state');
  const params = readAuthorizeParams(req.query, ctx, signsIdTokens(ctx));
  if (typeof params === 'string') return found(errorRedirect(redirectUri, 'invalid_request', params, state));
  const { authorizationPath } = ctx.config.oauthServer;
  if (!authorizationPath) return found(errorRedirect(redirectUri, 'server_error', 'oauth authorization path not configured', state));

  const authorizationId = randomAlphanumeric(32);
  try {
    await insertAuthorization(ctx.db, {
      authorizationId,
      clientId: client.id,
      redirectUri,
      ...params,
      ttlSeconds: ctx.config.oauthServer.authorizationTtlSeconds,
    });
  } catch (err) {
    // A request the table refuses (a registered redirect URI longer than the column allows) goes back to the
    // app as server_error, as the original sends it, never the database's words to the browser. A lost or
    // saturated database stays the service's 503.
    if (!(err instanceof pg.DatabaseError) || databaseFault(err)) throw err;
    ctx.log.warn({ err: err.message }, 'OAuth authorization not stored');
    return found(errorRedirect(redirectUri, 'server_error', 'error creating authorization', state));
  }
  const consentPage = ctx.config.siteUrl.replace(/\/+$/, '') + (authorizationPath.startsWith('/') ? '' : '/') + authorizationPath;
  return found(`${consentPage}?authorization_id=${authorizationId}`);
};

/** 32 characters from [A-Za-z0-9], unbiased (bytes of 248 and above are skipped). */
function randomAlphanumeric(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHANUMERIC[byte % 62];
    }
  }
  return out;
}

// Registering a client (docs/oauth-server.md#clients): by an operator (manual) or by the app itself
// (dynamic). A confidential client gets a secret, answered once and stored hashed; a public one none.
import { ApiError, apiError } from '../errors.js';
import { insertOAuthClient, type OAuthClientRow } from '../../db/oauth-clients.js';
import { newUuid } from '../crypto/tokens.js';
import type { AppContext } from '../context.js';
import { checkRegistration, type RegisterParams } from './client-params.js';
import { hashClientSecret, newClientSecret } from './client-secret.js';

export async function registerClient(
  ctx: AppContext,
  params: RegisterParams,
  registrationType: 'manual' | 'dynamic',
): Promise<{ client: OAuthClientRow; secret?: string }> {
  const { clientType, authMethod } = wrapped(() => checkRegistration(params));
  const secret = clientType === 'confidential' ? newClientSecret() : undefined;
  const client = await insertOAuthClient(ctx.db, {
    id: newUuid(),
    client_secret_hash: secret ? hashClientSecret(secret) : null,
    registration_type: registrationType,
    client_type: clientType,
    token_endpoint_auth_method: authMethod,
    redirect_uris: params.redirect_uris.join(','),
    grant_types: (params.grant_types.length ? params.grant_types : ['authorization_code', 'refresh_token']).join(','),
    client_name: params.client_name || null,
    client_uri: params.client_uri || null,
    logo_uri: params.logo_uri || null,
  });
  return { client, secret };
}

/** The original wraps a registration's validation error once more, so its message reads "400: <reason>". */
function wrapped<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof ApiError) throw apiError('oauth_client_invalid', `${err.status}: ${err.message}`);
    throw err;
  }
}

// Client authentication at POST /oauth/token (docs/oauth-server.md#token-endpoint): HTTP Basic
// (client_secret_basic), client_id and client_secret in the body (client_secret_post), or client_id
// alone (none, public clients, which PKCE protects). The method used must be the one the client
// registered. Failures are the service's 400 invalid_credentials errors, with the original's messages.
import { apiError } from '../errors.js';
import { findOAuthClient, type OAuthClientRow } from '../../db/oauth-clients.js';
import { canonicalUuid } from '../uuid-text.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { clientSecretMatches } from './client-secret.js';
import type { TokenParams } from './token-params.js';

const refused = (reason: string) => apiError('oauth_client_credentials', `Invalid client credentials: ${reason}`);
const plain = (msg: string) => apiError('oauth_client_credentials', msg);

interface Credentials {
  clientId: string;
  secret: string;
  method: 'client_secret_basic' | 'client_secret_post' | 'none';
}

function credentialsOf(req: ApiRequest<unknown>, params: TokenParams): Credentials {
  const header = req.headers.authorization ?? '';
  if (header.startsWith('Basic ')) {
    const encoded = header.slice(6);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(encoded) || encoded.length % 4 !== 0) throw refused('invalid basic auth encoding');
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw refused('invalid basic auth format');
    // RFC 6749 §2.3.1: both parts are form-urlencoded first (openid-client encodes even '-'). Ours: the
    // original reads them raw; ids and secrets hold no '%' or '+', so decoding changes none it accepts.
    const clientId = formDecode(decoded.slice(0, colon));
    const secret = formDecode(decoded.slice(colon + 1));
    if (clientId === null || secret === null) throw refused('invalid basic auth encoding');
    return { clientId, secret, method: 'client_secret_basic' };
  }
  if (!params.client_id) throw refused('client_id is required');
  return { clientId: params.client_id, secret: params.client_secret, method: params.client_secret ? 'client_secret_post' : 'none' };
}

function formDecode(part: string): string | null {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}

/** The refusal of a client that is not (or no longer) live, as authenticateClient answers it. */
export const clientGone = () => plain('Invalid client credentials');

/** The authenticated client; null for HTTP Basic credentials with an empty client id, which the original lets through unauthenticated. */
export async function authenticateClient(req: ApiRequest<unknown>, ctx: AppContext, params: TokenParams): Promise<OAuthClientRow | null> {
  const { clientId, secret, method } = credentialsOf(req, params);
  if (clientId === '') return null;
  // any spelling the original's UUID reading takes names the client
  const id = canonicalUuid(clientId);
  if (!id) throw plain('Invalid client_id format');
  const client = await findOAuthClient(ctx.db, id);
  if (!client) throw clientGone();
  if (method !== client.token_endpoint_auth_method) {
    throw plain(`invalid authentication method: client is registered for '${client.token_endpoint_auth_method}' but '${method}' was used`);
  }
  if (client.client_type === 'public') {
    if (secret) throw plain('public clients must not provide client_secret');
    return client;
  }
  if (!secret) throw plain('confidential clients must provide client_secret');
  if (!clientSecretMatches(secret, client.client_secret_hash)) throw plain('invalid client credentials');
  return client;
}

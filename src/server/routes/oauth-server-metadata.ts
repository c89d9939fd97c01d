// GET /.well-known/openid-configuration and /.well-known/oauth-authorization-server (docs/oauth-server.md#discovery):
// one document for both, as the original serves, describing what is built: the endpoints, JWT_KEYS'
// JWKS, the grants, client authentication methods and PKCE methods, and the scopes. openid is offered
// only with an asymmetric signing key, since ID tokens are never signed with HS256 (as in the original).
// The openid-configuration path answers even with the server off, as the original's does.
import type { Handler } from '../http/types.js';
import type { AppContext } from '../context.js';
import { endpointBase, issuerOf } from '../oauth-server/issuer.js';
import { SUPPORTED_SCOPES } from '../oauth-server/scopes.js';
import { goJsonText } from '../http/go-json-text.js';

const HEADERS = { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=600' };

const CLAIMS = [
  'sub',
  'aud',
  'iss',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'email',
  'email_verified',
  'phone_number',
  'phone_number_verified',
  'name',
  'picture',
  'preferred_username',
  'updated_at',
];

/** True when ID tokens can be signed: the signing key is asymmetric. */
export const signsIdTokens = (ctx: AppContext): boolean => ctx.jwt.algorithm !== 'HS256';

export const openidConfiguration: Handler = (_req, ctx) => {
  const base = endpointBase(ctx.config);
  const idTokens = signsIdTokens(ctx);
  const doc: Record<string, unknown> = {
    issuer: issuerOf(ctx.config),
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    jwks_uri: `${base}/.well-known/jwks.json`,
    userinfo_endpoint: `${base}/oauth/userinfo`,
  };
  if (ctx.config.oauthServer.enabled && ctx.config.oauthServer.allowDynamicRegistration) {
    doc.registration_endpoint = `${base}/oauth/clients/register`;
  }
  doc.scopes_supported = SUPPORTED_SCOPES.filter((s) => idTokens || s !== 'openid');
  doc.response_types_supported = ['code'];
  doc.response_modes_supported = ['query'];
  doc.grant_types_supported = ['authorization_code', 'refresh_token'];
  doc.subject_types_supported = ['public'];
  doc.id_token_signing_alg_values_supported = idTokens ? [ctx.jwt.algorithm] : [];
  doc.token_endpoint_auth_methods_supported = ['client_secret_basic', 'client_secret_post', 'none'];
  doc.claims_supported = CLAIMS;
  doc.code_challenge_methods_supported = ['S256', 'plain'];
  return { headers: HEADERS, body: goJsonText(doc) };
};

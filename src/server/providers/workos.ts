// WorkOS SSO: the authorization request names the connection, organization or OAuth provider to use
// (the client's `workos_provider` is forwarded as WorkOS's `provider`), and the profile arrives inside
// the token answer. WorkOS vouches for the addresses of its connections, so the one given is verified.
import { baseUrl } from './base-url.js';
import { at, claims, requireSubject, text } from './json-fields.js';
import { exchangeAuthorizationCode } from './token-exchange.js';
import type { ExternalProfile, OAuth2Provider, ProviderRuntime } from './types.js';

const api = (rt: ProviderRuntime) => baseUrl(rt.config.url, 'api.workos.com');
/** WorkOS authorization parameters a client may choose, passed through unchanged. */
const PASSED_THROUGH = ['connection', 'organization', 'login_hint', 'domain_hint'];

export const workos: OAuth2Provider = {
  protocol: 'oauth2',
  name: 'workos',
  defaultScopes: [],
  scopeSeparator: ' ',
  // As the original: /authorize's `scopes` are not asked for.
  scopesFor: () => [],
  pkceToProvider: false,
  authorizationEndpoint: (rt) => Promise.resolve(`${api(rt)}/sso/authorize`),
  authorizationParams(_rt, query) {
    const params: Record<string, string> = {};
    for (const key of PASSED_THROUGH) {
      const value = query.get(key);
      if (value) params[key] = value;
    }
    const provider = query.get('workos_provider');
    if (provider) params.provider = provider;
    return params;
  },
  exchangeCode: (rt, code) => exchangeAuthorizationCode(rt, { tokenUrl: `${api(rt)}/sso/token`, code, credentials: 'body' }),
  // No user API: the profile came with the token (a then(), so a refusal is a rejection, not a throw).
  fetchProfile: (rt, tokens) => Promise.resolve().then(() => profileFrom(rt, tokens.response)),
};

function profileFrom(rt: ProviderRuntime, response: Record<string, unknown>): ExternalProfile {
  const profile = at(response, 'profile');
  const subject = requireSubject(text(profile, 'id'), 'workos');
  const email = text(profile, 'email');
  const name = `${text(profile, 'first_name')} ${text(profile, 'last_name')}`.trim();
  return {
    subject,
    emails: email ? [{ email, verified: true, primary: true }] : [],
    claims: claims({
      iss: api(rt),
      sub: subject,
      name,
      custom_claims: { connection_id: text(profile, 'connection_id'), organization_id: text(profile, 'organization_id') },
      full_name: name,
      provider_id: subject,
    }),
  };
}

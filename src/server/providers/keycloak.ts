// Keycloak: the realm's OpenID Connect endpoints under EXTERNAL_KEYCLOAK_URL (the realm URL, required;
// providers/configured.ts treats keycloak without it as disabled).
// The code flow follows the original: it asks for `profile email` (no `openid`), reads the person from the
// userinfo endpoint alone and verifies no id_token, so no issuer is compared either. That matters where the
// configured URL is not the realm's public issuer (an internal host name, a proxy): the original signs
// such users in, and so must we. The id_token grant still checks its tokens against the realm (oidc.ts).
import { oidcProvider, standardProfile } from './oidc.js';
import { baseUrl } from './code-exchange.js';
import { claims, requireSubject, text } from './json-fields.js';
import type { ExternalProfile, ProviderRuntime } from './types.js';
import { getUserJson } from './user-api.js';

const realm = (rt: ProviderRuntime) => baseUrl(rt.config.url, '');

/** The claims the original keeps at the top level; every other userinfo claim goes under custom_claims. */
const TOP_LEVEL = new Set(['name', 'sub', 'email', 'email_verified']);

/**
 * identity_data from Keycloak's userinfo answer, laid out as the original stores it: iss (the configured
 * realm URL), sub, name, email, email_verified, the deprecated full_name and provider_id, and the rest
 * (preferred_username, given_name, realm roles, mappers' claims...) under custom_claims. Only a JSON
 * `true` verifies the address, as the original reads the claim.
 */
export function keycloakProfile(issuer: string, info: Record<string, unknown>): ExternalProfile {
  const subject = requireSubject(text(info, 'sub'), 'keycloak');
  const email = text(info, 'email');
  const verified = info.email_verified === true;
  const name = text(info, 'name');
  const custom = Object.fromEntries(Object.entries(info).filter(([k]) => !TOP_LEVEL.has(k)));
  return {
    subject,
    emails: email ? [{ email, verified, primary: true }] : [],
    claims: claims({
      iss: issuer,
      sub: subject,
      name,
      email,
      email_verified: email ? verified : undefined,
      custom_claims: Object.keys(custom).length ? custom : undefined,
      full_name: name,
      provider_id: subject,
    }),
  };
}

const oidc = oidcProvider({
  name: 'keycloak',
  defaultScopes: ['profile', 'email'],
  endpoints(rt) {
    return Promise.resolve({
      issuer: realm(rt),
      authorization: `${realm(rt)}/protocol/openid-connect/auth`,
      token: `${realm(rt)}/protocol/openid-connect/token`,
      userinfo: `${realm(rt)}/protocol/openid-connect/userinfo`,
      jwksUri: `${realm(rt)}/protocol/openid-connect/certs`,
    });
  },
  // At the id_token grant the original reads a Keycloak token's standard claims only.
  profile: standardProfile,
});

export const keycloak: typeof oidc = {
  ...oidc,
  async fetchProfile(rt, tokens) {
    const info = await getUserJson(rt, (await oidc.endpoints(rt)).userinfo!, tokens.accessToken);
    return keycloakProfile(realm(rt), info);
  },
};

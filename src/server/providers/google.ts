// Google: OpenID Connect by discovery of https://accounts.google.com (REFERENCE §9.2). The original ignores
// EXTERNAL_GOOGLE_URL; here it replaces the issuer, so a test can stand in a local OIDC provider.
import { discoveredEndpoints, oidcProvider } from './oidc.js';

const ISSUER = 'https://accounts.google.com';

export const google = oidcProvider({
  name: 'google',
  // The original's scopes. Google issues an id_token for the identity scopes `email` and `profile` without
  // `openid`; an answer without one is read from the discovery document's userinfo endpoint instead.
  defaultScopes: ['email', 'profile'],
  async endpoints(rt) {
    const found = await discoveredEndpoints(rt, rt.config.url || ISSUER);
    // Google's id_tokens name their issuer with or without the scheme.
    return rt.config.url ? found : { ...found, issuer: [ISSUER, 'accounts.google.com'] };
  },
});

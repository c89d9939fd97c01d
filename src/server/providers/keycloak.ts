// Keycloak: the realm's OpenID Connect endpoints under EXTERNAL_KEYCLOAK_URL (the realm URL, required;
// providers/configured.ts treats keycloak without it as disabled). The profile comes from userinfo, as
// the original reads it; `openid` is requested too so the token answer carries a verifiable id_token.
import { oidcProvider } from './oidc.js';
import { baseUrl } from './code-exchange.js';

export const keycloak = oidcProvider({
  name: 'keycloak',
  defaultScopes: ['openid', 'profile', 'email'],
  endpoints(rt) {
    const realm = baseUrl(rt.config.url, '');
    return Promise.resolve({
      issuer: realm,
      authorization: `${realm}/protocol/openid-connect/auth`,
      token: `${realm}/protocol/openid-connect/token`,
      userinfo: `${realm}/protocol/openid-connect/userinfo`,
      jwksUri: `${realm}/protocol/openid-connect/certs`,
    });
  },
  alwaysUserinfo: true,
});

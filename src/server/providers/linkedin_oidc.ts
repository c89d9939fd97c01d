// LinkedIn's OpenID Connect product: discovery of the issuer https://www.linkedin.com/oauth
// (EXTERNAL_LINKEDIN_OIDC_URL replaces it for tests).
import { discoveredEndpoints, oidcProvider } from './oidc.js';

export const linkedinOidc = oidcProvider({
  name: 'linkedin_oidc',
  defaultScopes: ['openid', 'email', 'profile'],
  endpoints: (rt) => discoveredEndpoints(rt, rt.config.url || 'https://www.linkedin.com/oauth'),
});

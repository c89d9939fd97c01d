// Vercel Marketplace: authorization and token endpoints on api.vercel.com, the id_token issued by
// https://marketplace.vercel.com (its keys found by discovery). EXTERNAL_VERCEL_MARKETPLACE_URL replaces both
// hosts for tests.
import { discoveredEndpoints, oidcProvider } from './oidc.js';
import { baseUrl } from './code-exchange.js';

export const vercelMarketplace = oidcProvider({
  name: 'vercel_marketplace',
  defaultScopes: [],
  async endpoints(rt) {
    const issuer = baseUrl(rt.config.url, 'https://marketplace.vercel.com');
    const api = baseUrl(rt.config.url, 'https://api.vercel.com');
    const found = await discoveredEndpoints(rt, issuer);
    return { ...found, authorization: `${api}/oauth/v2/authorization`, token: `${api}/oauth/v2/accessToken` };
  },
});

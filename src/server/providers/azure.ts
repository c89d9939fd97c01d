// Microsoft Entra ID (Azure): the v2.0 endpoints under a tenant base, default
// https://login.microsoftonline.com/common; EXTERNAL_AZURE_URL is the tenant base (REFERENCE §9.2).
// Which issuers a token may name, and whose keys check it, is azure-issuers.ts.
import { oidcProvider } from './oidc.js';
import { azureBase as base, azureTrust } from './azure-issuers.js';

/**
 * Whether Entra's address counts as verified, by the original's rule: with the optional claim xms_edov
 * (email domain owner verified) present, only its true values count (Entra sends it as true, "1" or
 * "true"); without it, the claim is merely not configured and the address is taken as verified. The
 * standard email_verified claim is not consulted: Entra does not send it.
 */
export function azureEmailVerified(claims: Record<string, unknown>): boolean {
  if (typeof claims.email !== 'string' || !claims.email) return false;
  const edov = claims.xms_edov;
  if (edov === undefined || edov === null) return true;
  return edov === true || edov === '1' || edov === 'true';
}

export const azure = oidcProvider({
  name: 'azure',
  // The original asks for `openid` alone: the address needs `scopes=email` (or the optional claim).
  defaultScopes: ['openid'],
  endpoints(rt) {
    return Promise.resolve({
      // Per token by azureTrust; the configured base's own issuer and keys otherwise.
      issuer: `${base(rt)}/v2.0`,
      authorization: `${base(rt)}/oauth2/v2.0/authorize`,
      token: `${base(rt)}/oauth2/v2.0/token`,
      jwksUri: `${base(rt)}/discovery/v2.0/keys`,
    });
  },
  trustOf: azureTrust,
  normalise: (claims) => ({ ...claims, email_verified: azureEmailVerified(claims) }),
});

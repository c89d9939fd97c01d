// Microsoft Entra ID (Azure): the v2.0 endpoints under a tenant base, default
// https://login.microsoftonline.com/common; EXTERNAL_AZURE_URL is the tenant base (REFERENCE §9.2). Tokens
// of the multi-tenant `common` base are issued by the user's own tenant, so the issuer is read from the
// token and accepted when it is a Microsoft tenant issuer; a configured tenant base must issue as <base>/v2.0.
import { decodeJwt } from 'jose';
import { oidcProvider, truthy } from './oidc.js';
import { baseUrl } from './code-exchange.js';
import type { ProviderRuntime } from './types.js';

const DEFAULT_BASE = 'https://login.microsoftonline.com/common';
const TENANT_ISSUER = /^https:\/\/login\.microsoftonline\.com\/[0-9a-fA-F-]{36}\/v2\.0$/;

/** The issuers a token from this configuration may name. */
export function azureIssuers(rt: ProviderRuntime, idToken: string): string[] {
  if (rt.config.url) return [`${baseUrl(rt.config.url, DEFAULT_BASE)}/v2.0`];
  let iss: unknown;
  try {
    iss = decodeJwt(idToken).iss;
  } catch {
    return [];
  }
  return typeof iss === 'string' && TENANT_ISSUER.test(iss) ? [iss] : [];
}

const base = (rt: ProviderRuntime) => baseUrl(rt.config.url, DEFAULT_BASE);

export const azure = oidcProvider({
  name: 'azure',
  defaultScopes: ['openid', 'email', 'profile'],
  endpoints(rt) {
    return Promise.resolve({
      // Filled per token by azureIssuers; a placeholder that no token carries otherwise.
      issuer: `${base(rt)}/v2.0`,
      authorization: `${base(rt)}/oauth2/v2.0/authorize`,
      token: `${base(rt)}/oauth2/v2.0/token`,
      jwksUri: `${base(rt)}/discovery/v2.0/keys`,
    });
  },
  issuersOf: azureIssuers,
  // Entra reports a domain-verified address with xms_edov; the standard claim where present.
  normalise: (claims) => ({ ...claims, email_verified: truthy(claims.email_verified) || truthy(claims.xms_edov) }),
});

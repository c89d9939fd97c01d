// Microsoft Entra ID (Azure): the v2.0 endpoints under a tenant base, default
// https://login.microsoftonline.com/common; EXTERNAL_AZURE_URL is the tenant base (REFERENCE §9.2).
// Which issuers a token may name follows the original: a base that is one tenant (its GUID or name under
// login.microsoftonline.com, or an External ID tenant under <name>.ciamlogin.com) pins `<base>/v2.0`; the
// multi-tenant bases `common` and `organizations` (which never issue tokens themselves: the user's own
// tenant does), no base, or a base that is no Microsoft tenant URL (a test server, a proxy) take any
// Microsoft issuer, read from the token. The keys are always the configured base's.
import { decodeJwt } from 'jose';
import { oidcProvider } from './oidc.js';
import { baseUrl } from './code-exchange.js';
import type { ProviderRuntime } from './types.js';

const DEFAULT_BASE = 'https://login.microsoftonline.com/common';
/** A tenant's v2.0 issuer; the tenant may be a GUID or a name, as the original matches it. */
const TENANT_ISSUER = /^https:\/\/login\.microsoftonline\.com\/[^/]+\/v2\.0\/?$/;
/** A Microsoft Entra External ID (CIAM) tenant's issuer. */
const CIAM_ISSUER = /^https:\/\/[a-z0-9-]+\.ciamlogin\.com\/[^/]+\/v2\.0\/?$/;
/** The v1 endpoints' issuer, which tokens handed to the id_token grant may still carry. */
const V1_ISSUER = /^https:\/\/sts\.windows\.net\/[^/]+\/$/;
const MULTI_TENANT = ['https://login.microsoftonline.com/common/v2.0', 'https://login.microsoftonline.com/organizations/v2.0'];

const base = (rt: ProviderRuntime) => baseUrl(rt.config.url, DEFAULT_BASE);

/** The one issuer EXTERNAL_AZURE_URL pins, or null when any Microsoft issuer is taken. */
export function pinnedAzureIssuer(rt: ProviderRuntime): string | null {
  if (!rt.config.url) return null;
  const issuer = `${base(rt)}/v2.0`;
  if (!TENANT_ISSUER.test(issuer) && !CIAM_ISSUER.test(issuer)) return null;
  return MULTI_TENANT.includes(issuer) ? null : issuer;
}

/** The issuers a token from this configuration may name. */
export function azureIssuers(rt: ProviderRuntime, idToken: string): string[] {
  const pinned = pinnedAzureIssuer(rt);
  if (pinned) return [pinned];
  let iss: unknown;
  try {
    iss = decodeJwt(idToken).iss;
  } catch {
    return [];
  }
  if (typeof iss !== 'string') return [];
  const microsoft = TENANT_ISSUER.test(iss) || CIAM_ISSUER.test(iss) || V1_ISSUER.test(iss);
  // A base that is no Microsoft URL (tests) also issues as itself.
  const own = rt.config.url !== '' && iss === `${base(rt)}/v2.0`;
  return microsoft || own ? [iss] : [];
}

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
      // Filled per token by azureIssuers; a placeholder that no token carries otherwise.
      issuer: `${base(rt)}/v2.0`,
      authorization: `${base(rt)}/oauth2/v2.0/authorize`,
      token: `${base(rt)}/oauth2/v2.0/token`,
      jwksUri: `${base(rt)}/discovery/v2.0/keys`,
    });
  },
  issuersOf: azureIssuers,
  normalise: (claims) => ({ ...claims, email_verified: azureEmailVerified(claims) }),
});

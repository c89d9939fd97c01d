// Which issuers an Azure (Microsoft Entra) id_token may name, and whose keys check it, following the
// original's two rules:
// - the code flow (its token came straight from the configured token endpoint): a base that is one tenant
//   (login.microsoftonline.com/<tenant> or <name>.ciamlogin.com/<tenant>) pins `<base>/v2.0`; any other base
//   (common, organizations, none, an Azure AD B2C or custom-domain URL, a test server) takes whatever
//   issuer the token names, so B2C policies and custom domains sign in;
// - the id_token grant (a token the app hands in): any issuer under https://login.microsoftonline.com/ or
//   https://sts.windows.net/, whatever tenant is configured (and, for a plain-http base, which only a local
//   server standing in for Microsoft in tests has, that base's own issuer).
// Either way the signature is checked with the issuer's own keys: those its discovery document
// (`<issuer>/.well-known/openid-configuration`, naming the same issuer) points at, or for the configured
// base's own issuer `<base>/discovery/v2.0/keys`. A token is never taken unverified.
import { decodeJwt } from 'jose';
import { baseUrl } from './code-exchange.js';
import { issuerEndpoints } from './oidc.js';
import type { ProviderRuntime } from './types.js';

export const DEFAULT_AZURE_BASE = 'https://login.microsoftonline.com/common';
/** A tenant's v2.0 issuer; the tenant may be a GUID or a name, as the original matches it. */
export const TENANT_ISSUER = /^https:\/\/login\.microsoftonline\.com\/[^/]+\/v2\.0\/?$/;
/** A Microsoft Entra External ID (CIAM) tenant's issuer. */
const CIAM_ISSUER = /^https:\/\/[a-z0-9-]+\.ciamlogin\.com\/[^/]+\/v2\.0\/?$/;
const MULTI_TENANT = ['https://login.microsoftonline.com/common/v2.0', 'https://login.microsoftonline.com/organizations/v2.0'];
/** The prefixes the original's id_token grant takes an Azure issuer by. */
const GRANT_PREFIXES = ['https://login.microsoftonline.com/', 'https://sts.windows.net/'];

export const azureBase = (rt: ProviderRuntime) => baseUrl(rt.config.url, DEFAULT_AZURE_BASE);

/** The one issuer EXTERNAL_AZURE_URL pins in the code flow, or null when any issuer is taken. */
export function pinnedAzureIssuer(rt: ProviderRuntime): string | null {
  if (!rt.config.url) return null;
  const issuer = `${azureBase(rt)}/v2.0`;
  if (!TENANT_ISSUER.test(issuer) && !CIAM_ISSUER.test(issuer)) return null;
  return MULTI_TENANT.includes(issuer) ? null : issuer;
}

/** Where the token comes from: the code flow's token answer, or the id_token grant. */
export type AzureTokenSource = 'callback' | 'grant';

/** Whether the token's issuer is one this source takes from this configuration. */
export function azureIssuerAccepted(rt: ProviderRuntime, iss: string, source: AzureTokenSource): boolean {
  if (source === 'grant') {
    const localStandIn = rt.config.url.startsWith('http://') && iss === `${azureBase(rt)}/v2.0`;
    return localStandIn || GRANT_PREFIXES.some((p) => iss.startsWith(p));
  }
  const pinned = pinnedAzureIssuer(rt);
  return pinned ? iss === pinned : true;
}

/** The issuer to expect and the key set to check a token with; no issuer at all when it is not taken. */
export async function azureTrust(
  rt: ProviderRuntime,
  idToken: string,
  source: AzureTokenSource,
): Promise<{ issuer: string[]; jwksUri: string }> {
  const ownKeys = `${azureBase(rt)}/discovery/v2.0/keys`;
  let iss: unknown;
  try {
    iss = decodeJwt(idToken).iss;
  } catch {
    return { issuer: [], jwksUri: ownKeys };
  }
  if (typeof iss !== 'string' || !iss || !azureIssuerAccepted(rt, iss, source)) return { issuer: [], jwksUri: ownKeys };
  if (iss === `${azureBase(rt)}/v2.0`) return { issuer: [iss], jwksUri: ownKeys };
  return { issuer: [iss], jwksUri: (await issuerEndpoints(rt, iss)).jwksUri };
}

// The id_token side of Snapchat (Snap Kit's OpenID Connect tokens), for grant_type=id_token. The issuer is
// the fixed token URL the original names Snapchat by; like the original, the keys are those of the
// issuer's own discovery document (`<issuer>/.well-known/openid-configuration`, which must name the same
// issuer, then its jwks_uri). EXTERNAL_SNAPCHAT_URL moves the issuer, as it moves the other endpoints.
import { baseUrl } from './base-url.js';
import { acceptedAudiences, issuerEndpoints, standardProfile, type OidcEndpoints } from './oidc.js';
import type { IdTokenSide } from './id-token-side.js';
import type { ExternalProfile, ProviderRuntime } from './types.js';

/** https://accounts.snapchat.com/accounts/oauth2/token, under EXTERNAL_SNAPCHAT_URL when set. */
export const snapchatIssuer = (rt: ProviderRuntime) => `${baseUrl(rt.config.url, 'accounts.snapchat.com')}/accounts/oauth2/token`;

/** The issuer's endpoints by discovery; a document naming another issuer is refused. */
const endpoints = (rt: ProviderRuntime): Promise<OidcEndpoints> => issuerEndpoints(rt, snapchatIssuer(rt));

/**
 * The token's standard claims, as the original reads Snapchat's; the address counts as verified (Snapchat
 * only shares an address it has confirmed, the same rule as its code flow), in identity_data too.
 */
export function snapchatIdTokenProfile(claims: Record<string, unknown>): ExternalProfile {
  const profile = standardProfile(claims);
  if (!profile.emails.length) return profile;
  return {
    ...profile,
    emails: profile.emails.map((e) => ({ ...e, verified: true })),
    claims: { ...profile.claims, email_verified: true },
  };
}

export const snapchatIdToken: IdTokenSide = {
  endpoints,
  async verify(rt, idToken, options = {}) {
    const { issuer, jwksUri } = await endpoints(rt);
    return rt.verifyIdToken(idToken, { issuer, audience: acceptedAudiences(rt, options), jwksUri, nonceHash: options.nonceHash });
  },
  profile: snapchatIdTokenProfile,
};

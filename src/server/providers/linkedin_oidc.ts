// LinkedIn's OpenID Connect product: discovery of the issuer https://www.linkedin.com/oauth
// (EXTERNAL_LINKEDIN_OIDC_URL replaces it for tests).
import { discoveredEndpoints, oidcProvider, profileFromClaims } from './oidc.js';
import type { ExternalProfile } from './types.js';

/** The standard reading, plus the member's `locale` (e.g. "en_US"), which the original keeps in identity_data. */
function linkedinProfile(claims: Record<string, unknown>): ExternalProfile {
  const profile = profileFromClaims(claims);
  const locale = claims.locale;
  return typeof locale === 'string' && locale ? { ...profile, claims: { ...profile.claims, locale } } : profile;
}

export const linkedinOidc = oidcProvider({
  name: 'linkedin_oidc',
  defaultScopes: ['openid', 'email', 'profile'],
  endpoints: (rt) => discoveredEndpoints(rt, rt.config.url || 'https://www.linkedin.com/oauth'),
  profile: linkedinProfile,
});

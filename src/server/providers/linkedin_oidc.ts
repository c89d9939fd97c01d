// LinkedIn's OpenID Connect product: discovery of the issuer https://www.linkedin.com/oauth
// (EXTERNAL_LINKEDIN_OIDC_URL replaces it for tests).
import { discoveredEndpoints, oidcProvider } from './oidc.js';
import { claims as identityData, requireSubject, text } from './json-fields.js';
import type { ExternalProfile } from './types.js';

/** Go's strconv.ParseBool spellings of true, as the original reads LinkedIn's email_verified. */
const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);

/**
 * identity_data of a LinkedIn id_token, as the original's LinkedIn reader keeps it: the issuer, the
 * subject, the name made of the given and family names, those two, the member's locale and picture —
 * not full_name or avatar_url. The address and its flag are added by the sign-in (oauth/linking.ts).
 */
export function linkedinProfile(token: Record<string, unknown>): ExternalProfile {
  const sub = requireSubject(text(token, 'sub'), 'linkedin_oidc');
  const givenName = text(token, 'given_name');
  const familyName = text(token, 'family_name');
  const email = text(token, 'email');
  return {
    subject: sub,
    emails: email ? [{ email, verified: GO_TRUE.has(String(token.email_verified)), primary: true }] : [],
    claims: identityData({
      iss: text(token, 'iss'),
      sub,
      provider_id: sub,
      name: `${givenName} ${familyName}`.trim(),
      given_name: givenName,
      family_name: familyName,
      locale: text(token, 'locale'),
      picture: text(token, 'picture'),
    }),
  };
}

export const linkedinOidc = oidcProvider({
  name: 'linkedin_oidc',
  defaultScopes: ['openid', 'email', 'profile'],
  endpoints: (rt) => discoveredEndpoints(rt, rt.config.url || 'https://www.linkedin.com/oauth'),
  profile: linkedinProfile,
});

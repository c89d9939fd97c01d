// LinkedIn's OpenID Connect product: discovery of the issuer https://www.linkedin.com/oauth
// (EXTERNAL_LINKEDIN_OIDC_URL replaces it for tests).
import { discoveredEndpoints, oidcProvider } from './oidc.js';
import { claims as identityData, requireSubject, text } from './json-fields.js';
import { decodeFields, parseGoBool, REGISTERED_CLAIMS, stringFields, type FieldTypes } from './go-json-fields.js';
import { ProviderError } from './outbound.js';
import type { ExternalProfile } from './types.js';

/** The original's struct for a LinkedIn id_token: every claim a string, email_verified too (go-json-fields.ts). */
export const LINKEDIN_FIELDS: FieldTypes = {
  ...REGISTERED_CLAIMS,
  ...stringFields('email', 'email_verified', 'family_name', 'given_name', 'locale', 'picture'),
};

/**
 * email_verified as the original reads it, with strconv.ParseBool: null where that fails, which refuses
 * the whole token — also when the claim is absent or empty (the string field's "" is no boolean).
 */
export function linkedinEmailVerified(claims: Record<string, unknown>): boolean | null {
  return parseGoBool(text(claims, 'email_verified'));
}

/**
 * identity_data of a LinkedIn id_token, as the original's LinkedIn reader keeps it: the issuer, the
 * subject, the name made of the given and family names, those two, the member's locale and picture —
 * not full_name or avatar_url. The address and its flag are added by the sign-in (oauth/linking.ts).
 */
export function linkedinProfile(answer: Record<string, unknown>): ExternalProfile {
  const { claims: token, misfit } = decodeFields(answer, LINKEDIN_FIELDS);
  if (misfit) throw new ProviderError(`linkedin_oidc: claim ${misfit} is not of the type the original reads it as`);
  const verified = linkedinEmailVerified(token);
  if (verified === null) throw new ProviderError('linkedin_oidc: email_verified is not a boolean the original can parse');
  const sub = requireSubject(text(token, 'sub'), 'linkedin_oidc');
  const givenName = text(token, 'given_name');
  const familyName = text(token, 'family_name');
  const email = text(token, 'email');
  return {
    subject: sub,
    emails: email ? [{ email, verified, primary: true }] : [],
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

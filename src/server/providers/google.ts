// Google: OpenID Connect by discovery of https://accounts.google.com (REFERENCE §9.2). The original ignores
// EXTERNAL_GOOGLE_URL; here it replaces the issuer, so a test can stand in a local OIDC provider.
import { discoveredEndpoints, oidcProvider } from './oidc.js';
import { claims as identityData, requireSubject, text } from './json-fields.js';
import { decodeFields, stringFields, type FieldTypes } from './go-json-fields.js';
import { ProviderError } from './outbound.js';
import type { ExternalProfile } from './types.js';

const ISSUER = 'https://accounts.google.com';
/** The issuer the original names for a person read from Google's userinfo answer instead of an id_token. */
const USERINFO_ISSUER = 'https://www.googleapis.com/userinfo/v2/me';

/**
 * The original's one struct for Google's id_token and its userinfo answer. Both verification flags are
 * booleans there: a `"true"` (or `"false"`) fails the decoding, and with it the sign-in.
 */
export const GOOGLE_FIELDS: FieldTypes = {
  ...stringFields('id', 'sub', 'iss', 'name', 'picture', 'email', 'hd'),
  verified_email: 'bool',
  email_verified: 'bool',
};

/**
 * identity_data of a Google id_token or userinfo answer, as the original's Google reader keeps it: the
 * issuer, the subject, the name and picture (with their older names full_name and avatar_url) and the
 * Workspace domain under custom_claims — not given_name, family_name or Google's other claims. The address
 * and its flag are added by the sign-in (oauth/linking.ts), as for every provider.
 */
export function googleProfile(answer: Record<string, unknown>): ExternalProfile {
  const { claims: token, misfit } = decodeFields(answer, GOOGLE_FIELDS);
  if (misfit) throw new ProviderError(`google: claim ${misfit} is not of the type the original reads it as`);
  const sub = requireSubject(text(token, 'sub') || text(token, 'id'), 'google');
  const email = text(token, 'email');
  const name = text(token, 'name');
  const picture = text(token, 'picture');
  const hd = text(token, 'hd');
  return {
    subject: sub,
    emails: email ? [{ email, verified: token.email_verified === true || token.verified_email === true, primary: true }] : [],
    claims: identityData({
      iss: text(token, 'iss') || USERINFO_ISSUER,
      sub,
      provider_id: sub,
      name,
      full_name: name,
      picture,
      avatar_url: picture,
      custom_claims: hd ? { hd } : undefined,
    }),
  };
}

export const google = oidcProvider({
  name: 'google',
  // The original's scopes. Google issues an id_token for the identity scopes `email` and `profile` without
  // `openid`; an answer without one is read from the discovery document's userinfo endpoint instead.
  defaultScopes: ['email', 'profile'],
  async endpoints(rt) {
    const found = await discoveredEndpoints(rt, rt.config.url || ISSUER);
    // Google's id_tokens name their issuer with or without the scheme.
    return rt.config.url ? found : { ...found, issuer: [ISSUER, 'accounts.google.com'] };
  },
  profile: googleProfile,
});

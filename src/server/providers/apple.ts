// Sign in with Apple: OpenID Connect by discovery of https://appleid.apple.com (EXTERNAL_APPLE_URL replaces
// the issuer for tests). Apple answers the callback with a form POST (response_mode=form_post) and sends
// the person's name only once, in the `user` form field of the first sign-in.
// Apple has switched the issuer its tokens and its discovery document name between appleid.apple.com and
// account.apple.com without notice, and not always both at once: a token naming either is taken (always
// checked against the configured issuer's published keys), as the original takes both.
import { discoveredEndpoints, oidcProvider, profileFromClaims } from './oidc.js';
import { decodeFields, REGISTERED_CLAIMS, type FieldTypes } from './go-json-fields.js';
import { ProviderError } from './outbound.js';
import type { ExternalProfile } from './types.js';

export const APPLE_ISSUERS = ['https://appleid.apple.com', 'https://account.apple.com'] as const;

/** The original's struct for an Apple id_token: a claim of another type fails the sign-in (go-json-fields.ts). */
export const APPLE_FIELDS: FieldTypes = {
  ...REGISTERED_CLAIMS,
  email: 'string',
  auth_time: 'number',
  is_private_email: 'bool_or_bool_string',
  transfer_sub: 'string',
};

/**
 * Apple's `is_private_email` arrives as a boolean or as a string: read as the original reads it (Go's
 * boolean spellings; anything else has refused the token, APPLE_FIELDS).
 */
function appleBoolean(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  return undefined;
}

/**
 * identity_data of an Apple id_token: issuer, subject, the address, the name the callback's form gave, and
 * under custom_claims only the three claims the original keeps (is_private_email as a boolean, auth_time,
 * transfer_sub) — not Apple's other bookkeeping (real_user_status, nonce_supported...).
 * The address counts as verified whatever the token's email_verified says: Apple only releases addresses
 * it has confirmed (or its private relay ones), and the original trusts every Apple address, in the code
 * flow and at the id_token grant alike. Reading email_verified would leave such users unconfirmed here.
 */
export function appleProfile(token: Record<string, unknown>): ExternalProfile {
  const { claims, misfit } = decodeFields(token, APPLE_FIELDS);
  if (misfit) throw new ProviderError(`apple: claim ${misfit} is not of the type the original reads it as`);
  const { iss, sub, email, name } = claims;
  const read = profileFromClaims({ iss, sub, email, email_verified: true, name });
  // A token without an address (an app that asked for no email scope) is a person all the same.
  const profile: ExternalProfile = read.emails.length === 0 ? { ...read, addressless: true } : read;
  const custom: Record<string, unknown> = {};
  const isPrivate = appleBoolean(claims.is_private_email);
  if (isPrivate !== undefined) custom.is_private_email = isPrivate;
  if (typeof claims.auth_time === 'number') custom.auth_time = claims.auth_time;
  if (typeof claims.transfer_sub === 'string' && claims.transfer_sub) custom.transfer_sub = claims.transfer_sub;
  return Object.keys(custom).length ? { ...profile, claims: { ...profile.claims, custom_claims: custom } } : profile;
}

export const apple = oidcProvider({
  name: 'apple',
  defaultScopes: ['email', 'name'],
  async endpoints(rt) {
    const found = await discoveredEndpoints(rt, rt.config.url || APPLE_ISSUERS[0]);
    const named = Array.isArray(found.issuer) ? found.issuer : [found.issuer];
    return { ...found, issuer: [...new Set([...named, ...APPLE_ISSUERS])] };
  },
  // Apple requires form_post whenever scopes are requested.
  authorizationParams: () => ({ response_mode: 'form_post' }),
  // As the original: Apple is asked for its two scopes only, and nothing of /authorize's query is passed on.
  scopesFor: () => ['email', 'name'],
  forwardsQuery: false,
  fromForm(form) {
    const raw = form.get('user');
    if (!raw) return {};
    try {
      const user = JSON.parse(raw) as { name?: { firstName?: string; lastName?: string } };
      const name = [user.name?.firstName, user.name?.lastName].filter((x) => typeof x === 'string' && x).join(' ');
      return name ? { name } : {};
    } catch {
      return {}; // a malformed `user` field only costs the name
    }
  },
  profile: appleProfile,
});

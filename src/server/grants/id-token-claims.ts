// grant_type=id_token: an id_token's claims as the original's readers decode them. It reads a token into a
// Go struct per issuer (Google's, Apple's, Azure's... or one generic struct of the standard claims): a
// claim of another JSON type than its field fails that decoding, so the whole token is "Bad ID token"
// (`"email_verified": "true"` is refused for a Google, Keycloak or custom provider's token rather than read
// as a verified address); null is every field's zero value, unknown claims are ignored, and a claim's name
// is matched ignoring case, `EMAIL` filling `email` (providers/go-json-fields.ts).

import { STANDARD_STRING_CLAIMS } from '../custom-providers/claims.js';
import { decodeFields, stringFields as strings, type FieldTypes } from '../providers/go-json-fields.js';
import { GOOGLE_FIELDS } from '../providers/google.js';

/** What go-oidc itself decodes from every token before any reader runs (exp, iat, nbf, aud: runtime.ts). */
const VERIFIER: FieldTypes = { iss: 'string', sub: 'string', nonce: 'string', at_hash: 'string' };

/** The registered claims of a reader built on golang-jwt's RegisteredClaims. */
const REGISTERED: FieldTypes = { ...VERIFIER, jti: 'string' };

/** The standard claims' reader: keycloak, snapchat, custom providers and EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS. */
const GENERIC: FieldTypes = {
  ...VERIFIER,
  ...strings(...STANDARD_STRING_CLAIMS),
  iat: 'number',
  exp: 'number',
  email_verified: 'bool',
  phone_verified: 'bool',
  updated_at: 'time',
  custom_claims: 'object',
};

/** The readers by issuer name (readerOf), each with the claims go-oidc decodes first. */
const READERS: Readonly<Record<string, FieldTypes>> = {
  google: { ...VERIFIER, ...GOOGLE_FIELDS },
  apple: { ...REGISTERED, email: 'string', auth_time: 'number', is_private_email: 'bool_or_bool_string', transfer_sub: 'string' },
  azure: { ...REGISTERED, ...strings('email', 'name', 'preferred_username') },
  facebook: { ...REGISTERED, ...strings('email', 'name', 'picture') },
  kakao: { ...REGISTERED, ...strings('email', 'nickname', 'picture') },
  // LinkedIn's email_verified is a string it parses (a custom provider with LinkedIn's issuer reaches this).
  linkedin_oidc: { ...REGISTERED, ...strings('email', 'email_verified', 'family_name', 'given_name', 'locale', 'picture') },
  vercel_marketplace: { ...REGISTERED, ...strings('global_user_id', 'user_email', 'user_name', 'user_avatar_url') },
};

/**
 * The claims as the original's reader `reader` (a built-in provider's name; any other reads the standard
 * claims) decodes them, and the first claim it cannot decode (null when all fit).
 */
export function readClaimsAs(reader: string, claims: Record<string, unknown>): { claims: Record<string, unknown>; misfit: string | null } {
  return decodeFields(claims, READERS[reader] ?? GENERIC);
}

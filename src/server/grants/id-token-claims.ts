// grant_type=id_token: an id_token's claims as the original's readers decode them. It reads a token into a
// Go struct per issuer (Google's, Apple's, Azure's... or one generic struct of the standard claims): a
// claim of another JSON type than its field fails that decoding, so the whole token is "Bad ID token"
// (`"email_verified": "true"` is refused for a Google, Keycloak or custom provider's token rather than read
// as a verified address); null is every field's zero value, unknown claims are ignored, and a claim's name
// is matched ignoring case, `EMAIL` filling `email` (providers/go-json-fields.ts).

import { STANDARD_STRING_CLAIMS } from '../custom-providers/claims.js';
import { decodeFields, REGISTERED_CLAIMS as REGISTERED, stringFields as strings, type FieldTypes } from '../providers/go-json-fields.js';
import { GOOGLE_FIELDS } from '../providers/google.js';
import { APPLE_FIELDS } from '../providers/apple.js';
import { AZURE_FIELDS } from '../providers/azure.js';
import { LINKEDIN_FIELDS, linkedinEmailVerified } from '../providers/linkedin_oidc.js';

/** What go-oidc itself decodes from every token before any reader runs, and has refused already when they misfit (providers/go-oidc-claims.ts). */
const VERIFIER: FieldTypes = { iss: 'string', sub: 'string', nonce: 'string', at_hash: 'string' };

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
  apple: APPLE_FIELDS,
  azure: AZURE_FIELDS,
  facebook: { ...REGISTERED, ...strings('email', 'name', 'picture') },
  kakao: { ...REGISTERED, ...strings('email', 'nickname', 'picture') },
  // A custom provider or an allowed issuer with LinkedIn's issuer reaches this (its own grant does not).
  linkedin_oidc: LINKEDIN_FIELDS,
  vercel_marketplace: { ...REGISTERED, ...strings('global_user_id', 'user_email', 'user_name', 'user_avatar_url') },
};

/**
 * The claims as the original's reader `reader` (a built-in provider's name; any other reads the standard
 * claims) decodes them, and the first claim it cannot decode (null when all fit).
 */
export function readClaimsAs(reader: string, claims: Record<string, unknown>): { claims: Record<string, unknown>; misfit: string | null } {
  const read = decodeFields(claims, READERS[reader] ?? GENERIC);
  // LinkedIn's reader parses email_verified with strconv.ParseBool, and fails the token when it cannot ("" included).
  if (!read.misfit && reader === 'linkedin_oidc' && linkedinEmailVerified(read.claims) === null)
    return { ...read, misfit: 'email_verified' };
  return read;
}

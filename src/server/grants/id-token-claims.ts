// grant_type=id_token: the JSON types of an id_token's claims, as the original's readers decode them. It
// reads a token into a Go struct per issuer (Google's, Apple's, Azure's... or one generic struct of the
// standard claims), and a claim of another JSON type than its field fails that decoding, so the whole token
// is "Bad ID token": `"email_verified": "true"` is refused for a Google, Keycloak or custom provider's
// token rather than read as a verified address. null is every field's zero value, and unknown claims are
// ignored. (Field names are matched exactly here; Go would also match them ignoring case.)

import { STANDARD_STRING_CLAIMS } from '../custom-providers/claims.js';

type ClaimType = 'string' | 'bool' | 'number' | 'object' | 'time' | 'bool_or_bool_string';

type ClaimTypes = Readonly<Record<string, ClaimType>>;

/** What go-oidc itself decodes from every token before any reader runs (exp, iat, nbf, aud: runtime.ts). */
const VERIFIER: ClaimTypes = { iss: 'string', sub: 'string', nonce: 'string', at_hash: 'string' };

/** The registered claims of a reader built on golang-jwt's RegisteredClaims. */
const REGISTERED: ClaimTypes = { ...VERIFIER, jti: 'string' };

const strings = (...names: string[]): ClaimTypes => Object.fromEntries(names.map((n) => [n, 'string' as const]));

/** The standard claims' reader: keycloak, snapchat, custom providers and EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS. */
const GENERIC: ClaimTypes = {
  ...VERIFIER,
  ...strings(...STANDARD_STRING_CLAIMS),
  iat: 'number',
  exp: 'number',
  email_verified: 'bool',
  phone_verified: 'bool',
  updated_at: 'time',
  custom_claims: 'object',
};

const BY_PROVIDER: Readonly<Record<string, ClaimTypes>> = {
  google: { ...VERIFIER, ...strings('id', 'name', 'picture', 'email', 'hd'), verified_email: 'bool', email_verified: 'bool' },
  apple: { ...REGISTERED, email: 'string', auth_time: 'number', is_private_email: 'bool_or_bool_string', transfer_sub: 'string' },
  azure: { ...REGISTERED, ...strings('email', 'name', 'preferred_username') },
  facebook: { ...REGISTERED, ...strings('email', 'name', 'picture') },
  kakao: { ...REGISTERED, ...strings('email', 'nickname', 'picture') },
  vercel_marketplace: { ...REGISTERED, ...strings('global_user_id', 'user_email', 'user_name', 'user_avatar_url') },
};

/** The first claim the original's reader for `provider` (an identities.provider name) cannot decode; null when all fit. */
export function misfitClaim(provider: string, claims: Record<string, unknown>): string | null {
  const types = BY_PROVIDER[provider] ?? GENERIC;
  for (const [name, type] of Object.entries(types)) {
    const value = claims[name];
    if (value !== undefined && value !== null && !fits(type, value)) return name;
  }
  return null;
}

/** Go's strconv.ParseBool spellings. */
const GO_BOOLEANS = new Set(['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False']);

/** A number of seconds, or an RFC 3339 time, or "" (the original's reading of a profile's updated_at). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function fits(type: ClaimType, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'bool':
      return typeof value === 'boolean';
    case 'number':
      return typeof value === 'number';
    case 'object':
      return typeof value === 'object' && !Array.isArray(value);
    case 'time':
      return typeof value === 'number' || (typeof value === 'string' && (value === '' || RFC3339.test(value)));
    case 'bool_or_bool_string':
      return typeof value === 'boolean' || (typeof value === 'string' && GO_BOOLEANS.has(value));
  }
}

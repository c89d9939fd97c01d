// The JSON types of a bearer token's claims, checked as the original's parser checks them: it decodes every
// token into its access-token claims struct, so a claim of another JSON type (`"sub": ["…"]`, `"role": 1`)
// makes the token malformed, refused 403 bad_jwt before anything reads it
// (docs/tokens-and-sessions.md#verification). Without this a subject that is no string reached the
// database as text it could not read as a UUID. null is accepted everywhere: Go leaves the field empty.

/** The Go type of each claim the original's struct declares with a plain JSON type. */
const GO_TYPES: Readonly<Record<string, 'string' | 'bool' | 'map[string]interface {}'>> = {
  iss: 'string',
  sub: 'string',
  jti: 'string',
  email: 'string',
  phone: 'string',
  role: 'string',
  aal: 'string',
  session_id: 'string',
  client_id: 'string',
  scope: 'string',
  is_anonymous: 'bool',
  app_metadata: 'map[string]interface {}',
  user_metadata: 'map[string]interface {}',
};

const JSON_TYPE_OF_GO: Readonly<Record<string, string>> = { string: 'string', bool: 'bool', 'map[string]interface {}': 'object' };

/**
 * Why the claims cannot be the original's struct, in its parser's words, or null when they can. Go's decoder
 * reports the first mismatch in the payload's order; `aud` is a string or a list of strings.
 */
export function claimTypeProblem(claims: Record<string, unknown>): string | null {
  for (const name in claims) {
    const value = claims[name];
    if (value === null) continue;
    if (name === 'aud') {
      if (!isAudience(value)) return 'token is malformed: could not JSON decode claim: invalid type for claim';
      continue;
    }
    const goType = GO_TYPES[name];
    if (goType === undefined || jsonKind(value) === JSON_TYPE_OF_GO[goType]) continue;
    return `token is malformed: could not JSON decode claim: json: cannot unmarshal ${jsonKind(value)} into Go struct field AccessTokenClaims.${name} of type ${goType}`;
  }
  return null;
}

function isAudience(value: unknown): boolean {
  return typeof value === 'string' || (Array.isArray(value) && value.every((entry) => typeof entry === 'string'));
}

/** The JSON kind as Go's decoder names it in its type errors. */
function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  if (typeof value === 'boolean') return 'bool';
  return typeof value; // 'string' or 'number'
}

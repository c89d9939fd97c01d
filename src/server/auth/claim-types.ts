// The JSON types of a bearer token's claims, checked as the original's parser checks them: it decodes every
// token into its access-token claims struct, so a claim of another JSON type (`"sub": ["…"]`, `"role": 1`)
// makes the token malformed, refused 403 bad_jwt before anything reads it
// (docs/tokens-and-sessions.md#verification). Without this a subject that is no string reached the
// database as text it could not read as a UUID. null is accepted everywhere: Go leaves the field empty.
import { goJsonKind } from '../http/go-json-kind.js';

const STRING = { kind: 'string', goType: 'string' } as const;
const BOOL = { kind: 'bool', goType: 'bool' } as const;
const MAP = { kind: 'object', goType: 'map[string]interface {}' } as const;

/** Each claim the original's struct declares with a plain JSON type: the JSON kind it takes, and its Go type. */
const DECLARED: Readonly<Record<string, { kind: string; goType: string }>> = {
  iss: STRING,
  sub: STRING,
  jti: STRING,
  email: STRING,
  phone: STRING,
  role: STRING,
  aal: STRING,
  session_id: STRING,
  client_id: STRING,
  scope: STRING,
  is_anonymous: BOOL,
  app_metadata: MAP,
  user_metadata: MAP,
};

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
    const declared = DECLARED[name];
    const kind = goJsonKind(value);
    if (declared === undefined || kind === declared.kind) continue;
    return `token is malformed: could not JSON decode claim: json: cannot unmarshal ${kind} into Go struct field AccessTokenClaims.${name} of type ${declared.goType}`;
  }
  return null;
}

function isAudience(value: unknown): boolean {
  return typeof value === 'string' || (Array.isArray(value) && value.every((entry) => typeof entry === 'string'));
}

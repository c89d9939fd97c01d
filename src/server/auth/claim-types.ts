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

/** The registered claims the original reads as a NumericDate: a JSON number it must hold as a float64. */
const NUMERIC_DATES: ReadonlySet<string> = new Set(['exp', 'nbf', 'iat']);

/**
 * Why the claims cannot be the original's struct, in its parser's words, or null when they can. Go's decoder
 * reports the first mismatch in the payload's order; `aud` is a string or a list of strings. `payloadText`
 * gives the payload as the token wrote it, read only to quote a number too large for a float64.
 */
export function claimTypeProblem(claims: Record<string, unknown>, payloadText: () => string): string | null {
  for (const name in claims) {
    const value = claims[name];
    if (value === null) continue;
    // JSON.parse reads a number past a float64's range (1e400) as ±Infinity: an exp that never comes. The
    // original cannot hold it and refuses the token as malformed, so it is never a token without expiry.
    if (NUMERIC_DATES.has(name) && typeof value === 'number' && !Number.isFinite(value)) {
      return `token is malformed: could not JSON decode claim: could not convert json number value to float: strconv.ParseFloat: parsing "${numberText(payloadText(), name)}": value out of range`;
    }
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

/** The text of the number the payload gives `name`, as written (the last one: JSON.parse keeps the last of duplicates). */
function numberText(payload: string, name: string): string {
  const written = [...payload.matchAll(new RegExp(`"${name}"\\s*:\\s*(-?[0-9][0-9.eE+-]*)`, 'g'))];
  return written.length ? written[written.length - 1][1] : '';
}

function isAudience(value: unknown): boolean {
  return typeof value === 'string' || (Array.isArray(value) && value.every((entry) => typeof entry === 'string'));
}

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
 * Why the claims cannot be the original's struct, in its parser's words, or null when they can. `aud`, the
 * NumericDates and `amr` have their own decoders, whose error stops Go's decoder at once; a plain field of
 * the wrong type is only remembered while decoding goes on. So the first of the former wins, else the first
 * of the latter. `payloadText` gives the payload as the token wrote it, read only to quote a number too
 * large for a float64.
 */
export function claimTypeProblem(claims: Record<string, unknown>, payloadText: () => string): string | null {
  let firstMismatch: string | null = null;
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
    if (name === 'amr') {
      const problem = amrProblem(value);
      if (problem) return `token is malformed: could not JSON decode claim: ${problem}`;
      continue;
    }
    const declared = DECLARED[name];
    const kind = goJsonKind(value);
    if (declared === undefined || kind === declared.kind) continue;
    firstMismatch ??= `token is malformed: could not JSON decode claim: ${unmarshalError(kind, name, declared.goType)}`;
  }
  return firstMismatch;
}

const unmarshalError = (value: string, field: string, goType: string) =>
  `json: cannot unmarshal ${value} into Go struct field AccessTokenClaims.${field} of type ${goType}`;

/** The fields of one `amr` entry in object form, by the lower-case name Go's decoder matches them by. */
const AMR_ENTRY_FIELDS: Readonly<Record<string, 'string' | 'int64'>> = { method: 'string', timestamp: 'int64', provider: 'string' };

/**
 * Why `amr` is not the original's: a list whose entries are each a method name or an object of method,
 * timestamp (a whole number that fits an int64) and provider. Go matches those names whatever their case
 * and reports the first entry that fails, its first failing field.
 */
function amrProblem(value: unknown): string | null {
  if (!Array.isArray(value)) return unmarshalError(goJsonKind(value), 'amr', '[]json.RawMessage');
  for (const entry of value) {
    if (entry === null || typeof entry === 'string') continue;
    if (typeof entry !== 'object' || Array.isArray(entry)) return unmarshalError(goJsonKind(entry), 'amr', 'models.AMREntry');
    for (const [key, field] of Object.entries(entry as Record<string, unknown>)) {
      const type = AMR_ENTRY_FIELDS[key.toLowerCase()];
      if (type === undefined || field === null) continue;
      if (type === 'string' && typeof field !== 'string') return unmarshalError(goJsonKind(field), `amr.${key.toLowerCase()}`, 'string');
      if (type === 'int64' && !isInt64(field)) {
        const shown = typeof field === 'number' ? `number ${field}` : goJsonKind(field);
        return unmarshalError(shown, 'amr.timestamp', 'int64');
      }
    }
  }
  return null;
}

/**
 * A number Go reads into an int64: a whole one. JSON.parse keeps neither how it was written nor digits past
 * 2^53, so `1e3` (refused by Go) passes and a whole number past 2^53 (taken by Go) does not: edges only a key
 * holder can reach.
 */
const isInt64 = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value);

/** The text of the number the payload gives `name`, as written (the last one: JSON.parse keeps the last of duplicates). */
function numberText(payload: string, name: string): string {
  const written = [...payload.matchAll(new RegExp(`"${name}"\\s*:\\s*(-?[0-9][0-9.eE+-]*)`, 'g'))];
  return written.length ? written[written.length - 1][1] : '';
}

function isAudience(value: unknown): boolean {
  return typeof value === 'string' || (Array.isArray(value) && value.every((entry) => typeof entry === 'string'));
}

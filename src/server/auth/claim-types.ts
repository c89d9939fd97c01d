// The JSON types of a bearer token's claims, checked as the original's parser checks them: it decodes every
// token into its access-token claims struct, so a claim of another JSON type (`"sub": ["…"]`, `"role": 1`)
// makes the token malformed, under whatever spelling of its name fills the field (claim-fields.ts), refused
// 403 bad_jwt before anything reads it (docs/tokens-and-sessions.md#verification). Without this a subject
// that is no string reached the database as text it could not read as a UUID. null is accepted everywhere:
// Go leaves the field empty, or clears it.
import { goJsonKind } from '../http/go-json-kind.js';
import { goQuoted } from '../go-quoted.js';
import { isJsonNumberText } from '../providers/go-json-fields.js';
import { foldedName } from '../http/field-names.js';
import { CLAIM_FIELDS, claimField } from './claim-fields.js';

/** The JSON kind each plain field takes, and its Go type. */
const PLAIN = {
  string: { kind: 'string', goType: 'string' },
  bool: { kind: 'bool', goType: 'bool' },
  map: { kind: 'object', goType: 'map[string]interface {}' },
} as const;

/**
 * Why the claims cannot be the original's struct, in its parser's words, or null when they can. A claim
 * counts for the field it fills under any spelling (claim-fields.ts), and each spelling's value is checked,
 * as Go decodes each in turn. `aud`, the NumericDates and `amr` have their own decoders, whose error stops
 * Go's decoder at once; a plain field of the wrong type is only remembered while decoding goes on. So the
 * first of the former wins, else the first of the latter. `payloadText` gives the payload as the token
 * wrote it, read only to quote a number too large for a float64.
 */
export function claimTypeProblem(claims: Record<string, unknown>, payloadText: () => string): string | null {
  let firstMismatch: string | null = null;
  for (const key in claims) {
    const value = claims[key];
    if (value === null) continue;
    // One look-up for a name spelled as declared (every token the service signs); folding only for the rest.
    let name = key;
    let field = CLAIM_FIELDS.get(key);
    if (field === undefined) {
      const folded = claimField(key);
      if (folded === undefined) continue;
      name = folded;
      field = CLAIM_FIELDS.get(folded)!;
    }
    if (field === 'numeric_date') {
      const problem = numericDateProblem(value, key, payloadText);
      if (problem) return `token is malformed: could not JSON decode claim: ${problem}`;
      continue;
    }
    if (field === 'audience') {
      if (!isAudience(value)) return 'token is malformed: could not JSON decode claim: invalid type for claim';
      continue;
    }
    if (field === 'amr') {
      const problem = amrProblem(value);
      if (problem) return `token is malformed: could not JSON decode claim: ${problem}`;
      continue;
    }
    const declared = PLAIN[field];
    const kind = goJsonKind(value);
    if (kind !== declared.kind)
      firstMismatch ??= `token is malformed: could not JSON decode claim: ${unmarshalError(kind, name, declared.goType)}`;
  }
  return firstMismatch;
}

/**
 * Why golang-jwt's NumericDate cannot read the value of the claim `key`, or null. It decodes the value into a
 * json.Number, which takes a number or a string holding a JSON number (`"1700000000"`), then into a float64.
 * JSON.parse reads a number past a float64's range (1e400) as ±Infinity, an exp that never comes: the original
 * cannot hold it and refuses the token as malformed, so it is never a token without expiry.
 */
function numericDateProblem(value: unknown, key: string, payloadText: () => string): string | null {
  if (typeof value === 'number') return Number.isFinite(value) ? null : outOfRange(numberText(payloadText(), key));
  if (typeof value !== 'string') {
    return `could not parse NumericData: json: cannot unmarshal ${goJsonKind(value)} into Go value of type json.Number`;
  }
  // The string as the token wrote it, quotes included, is what Go quotes (JSON.stringify: the usual writing).
  if (!isJsonNumberText(value)) {
    return `could not parse NumericData: json: invalid number literal, trying to unmarshal ${goQuoted(JSON.stringify(value))} into Number`;
  }
  return Number.isFinite(Number(value)) ? null : outOfRange(value);
}

const outOfRange = (text: string) =>
  `could not convert json number value to float: strconv.ParseFloat: parsing ${goQuoted(text)}: value out of range`;

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
      const type = AMR_ENTRY_FIELDS[foldedName(key)];
      if (type === undefined || field === null) continue;
      if (type === 'string' && typeof field !== 'string') return unmarshalError(goJsonKind(field), `amr.${foldedName(key)}`, 'string');
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

/** The text of the number the payload gives the claim `key`, as written (the last one: JSON.parse keeps the last of duplicates). */
function numberText(payload: string, key: string): string {
  const name = key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const written = [...payload.matchAll(new RegExp(`"${name}"\\s*:\\s*(-?[0-9][0-9.eE+-]*)`, 'g'))];
  return written.length ? written[written.length - 1][1] : '';
}

function isAudience(value: unknown): boolean {
  return typeof value === 'string' || (Array.isArray(value) && value.every((entry) => typeof entry === 'string'));
}

// How the original reads a provider's JSON into a Go struct (its id_token readers, Google's userinfo, a
// custom provider's claims): encoding/json matches an object's keys to the fields' names ignoring case
// (Unicode simple folding, so `EMAIL`, `Email` and `email` all fill `email`), assigns every matching key in
// turn, the last one staying, leaves a string, number or boolean field as it was for a `null`, and fails
// the whole decoding when a value is of another JSON type than its field. Where the original decodes into
// a map (Azure's custom_claims, an allowlist) keys stay exact, and are not read through this.

import { foldedName } from '../http/field-names.js';

/**
 * A field's Go type, as the JSON values it takes. `numeric_date`: golang-jwt's NumericDate (a number, or a
 * string holding a JSON number, as a json.Number takes it); `claim_strings`: its ClaimStrings (a string or
 * a list of strings).
 */
export type FieldType = 'string' | 'bool' | 'number' | 'object' | 'time' | 'bool_or_bool_string' | 'numeric_date' | 'claim_strings';

/** A struct's fields by JSON name. */
export type FieldTypes = Readonly<Record<string, FieldType>>;

export const stringFields = (...names: string[]): FieldTypes => Object.fromEntries(names.map((n) => [n, 'string' as const]));

/** golang-jwt's RegisteredClaims, which the original's Apple, Azure, Facebook, Kakao, LinkedIn and Vercel readers embed. */
export const REGISTERED_CLAIMS: FieldTypes = {
  ...stringFields('iss', 'sub', 'jti'),
  aud: 'claim_strings',
  exp: 'numeric_date',
  nbf: 'numeric_date',
  iat: 'numeric_date',
};

/**
 * Whether the JSON key `key` fills the field named `name` (lower-case ASCII, as every field read here
 * is named): as a request body's member fills a field (http/field-names.ts).
 */
export function keyFills(key: string, name: string): boolean {
  return key === name || foldedName(key) === name;
}

/**
 * The values the field `name` is assigned, in order: those of the keys that fill it. `sorted` reads the
 * keys in byte order, as Go writes a map out (a custom provider's userinfo answer is decoded into a map,
 * written out and decoded again); otherwise in the object's own order, as a document is decoded.
 */
export function fieldValues(source: Record<string, unknown>, name: string, sorted = false): unknown[] {
  const keys = Object.keys(source).filter((key) => keyFills(key, name));
  if (sorted) keys.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return keys.map((key) => source[key]);
}

/** A string, number or boolean field's value: the last non-null one assigned (undefined when none). */
export function scalarField(source: Record<string, unknown>, name: string, sorted = false): unknown {
  return fieldValues(source, name, sorted)
    .filter((v) => v !== null && v !== undefined)
    .at(-1);
}

/**
 * `source` as a struct of `types` sees it: each field's key holding the value Go assigns it (from keys of
 * any case; unchanged when none is non-null), every other key as it was; and the first field given a
 * value of another JSON type, the original's failed decoding (null when all fit).
 */
export function decodeFields(
  source: Record<string, unknown>,
  types: FieldTypes,
): { claims: Record<string, unknown>; misfit: string | null } {
  let misfit: string | null = null;
  for (const [name, type] of Object.entries(types)) {
    const values = fieldValues(source, name).filter((v) => v !== null && v !== undefined);
    if (misfit === null && values.some((v) => !fits(type, v))) misfit = name;
  }
  return { claims: underNames(source, Object.keys(types)), misfit };
}

/** `source` with each of `names` holding the last non-null value of the keys that fill it (when any), every other key as it was. */
export function underNames(source: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  const claims = { ...source };
  for (const name of names) {
    const value = scalarField(source, name);
    if (value !== undefined) claims[name] = value;
  }
  return claims;
}

/** Go's strconv.ParseBool spellings. */
const GO_BOOLEANS = new Set(['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False']);

/** A string as Go's strconv.ParseBool reads it; null where it fails (`""` included, the value of an absent string field). */
export function parseGoBool(text: string): boolean | null {
  return GO_BOOLEANS.has(text) ? ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text) : null;
}

/** The text of a JSON number, the only strings a json.Number field takes. */
export const isJsonNumberText = (text: string) => /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text);

/** A number of seconds, or an RFC 3339 time, or "" (the original's reading of a profile's updated_at). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function fits(type: FieldType, value: unknown): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'bool':
      return typeof value === 'boolean';
    case 'number':
      // A float64 field; a literal past its range (1e400, Infinity once parsed) fails the decoding.
      return typeof value === 'number' && Number.isFinite(value);
    case 'numeric_date':
      return (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && isJsonNumberText(value));
    case 'claim_strings':
      return typeof value === 'string' || (Array.isArray(value) && value.every((a) => typeof a === 'string'));
    case 'object':
      return typeof value === 'object' && !Array.isArray(value);
    case 'time':
      return typeof value === 'number' || (typeof value === 'string' && (value === '' || RFC3339.test(value)));
    case 'bool_or_bool_string':
      return typeof value === 'boolean' || (typeof value === 'string' && GO_BOOLEANS.has(value));
  }
}

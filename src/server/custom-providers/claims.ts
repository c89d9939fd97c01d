// A custom provider's answer (userinfo JSON or id_token payload) read the way the original reads it: into
// its fixed set of profile claims, by name and type. Every other key is dropped (custom_claims_allowlist
// brings chosen ones back, profile.ts), a key of the wrong type refuses the answer as a whole, and empty
// values are left out, as its JSON form leaves them out. attribute_mapping works on that form, so a source
// or target outside the set maps nothing (docs/custom-providers.md#signing-in). A claim's name is matched
// as Go matches a struct field's, ignoring case (providers/go-json-fields.ts): `EMAIL` is the email.
import { ProviderError } from '../providers/outbound.js';
import { fieldValues } from '../providers/go-json-fields.js';

/** The claims under their names, empty ones absent. */
export type Claims = Record<string, unknown>;

/** The original's standard claims of string type (its generic Claims struct); also the id_token grant's reader (grants/id-token-claims.ts). */
export const STANDARD_STRING_CLAIMS = [
  'iss',
  'sub',
  'name',
  'family_name',
  'given_name',
  'middle_name',
  'nickname',
  'preferred_username',
  'profile',
  'picture',
  'website',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
  'email',
  'phone',
  'full_name',
  'avatar_url',
  'slug',
  'provider_id',
  'user_name',
];
const NUMBERS = ['iat', 'exp'];
const BOOLEANS = ['email_verified', 'phone_verified'];

class WrongType extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The claims of `answer`; throws ProviderError when a claim of the set has a value of another type.
 * `written`: the answer was a map the original wrote out before reading it (a userinfo answer), so keys
 * of one name in different cases are met in byte order (`email` after `EMAIL`), not the answer's own.
 */
export function readClaims(answer: Record<string, unknown>, written = false): Claims {
  try {
    return typed(answer, written);
  } catch (err) {
    if (err instanceof WrongType) throw new ProviderError(`the provider's claim ${err.message}`);
    throw err;
  }
}

/**
 * attribute_mapping applied: `{target: source}` copies the claim `source` to `target` when it is there, a
 * value other than a string is set as it is; the result read again, so a target outside the set is
 * dropped, and a result of the wrong type leaves the claims unmapped, as the original does.
 */
export function mapClaims(claims: Claims, mapping: Record<string, unknown>): Claims {
  const mapped: Record<string, unknown> = { ...claims };
  for (const [target, source] of Object.entries(mapping)) {
    if (typeof source !== 'string') mapped[target] = source;
    else if (Object.hasOwn(mapped, source)) mapped[target] = mapped[source];
  }
  try {
    return typed(mapped, true);
  } catch (err) {
    if (err instanceof WrongType) return claims;
    throw err;
  }
}

function typed(source: Record<string, unknown>, written: boolean): Claims {
  const out: Claims = {};
  // Every value assigned to a claim (from its keys of any case) must be of its type; the last stays, and
  // null is the claim's empty value, as absent.
  const given = (key: string) => fieldValues(source, key, written).filter((v) => v !== undefined && v !== null);
  const last = (values: unknown[]) => values[values.length - 1];
  for (const key of STANDARD_STRING_CLAIMS) {
    const values = given(key);
    if (values.some((v) => typeof v !== 'string')) throw new WrongType(`${key} is not a string`);
    if (last(values)) out[key] = last(values);
  }
  for (const key of NUMBERS) {
    const values = given(key);
    if (values.some((v) => typeof v !== 'number')) throw new WrongType(`${key} is not a number`);
    if (last(values)) out[key] = last(values);
  }
  for (const key of BOOLEANS) {
    const values = given(key);
    if (values.some((v) => typeof v !== 'boolean')) throw new WrongType(`${key} is not a boolean`);
    if (last(values)) out[key] = true;
  }
  const auds = given('aud').map((v) => (typeof v === 'string' ? [v] : v));
  if (auds.some((aud) => !Array.isArray(aud) || !aud.every((a) => typeof a === 'string'))) {
    throw new WrongType('aud is not a string or a list of strings');
  }
  const aud = last(auds) as string[] | undefined;
  if (aud && aud.length > 0) out.aud = aud;
  const times = given('updated_at').map(timestamp);
  if (times.length > 0) out.updated_at = last(times);
  const custom = given('custom_claims');
  if (custom.some((v) => !isObject(v))) throw new WrongType('custom_claims is not an object');
  const customClaims = last(custom) as Record<string, unknown> | undefined;
  if (customClaims && Object.keys(customClaims).length > 0) out.custom_claims = customClaims;
  return out;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** updated_at: seconds since the epoch or an RFC 3339 time, kept as an RFC 3339 UTC time ('' is the zero time). */
function timestamp(value: unknown): string {
  let ms: number;
  if (typeof value === 'number') ms = Math.trunc(value) * 1000;
  else if (value === '') return '0001-01-01T00:00:00Z';
  else if (typeof value === 'string' && RFC3339.test(value)) ms = Date.parse(value);
  else throw new WrongType('updated_at is not a time');
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) throw new WrongType('updated_at is not a time');
  return date.toISOString().replace(/\.?0+Z$/, 'Z');
}

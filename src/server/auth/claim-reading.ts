// A verified bearer token's claims as the original holds them once golang-jwt v5 has decoded them into its
// access-token claims struct (claim-fields.ts), and its checks of exp and nbf on that struct. Go's decoder
// fills a field from a claim of any spelling, the last one in the payload staying, and a NumericDate takes
// a number written as a string; so `{"SUB": …}` names the user, and a token whose only expiry is an `EXP`
// in the past is expired (docs/tokens-and-sessions.md#verification). Only a holder of the signing key can
// write such claims: this is for tokens operators' own tools mint, and the signature is checked before.
import { CLAIM_FIELDS, claimField, type ClaimField } from './claim-fields.js';

/**
 * The claims under the fields' own names, with Go's values: the claims themselves when every field is
 * spelled as declared and no NumericDate is a string (every token the service signs), else a copy.
 * The claims' types have been checked (claim-types.ts), so a string NumericDate holds a number.
 */
export function readClaims<T extends Record<string, unknown>>(claims: T): T {
  for (const key in claims) {
    const field = CLAIM_FIELDS.get(key);
    const rewritten = field === undefined ? claimField(key) !== undefined : field === 'numeric_date' && typeof claims[key] === 'string';
    if (rewritten) return goFields(claims) as T;
  }
  return claims;
}

/**
 * Each field's spellings assigned in the payload's order, as Go's decoder assigns them. JSON.parse has
 * already kept only the last of a name written twice exactly alike, at its first place.
 */
function goFields(claims: Record<string, unknown>): Record<string, unknown> {
  const read = new Map<string, unknown>();
  for (const key of Object.keys(claims)) {
    const name = claimField(key);
    if (name === undefined) read.set(key, claims[key]);
    else read.set(name, assigned(CLAIM_FIELDS.get(name)!, read.get(name), claims[key]));
  }
  return Object.fromEntries(read); // defines each entry as its own property, `__proto__` included
}

/**
 * A field's value once `value` is decoded into it. null leaves a string, a bool and `aud` as they were (the
 * last is ClaimStrings' own rule) and empties a pointer, map or list (NumericDates, the metadata, `amr`);
 * an object is added into the map a metadata field already holds; a NumericDate string becomes its number.
 */
function assigned(field: ClaimField, current: unknown, value: unknown): unknown {
  if (value === null) return field === 'string' || field === 'bool' || field === 'audience' ? (current ?? null) : null;
  if (field === 'numeric_date' && typeof value === 'string') return Number(value);
  if (field === 'map' && isObject(current) && isObject(value)) return { ...current, ...value };
  return value;
}

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * Why golang-jwt's validator refuses the read claims now, in its words, or null: past `exp`, before `nbf`,
 * both named when both fail (it joins them). A NumericDate is truncated to whole seconds, and a token is
 * expired from its exp's second on and valid from its nbf's. `iat` is never checked, as the original asks
 * for no such check. A token without exp never expires (the original never requires one).
 */
export function timeProblem(claims: Record<string, unknown>, nowMs = Date.now()): string | null {
  const now = Math.floor(nowMs / 1000);
  const { exp, nbf } = claims;
  const expired = typeof exp === 'number' && now >= Math.floor(exp);
  const early = typeof nbf === 'number' && now < Math.floor(nbf);
  if (!expired && !early) return null;
  const reasons = [...(expired ? ['token is expired'] : []), ...(early ? ['token is not valid yet'] : [])];
  return `token has invalid claims: ${reasons.join(', ')}`;
}

// The fields of the original's access-token claims struct (its AccessTokenClaims, which embeds golang-jwt
// v5's RegisteredClaims), as Go's encoding/json fills them from a bearer token's payload: a claim fills a
// field by the field's exact name, else ignoring case (`SUB`, `Session_Id`, `EXP`, with `ſ` as `s`), so a
// token an operator's own tool wrote with such names is read as the original reads it
// (docs/tokens-and-sessions.md#verification).
import { foldedName } from '../http/field-names.js';

/**
 * How a field takes a JSON value: a plain Go string, bool or map; golang-jwt's NumericDate (a number, or a
 * string holding one, as a json.Number takes it) and ClaimStrings (`aud`: a string or a list of strings);
 * the original's AMRClaim (`amr`).
 */
export type ClaimField = 'string' | 'bool' | 'map' | 'numeric_date' | 'audience' | 'amr';

export const CLAIM_FIELDS: ReadonlyMap<string, ClaimField> = new Map<string, ClaimField>([
  ['iss', 'string'],
  ['sub', 'string'],
  ['aud', 'audience'],
  ['exp', 'numeric_date'],
  ['nbf', 'numeric_date'],
  ['iat', 'numeric_date'],
  ['jti', 'string'],
  ['email', 'string'],
  ['phone', 'string'],
  ['app_metadata', 'map'],
  ['user_metadata', 'map'],
  ['role', 'string'],
  ['aal', 'string'],
  ['amr', 'amr'],
  ['session_id', 'string'],
  ['is_anonymous', 'bool'],
  ['client_id', 'string'],
  ['scope', 'string'],
]);

/**
 * The field the claim `key` fills, or undefined when it fills none. Every field's name is lower-case ASCII,
 * so a key fills one exactly when its folded form is that name.
 */
export function claimField(key: string): string | undefined {
  if (CLAIM_FIELDS.has(key)) return key;
  const folded = foldedName(key);
  return CLAIM_FIELDS.has(folded) ? folded : undefined;
}

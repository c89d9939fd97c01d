// A custom provider's answer at /callback made into a profile, in the original's steps
// (docs/custom-providers.md#signing-in): the answer read into the fixed claim set (claims.ts), the
// allowlisted claims of the whole answer copied into custom_claims, then attribute_mapping. The email comes
// from the mapped claims for a userinfo answer, but from the id_token's own claims before mapping, so a
// mapping cannot change the address an id_token vouches for. The identity's id is the (mapped) `sub`.
// An id_token of an issuer the original has a reader of its own for (Google's, Azure's, Apple's...: it
// picks the reader by the token's issuer) is read by that provider's reader instead of the claim set,
// its address and verification as that reader finds them; the allowlist and mapping follow as for any.
// (The id_token grant applies neither step, as the original: it reads the standard claims only, oidc.ts standardProfile.)
import { ProviderError } from '../providers/outbound.js';
import { issuerReader } from '../providers/issuer-readers.js';
import type { ExternalEmail, ExternalProfile } from '../providers/types.js';
import type { CustomProviderRow } from '../../db/custom-oauth-providers.js';
import { mapClaims, readClaims, type Claims } from './claims.js';

export type AnswerKind = 'userinfo' | 'id_token';

export function customProfile(row: CustomProviderRow, answer: Record<string, unknown>, kind: AnswerKind): ExternalProfile {
  const reader = kind === 'id_token' ? issuerReader(row.issuer ?? '') : null;
  const read = reader?.profile(answer);
  let claims = read ? read.claims : readClaims(answer, kind === 'userinfo');
  const allowed = row.custom_claims_allowlist.filter((key) => answer[key] !== undefined);
  if (allowed.length > 0) {
    const kept = Object.fromEntries(allowed.map((key) => [key, answer[key]]));
    claims = { ...claims, custom_claims: { ...(claims.custom_claims as Record<string, unknown> | undefined), ...kept } };
  }
  const vouched = read ? read.emails : emailsOf(claims);
  if (Object.keys(row.attribute_mapping).length > 0) claims = mapClaims(claims, row.attribute_mapping);
  const emails = kind === 'id_token' ? vouched : emailsOf(claims);
  if (typeof claims.sub !== 'string') throw new ProviderError('the provider named no subject');
  // Both flags are always in identity_data, as the original stores its claims; unverified without an address.
  const data = {
    ...claims,
    email_verified: emails.length > 0 && claims.email_verified === true,
    phone_verified: claims.phone_verified === true,
  };
  return { subject: claims.sub, emails, claims: data };
}

function emailsOf(claims: Claims): ExternalEmail[] {
  return typeof claims.email === 'string' ? [{ email: claims.email, verified: claims.email_verified === true, primary: true }] : [];
}

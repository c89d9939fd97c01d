// The webauthn factor type's columns of mfa_factors (docs/passkeys.md#webauthn-as-a-second-factor): the
// credential a factor was verified with, kept as jsonb in web_authn_credential (our own shape, below),
// its AAGUID, and the last ceremony's data.
import type { Queryable } from './pool.js';

/** mfa_factors.web_authn_credential of a verified webauthn factor. Binary values are base64url. */
export interface FactorCredential {
  credential_id: string;
  public_key: string;
  sign_count: number;
  transports: string[];
  attestation_type: string;
  backup_eligible: boolean;
  backed_up: boolean;
}

/** The credentials of the user's verified webauthn factors, which a new registration must not repeat. */
export async function verifiedFactorCredentials(q: Queryable, userId: string): Promise<FactorCredential[]> {
  const { rows } = await q.query<{ c: FactorCredential }>(
    `select web_authn_credential as c from mfa_factors
     where user_id = $1 and factor_type = 'webauthn' and status = 'verified' and web_authn_credential is not null`,
    [userId],
  );
  return rows.map((r) => r.c);
}

/** Stores the credential of a factor's registration; false when the factor is no longer unverified. */
export async function saveFactorCredential(
  q: Queryable,
  factorId: string,
  credential: FactorCredential,
  aaguid: string | null,
  ceremony: unknown,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `update mfa_factors set web_authn_credential = $2, web_authn_aaguid = $3, last_webauthn_challenge_data = $4, updated_at = now()
     where id = $1 and status = 'unverified'`,
    [factorId, JSON.stringify(credential), aaguid, JSON.stringify(ceremony)],
  );
  return rowCount === 1;
}

/**
 * Moves the factor credential's signature counter on from `expected` to `next`, atomically, so two
 * assertions with one counter value cannot both verify (0 after 0: an authenticator keeping no counter).
 */
export async function advanceFactorCounter(
  q: Queryable,
  factorId: string,
  expected: number,
  next: number,
  ceremony: unknown,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `update mfa_factors
     set web_authn_credential = jsonb_set(web_authn_credential, '{sign_count}', to_jsonb($3::bigint)),
         last_webauthn_challenge_data = $4, updated_at = now()
     where id = $1 and (web_authn_credential ->> 'sign_count')::bigint = $2::bigint
       and ($3::bigint > $2::bigint or ($3::bigint = 0 and $2::bigint = 0))`,
    [factorId, expected, next, JSON.stringify(ceremony)],
  );
  return rowCount === 1;
}

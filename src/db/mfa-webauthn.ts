// The webauthn factor type's columns of mfa_factors (docs/passkeys.md#webauthn-as-a-second-factor): the
// credential a factor was verified with, kept as jsonb in web_authn_credential (our own shape, below),
// its AAGUID, and the last successful ceremony (last_webauthn_challenge_data, the original's shape:
// src/server/mfa/factor-types/webauthn.ts).
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
     where user_id = $1 and factor_type = 'webauthn' and status = 'verified' and web_authn_credential is not null
     order by created_at`,
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
 * Records a successful assertion on the factor that was challenged: its last ceremony. The credential's
 * signature counter is left as it is, as the original leaves it. False when the factor is gone meanwhile.
 */
export async function recordFactorCeremony(q: Queryable, factorId: string, ceremony: unknown): Promise<boolean> {
  const { rowCount } = await q.query(
    `update mfa_factors set last_webauthn_challenge_data = $2, updated_at = now() where id = $1 and status = 'verified'`,
    [factorId, JSON.stringify(ceremony)],
  );
  return rowCount === 1;
}

// webauthn_credentials: the passkeys registered by users (docs/passkeys.md).
import type { Queryable } from './pool.js';

export interface WebAuthnCredentialRow {
  id: string;
  user_id: string;
  credential_id: Buffer;
  public_key: Buffer;
  attestation_type: string;
  aaguid: string | null;
  /** bigint: pg returns int8 as text */
  sign_count: string;
  transports: string[];
  backup_eligible: boolean;
  backed_up: boolean;
  friendly_name: string;
  created_at: Date;
  updated_at: Date;
  last_used_at: Date | null;
}

export interface NewCredential {
  userId: string;
  credentialId: Buffer;
  publicKey: Buffer;
  attestationType: string;
  aaguid: string | null;
  signCount: number;
  transports: string[];
  backupEligible: boolean;
  backedUp: boolean;
  friendlyName: string;
}

export async function listCredentials(q: Queryable, userId: string): Promise<WebAuthnCredentialRow[]> {
  const { rows } = await q.query<WebAuthnCredentialRow>({
    name: 'webauthn_credentials_of_user',
    text: 'select * from webauthn_credentials where user_id = $1 order by created_at, id',
    values: [userId],
  });
  return rows;
}

export async function countCredentials(q: Queryable, userId: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>('select count(*)::int as n from webauthn_credentials where user_id = $1', [userId]);
  return rows[0].n;
}

/** The credential an assertion names, by the authenticator's raw credential id. */
export async function findCredentialByCredentialId(q: Queryable, credentialId: Buffer): Promise<WebAuthnCredentialRow | null> {
  const { rows } = await q.query<WebAuthnCredentialRow>({
    name: 'webauthn_credential_by_raw_id',
    text: 'select * from webauthn_credentials where credential_id = $1',
    values: [credentialId],
  });
  return rows[0] ?? null;
}

/** Inserts a credential; null when that raw credential id is already registered (to anyone). */
export async function insertCredential(q: Queryable, c: NewCredential): Promise<WebAuthnCredentialRow | null> {
  const { rows } = await q.query<WebAuthnCredentialRow>(
    `insert into webauthn_credentials (user_id, credential_id, public_key, attestation_type, aaguid, sign_count, transports,
                                       backup_eligible, backed_up, friendly_name)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     on conflict (credential_id) do nothing returning *`,
    [
      c.userId,
      c.credentialId,
      c.publicKey,
      c.attestationType,
      c.aaguid,
      c.signCount,
      JSON.stringify(c.transports),
      c.backupEligible,
      c.backedUp,
      c.friendlyName,
    ],
  );
  return rows[0] ?? null;
}

/**
 * Records a sign-in with the credential: its signature counter and last use. The counter only moves up:
 * an assertion whose counter did not advance (a cloned authenticator, or a race) still signs in, as in
 * the original, and keeps the higher stored count. False when the passkey was deleted meanwhile.
 */
export async function recordCredentialUse(q: Queryable, id: string, newCount: number): Promise<boolean> {
  const { rowCount } = await q.query({
    name: 'webauthn_credential_used',
    text: `update webauthn_credentials set sign_count = greatest(sign_count, $2), last_used_at = now(), updated_at = now()
           where id = $1`,
    values: [id, newCount],
  });
  return rowCount === 1;
}

/**
 * Renames the user's passkey `id`; null when it is not the user's, or no longer exists. One statement, so a
 * deletion that commits first leaves nothing to rename rather than a row read before it.
 */
export async function renameCredential(
  q: Queryable,
  id: string,
  userId: string,
  friendlyName: string,
): Promise<WebAuthnCredentialRow | null> {
  const { rows } = await q.query<WebAuthnCredentialRow>(
    'update webauthn_credentials set friendly_name = $3, updated_at = now() where id = $1 and user_id = $2 returning *',
    [id, userId, friendlyName],
  );
  return rows[0] ?? null;
}

/** Deletes the user's passkey `id`; false when it is not the user's, or another deletion took it first. */
export async function deleteCredential(q: Queryable, id: string, userId: string): Promise<boolean> {
  const { rowCount } = await q.query('delete from webauthn_credentials where id = $1 and user_id = $2', [id, userId]);
  return rowCount === 1;
}

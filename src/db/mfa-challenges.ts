// mfa_challenges: one row per challenge issued for a factor (docs/mfa.md). A challenge verifies once:
// verified_at is set in the transaction that upgrades the session.
import type { Queryable } from './pool.js';

export interface ChallengeRow {
  id: string;
  factor_id: string;
  created_at: Date;
  verified_at: Date | null;
  ip_address: string;
  otp_code: string | null;
  web_authn_session_data: unknown;
}

export interface NewChallenge {
  id: string;
  factorId: string;
  ip: string;
  otpCode?: string | null;
  webAuthnSessionData?: unknown;
}

/** Inserts the challenge and stamps the factor's last_challenged_at (and updated_at, as the original's update does) with the same time. */
export async function insertChallenge(q: Queryable, c: NewChallenge): Promise<ChallengeRow> {
  const { rows } = await q.query<ChallengeRow>(
    `with challenge as (insert into mfa_challenges (id, factor_id, ip_address, otp_code, web_authn_session_data)
                        values ($1, $2, $3, $4, $5) returning *),
          stamped as (update mfa_factors set last_challenged_at = (select created_at from challenge),
                                             updated_at = (select created_at from challenge) where id = $2)
     select * from challenge`,
    [c.id, c.factorId, c.ip, c.otpCode ?? null, c.webAuthnSessionData === undefined ? null : JSON.stringify(c.webAuthnSessionData)],
  );
  return rows[0];
}

export async function findChallenge(q: Queryable, factorId: string, id: string): Promise<ChallengeRow | null> {
  const { rows } = await q.query<ChallengeRow>('select * from mfa_challenges where id = $1 and factor_id = $2', [id, factorId]);
  return rows[0] ?? null;
}

export async function deleteChallenge(q: Queryable, id: string): Promise<void> {
  await q.query('delete from mfa_challenges where id = $1', [id]);
}

/** Deletes a spent challenge: false when another request spent it first. */
export async function deleteSpentChallenge(q: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await q.query('delete from mfa_challenges where id = $1 and verified_at is null', [id]);
  return rowCount === 1;
}

/** Marks the challenge verified unless it already was: false when another request verified it first. */
export async function markChallengeVerified(q: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await q.query('update mfa_challenges set verified_at = now() where id = $1 and verified_at is null', [id]);
  return rowCount === 1;
}

// webauthn_challenges: the challenge of a WebAuthn ceremony, kept server-side between the options request
// and the verify request that answers it (docs/passkeys.md#challenges).
import type { Queryable } from './pool.js';

export type ChallengeType = 'signup' | 'registration' | 'authentication';

/** What a verify request needs from the options request: the challenge the client must have signed. */
export interface ChallengeSession {
  /** base64url, as it appears in the client's clientDataJSON */
  challenge: string;
  user_verification: 'required' | 'preferred' | 'discouraged';
}

export interface ChallengeRow {
  id: string;
  user_id: string | null;
  challenge_type: ChallengeType;
  session_data: ChallengeSession;
  created_at: Date;
  expires_at: Date;
}

/** Expired challenges are kept an hour, so a late answer is told "expired" rather than "not found". */
const KEEP_EXPIRED = '1 hour';

export async function insertChallenge(
  q: Queryable,
  c: { userId: string | null; type: ChallengeType; session: ChallengeSession; ttlSeconds: number },
): Promise<ChallengeRow> {
  // The options endpoints are open to anyone (sign-in) or to every user: each insert also removes a few long
  // expired rows, so abandoned ceremonies cannot pile up without a cleanup job.
  const { rows } = await q.query<ChallengeRow>({
    name: 'webauthn_challenge_insert',
    text: `with swept as (
             delete from webauthn_challenges where id in (
               select id from webauthn_challenges where expires_at < now() - interval '${KEEP_EXPIRED}' limit 10 for update skip locked))
           insert into webauthn_challenges (user_id, challenge_type, session_data, expires_at)
           values ($1, $2, $3, now() + make_interval(secs => $4)) returning *`,
    values: [c.userId, c.type, c.session, c.ttlSeconds],
  });
  return rows[0];
}

/** The challenge, left in the table: null when there is none of this type for this user (as consumeChallenge). */
export async function findChallenge(q: Queryable, id: string, type: ChallengeType, userId: string | null): Promise<ChallengeRow | null> {
  const { rows } = await q.query<ChallengeRow>({
    name: 'webauthn_challenge_find',
    text: `select * from webauthn_challenges where id = $1 and challenge_type = $2 and user_id is not distinct from $3::uuid`,
    values: [id, type, userId],
  });
  return rows[0] ?? null;
}

/**
 * Takes the challenge out of the table and returns it, or null when there is none of this type for this
 * user (`userId` null: a challenge that belongs to nobody). Deleting is what makes a challenge single-use:
 * of two requests answering it at once, one gets the row. The caller checks expires_at.
 */
export async function consumeChallenge(q: Queryable, id: string, type: ChallengeType, userId: string | null): Promise<ChallengeRow | null> {
  const { rows } = await q.query<ChallengeRow>({
    name: 'webauthn_challenge_consume',
    text: `delete from webauthn_challenges
           where id = $1 and challenge_type = $2 and user_id is not distinct from $3::uuid returning *`,
    values: [id, type, userId],
  });
  return rows[0] ?? null;
}

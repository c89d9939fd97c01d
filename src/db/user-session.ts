// What bearer authentication reads, in one round trip: the claims' user, the claims' session (its id,
// when it exists) and, for GET /user, the user's identities. The checks on the result stay in
// src/server/auth/bearer.ts.
import type { Queryable } from './pool.js';
import { USER_COLUMNS_U, type UserRow } from './users.js';
import { identitiesJsonSql, identityRows, type IdentityJsonRow, type IdentityRow } from './identities.js';
import { NOT_AFTER_ENDED_SQL, sessionEndedSql, type SessionEnd, type SessionPolicy, type SessionRow } from './sessions.js';
import { factorRows, factorsJsonSql, type FactorJsonRow, type FactorRow } from './mfa-factors.js';

export interface UserSession {
  user: UserRow;
  /** the session with the claims' session_id, null when there is none (any user's, as findSession found it) */
  session: Pick<SessionRow, 'id'> | null;
  /** why the session has ended, null while it lives (or when there is none): without a session policy only not_after ends it */
  sessionEnded: SessionEnd | null;
}

type Row = UserRow & {
  found_session_id: string | null;
  found_session_ended: SessionEnd | null;
  found_identities?: IdentityJsonRow[];
  found_factors?: FactorJsonRow[];
};

/**
 * Under a session policy the session is read with why it has ended as the database decides it
 * (sql/00005_session_policy_and_cleanup.sql, 00007_session_low_aal.sql): last active at its last refresh, or
 * its creation, the original's measure outside the refresh grant. Without a policy only not_after can
 * end it (set from a SAML assertion, or kept from GoTrue): NOT_AFTER_ENDED_SQL.
 */
const POLICY_VALUES = (p: SessionPolicy) => [p.timeboxSeconds, p.inactivitySeconds, p.singlePerUser, p.tags, p.lowAalSeconds];

/** Why the claims' session `s` has ended, for the claims' user `u` ($3..$7 are POLICY_VALUES). */
const POLICY_ENDED_SQL = `coalesce(${sessionEndedSql({ timebox: 3, inactivity: 4, lowAal: 7 }, 'coalesce(s.refreshed_at, s.created_at)', 'u.id')},
                                   case when s.id is not null and $5::boolean
                                             and newer_session_exists(s.user_id, s.id, coalesce(s.refreshed_at, s.created_at), s.tag, $3, $4, $6::text[], $7)
                                        then 'newer_login' end)`;

/**
 * The user and the session; null when there is no such user (the session is then not reported).
 * `sessionId` is null when the claims' session_id is not a UUID: the caller still needs the user
 * (user_not_found is answered first) and no session can match. The session is not required to be the
 * user's own: findSession never required it either.
 */
export async function findUserSession(
  q: Queryable,
  userId: string,
  sessionId: string | null,
  policy?: SessionPolicy | null,
): Promise<UserSession | null> {
  if (policy) {
    const { rows } = await q.query<Row>({
      name: 'user_session_policy',
      text: `select ${USER_COLUMNS_U}, s.id as found_session_id,
                    ${POLICY_ENDED_SQL} as found_session_ended
             from users u left join sessions s on s.id = $2
             where u.id = $1`,
      values: [userId, sessionId, ...POLICY_VALUES(policy)],
    });
    return rows[0] ? split(rows[0]) : null;
  }
  const { rows } = await q.query<Row>({
    name: 'user_session',
    text: `select ${USER_COLUMNS_U}, s.id as found_session_id, ${NOT_AFTER_ENDED_SQL} as found_session_ended
           from users u left join sessions s on s.id = $2
           where u.id = $1`,
    values: [userId, sessionId],
  });
  return rows[0] ? split(rows[0]) : null;
}

/**
 * findUserSession plus the user's identities, ordered and typed as findIdentitiesByUser returns them. They
 * come as one json array (text timestamps, parsed by identityRows in identities.ts) rather than through a
 * lateral join, which would repeat the user's columns once per identity and clash with them on id, email,
 * created_at, ...
 */
export async function findUserSessionIdentities(
  q: Queryable,
  userId: string,
  sessionId: string | null,
  policy?: SessionPolicy | null,
): Promise<(UserSession & { identities: IdentityRow[]; factors: FactorRow[] }) | null> {
  const { rows } = await q.query<Row>(
    policy
      ? {
          name: 'user_session_identities_policy',
          text: `select ${USER_COLUMNS_U}, s.id as found_session_id,
                        ${POLICY_ENDED_SQL} as found_session_ended,
                        ${identitiesJsonSql('u.id')} as found_identities,
                        ${factorsJsonSql('u.id')} as found_factors
                 from users u left join sessions s on s.id = $2
                 where u.id = $1`,
          values: [userId, sessionId, ...POLICY_VALUES(policy)],
        }
      : {
          name: 'user_session_identities',
          text: `select ${USER_COLUMNS_U}, s.id as found_session_id, ${NOT_AFTER_ENDED_SQL} as found_session_ended,
                        ${identitiesJsonSql('u.id')} as found_identities,
                        ${factorsJsonSql('u.id')} as found_factors
                 from users u left join sessions s on s.id = $2
                 where u.id = $1`,
          values: [userId, sessionId],
        },
  );
  if (!rows[0]) return null;
  // One rest copy of the row's ~30 members, not two (this is every GET /user).
  const { found_identities: identities = [], found_factors: factors, found_session_id: id, found_session_ended: ended, ...user } = rows[0];
  return {
    user,
    session: id === null ? null : { id },
    sessionEnded: ended,
    identities: identityRows(identities),
    factors: factorRows(factors),
  };
}

/** The user row as findUserById returns it (only the users columns) and the session. */
function split(row: Row): UserSession {
  const { found_session_id: id, found_session_ended: ended, ...user } = row;
  return { user, session: id === null ? null : { id }, sessionEnded: ended };
}

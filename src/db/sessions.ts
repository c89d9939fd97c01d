// sessions and their AMR claims (the methods used to authenticate, for the JWT's amr).
import type { Queryable } from './pool.js';
import type { UserRow } from './users.js';

/** An AMR claim as the access token carries it. */
export interface AmrRow {
  method: string;
  timestamp: number;
}

/**
 * The session limits as statement parameters (src/server/sessions/policy.ts builds them from the
 * settings): a null duration is no limit.
 */
export interface SessionPolicy {
  timeboxSeconds: number | null;
  inactivitySeconds: number | null;
  singlePerUser: boolean;
  tags: string[];
}

/**
 * Why a session has ended (sql/00005_session_policy_and_cleanup.sql decides): past its time box or
 * not_after ('expired'), not refreshed within the inactivity timeout ('inactive'), or replaced by a
 * newer sign-in of its user ('newer_login').
 */
export type SessionEnd = 'expired' | 'inactive' | 'newer_login';

export interface SessionRow {
  id: string;
  user_id: string;
  created_at: Date;
  updated_at: Date;
  refreshed_at: Date | null;
  factor_id: string | null;
  aal: 'aal1' | 'aal2' | 'aal3';
  not_after: Date | null;
  user_agent: string | null;
  ip: string | null;
  tag: string | null;
}

export async function findSession(q: Queryable, id: string): Promise<SessionRow | null> {
  const { rows } = await q.query<SessionRow>({ name: 'sessions_by_id', text: 'select * from sessions where id = $1', values: [id] });
  return rows[0] ?? null;
}

/**
 * Whether the session exists and, under a policy, why the time limits have ended it (the admin bearer
 * check: the original applies the time limits there, not SESSIONS_SINGLE_PER_USER).
 */
export async function findSessionEnded(q: Queryable, id: string, policy: SessionPolicy): Promise<{ ended: SessionEnd | null } | null> {
  const { rows } = await q.query<{ ended: SessionEnd | null }>({
    name: 'sessions_ended_by_id',
    text: `select session_ended(not_after, created_at, coalesce(refreshed_at, created_at), $2, $3) as ended from sessions where id = $1`,
    values: [id, policy.timeboxSeconds, policy.inactivitySeconds],
  });
  return rows[0] ?? null;
}

/** Deletes sessions of a user (cascading to their refresh tokens): all, only `keep`, or all but `keep`. */
export async function deleteSessions(q: Queryable, userId: string, scope: 'all' | 'only' | 'others', sessionId?: string): Promise<number> {
  if (scope === 'all') return (await q.query('delete from sessions where user_id = $1', [userId])).rowCount ?? 0;
  const op = scope === 'only' ? '=' : '<>';
  return (await q.query(`delete from sessions where user_id = $1 and id ${op} $2`, [userId, sessionId])).rowCount ?? 0;
}

/**
 * Locks a session row until the transaction ends and returns its user (null when the session is gone).
 * The refresh grant serialises on this lock, so concurrent refreshes of one session, from any thread or
 * instance, see each other's rotation.
 */
export async function lockSessionUser(q: Queryable, sessionId: string): Promise<UserRow | null> {
  const { rows } = await q.query<UserRow>({
    name: 'sessions_lock_user',
    text: 'select u.* from sessions s join users u on u.id = s.user_id where s.id = $1 for update of s',
    values: [sessionId],
  });
  return rows[0] ?? null;
}

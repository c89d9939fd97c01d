// sessions and their AMR claims (the methods used to authenticate, for the JWT's amr).
import type { Queryable } from './pool.js';
import type { UserRow } from './users.js';

/** An AMR claim as the access token carries it. */
export interface AmrRow {
  method: string;
  timestamp: number;
}

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

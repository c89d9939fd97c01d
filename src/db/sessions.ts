// sessions and their AMR claims (the methods used to authenticate, for the JWT's amr).
import type { Queryable } from './pool.js';
import { USER_COLUMNS_U, type UserRow } from './users.js';

/** An AMR claim as the access token carries it. */
export interface AmrRow {
  method: string;
  timestamp: number;
}

/**
 * The SQL of a session's AMR claims as one json array of AmrRow, newest first, for statements that answer
 * with a token; `sessionIdSql` is the expression of the session's id in that statement. A timestamp is its
 * second truncated, as the original's Unix() gives it (a cast alone would round).
 */
export function amrJsonSql(sessionIdSql: string): string {
  return `(select coalesce(json_agg(json_build_object('method', authentication_method,
                                                   'timestamp', floor(extract(epoch from updated_at))::int)
                                 order by updated_at desc), '[]')
           from mfa_amr_claims where session_id = ${sessionIdSql})`;
}

/**
 * The session limits as statement parameters (src/server/sessions/policy.ts builds them from the
 * settings): a null duration is no limit.
 */
export interface SessionPolicy {
  timeboxSeconds: number | null;
  inactivitySeconds: number | null;
  /** SESSIONS_ALLOW_LOW_AAL: how long an aal1 session of a user with a verified MFA factor lives */
  lowAalSeconds: number | null;
  singlePerUser: boolean;
  tags: string[];
}

/**
 * Why a session has ended (sql/00005_session_policy_and_cleanup.sql and sql/00007_session_low_aal.sql
 * decide): past its time box or not_after ('expired'), not refreshed within the inactivity timeout
 * ('inactive'), still aal1 past SESSIONS_ALLOW_LOW_AAL while its user has a verified MFA factor
 * ('low_aal'), or replaced by a newer sign-in of its user ('newer_login'). The first that applies, in
 * this order (the original's).
 */
export type SessionEnd = 'expired' | 'inactive' | 'low_aal' | 'newer_login';

/**
 * The SQL of a session's end by time, for statements that read the session as `s` and take the policy's
 * durations as parameters `$timebox`, `$inactivity` and `$lowAal` (their numbers): session_ended, then
 * session_low_aal, which is not called at all when SESSIONS_ALLOW_LOW_AAL is off. `lastActiveAt` is the
 * SQL of the time the session was last active; `userId` that of the user whose factors count.
 */
export function sessionEndedSql(p: { timebox: number; inactivity: number; lowAal: number }, lastActiveAt: string, userId: string): string {
  return `session_ended(s.not_after, s.created_at, ${lastActiveAt}, $${p.timebox}, $${p.inactivity}),
          case when $${p.lowAal}::float8 is not null and session_low_aal(${userId}, s.aal, s.created_at, $${p.lowAal}) then 'low_aal' end`;
}

/**
 * The SQL of a session's end without a session policy, for statements that read the session as `s`: past
 * its not_after ('expired'), which the original checks whatever the settings. One column compared on the
 * row the statement reads anyway, so the hot statements stay as cheap. session_ended applies the same
 * test under a policy.
 */
export const NOT_AFTER_ENDED_SQL = `case when s.not_after < now() then 'expired' end`;

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
 * Deletes sessions (cascading to their refresh tokens): every session of the user, `only` the session
 * `sessionId` names, or every session of the user but that one. `only` goes by the id alone, whoever's
 * session it is, as the original's local logout does (docs/api.md#post-logout).
 */
export async function deleteSessions(q: Queryable, userId: string, scope: 'all' | 'only' | 'others', sessionId?: string): Promise<number> {
  if (scope === 'all') return (await q.query('delete from sessions where user_id = $1', [userId])).rowCount ?? 0;
  if (scope === 'only') return (await q.query('delete from sessions where id = $1', [sessionId])).rowCount ?? 0;
  return (await q.query('delete from sessions where user_id = $1 and id <> $2', [userId, sessionId])).rowCount ?? 0;
}

/**
 * Locks a session row until the transaction ends and returns its user (null when the session is gone),
 * and whether the session has moved to v2 refresh tokens (it holds a key: its reuse ends it whole).
 * The refresh grant serialises on this lock, so concurrent refreshes of one session, from any thread or
 * instance, see each other's rotation.
 */
export async function lockSessionUser(q: Queryable, sessionId: string): Promise<{ user: UserRow; movedToV2: boolean } | null> {
  const { rows } = await q.query<UserRow & { moved_to_v2: boolean }>({
    name: 'sessions_lock_user',
    text: `select ${USER_COLUMNS_U}, s.refresh_token_hmac_key is not null as moved_to_v2
           from sessions s join users u on u.id = s.user_id where s.id = $1 for update of s`,
    values: [sessionId],
  });
  if (!rows[0]) return null;
  const { moved_to_v2, ...user } = rows[0];
  return { user, movedToV2: moved_to_v2 };
}

/**
 * Whether the session was signed in without the password, by a one-time code or link (AMR `otp`,
 * `magiclink` or `recovery`): the original's Session.IsRecovery, for which a user who forgot the password
 * may set a new one without it.
 */
export async function isRecoverySession(q: Queryable, sessionId: string): Promise<boolean> {
  const { rows } = await q.query<{ recovery: boolean }>({
    name: 'sessions_is_recovery',
    text: `select exists (select 1 from mfa_amr_claims
                          where session_id = $1 and authentication_method in ('otp', 'magiclink', 'recovery')) as recovery`,
    values: [sessionId],
  });
  return rows[0]?.recovery === true;
}

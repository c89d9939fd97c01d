// refresh_tokens: only the SHA-256 of a token is stored; parent_id chains a session's rotations.
import type { Queryable } from './pool.js';
import type { SessionClient } from './sign-in.js';
import { announceAudit, storedAudit, type AuditEntry } from './audit-log.js';
import { USER_COLUMNS, type UserRow } from './users.js';
import { NOT_AFTER_ENDED_SQL, sessionEndedSql, type SessionEnd, type SessionPolicy } from './sessions.js';

export interface RefreshTokenRow {
  id: string;
  token_hash: string;
  user_id: string;
  session_id: string;
  parent_id: string | null;
  revoked: boolean;
  created_at: Date;
  updated_at: Date;
}

/**
 * What the refresh grant reads before it locks anything: the token, its user's ban and what the rotation's
 * audit rows name (actorOf), and the same state readTokenState gives (a snapshot that may be stale by the
 * time the caller acts on it).
 */
export interface PresentedToken
  extends TokenState, Pick<UserRow, 'banned_until' | 'email' | 'phone' | 'raw_user_meta_data' | 'is_sso_user'> {
  id: string;
  session_id: string;
  user_id: string;
  /** why the session has ended, null while it lives: without a session policy only not_after ends it */
  session_ended: SessionEnd | null;
  /** read only under a session policy: when the session was created (the SESSIONS_ALLOW_LOW_AAL cap of the access token's exp) */
  session_created_at?: Date;
  /** the OAuth server client the session was issued to, if any: only POST /oauth/token refreshes it (docs/oauth-server.md#token-endpoint) */
  oauth_client_id: string | null;
  /** that session's granted scopes, carried into the access tokens it is refreshed into */
  scopes: string | null;
}

export async function findPresentedToken(q: Queryable, tokenHash: string, policy?: SessionPolicy | null): Promise<PresentedToken | null> {
  if (policy) return findPresentedTokenUnderPolicy(q, tokenHash, policy);
  const { rows } = await q.query<PresentedToken>({
    name: 'refresh_tokens_presented',
    text: `select rt.id, rt.session_id, rt.user_id, u.banned_until, u.email, u.phone, u.raw_user_meta_data, u.is_sso_user, rt.revoked, extract(epoch from clock_timestamp() - rt.updated_at)::float8 as revoked_for,
                  a.id as active_id, a.parent_id as active_parent_id, a.token_hash as active_hash, s.oauth_client_id, s.scopes,
                  ${NOT_AFTER_ENDED_SQL} as session_ended
           from refresh_tokens rt join users u on u.id = rt.user_id left join sessions s on s.id = rt.session_id
           left join lateral (select id, parent_id, token_hash from refresh_tokens
                              where session_id = rt.session_id and not revoked order by id desc limit 1) a on true
           where rt.token_hash = $1`,
    values: [tokenHash],
  });
  return rows[0] ?? null;
}

/**
 * findPresentedToken with the session limits applied (src/server/sessions/policy.ts): the same row and
 * `session_ended`, why the token's session has ended. The session counts as last active at its last
 * refresh, or, never refreshed, when the presented token was last touched (at the earliest its
 * creation), as the original measures inactivity at refresh. A newer sign-in counts only when the
 * time limits and SESSIONS_ALLOW_LOW_AAL have not ended the session first, the original's order.
 */
async function findPresentedTokenUnderPolicy(q: Queryable, tokenHash: string, policy: SessionPolicy): Promise<PresentedToken | null> {
  const { rows } = await q.query<PresentedToken>({
    name: 'refresh_tokens_presented_policy',
    text: `select rt.id, rt.session_id, rt.user_id, u.banned_until, u.email, u.phone, u.raw_user_meta_data, u.is_sso_user, rt.revoked, extract(epoch from clock_timestamp() - rt.updated_at)::float8 as revoked_for,
                  a.id as active_id, a.parent_id as active_parent_id, a.token_hash as active_hash,
                  coalesce(${sessionEndedSql({ timebox: 2, inactivity: 3, lowAal: 6 }, 'l.active_at', 's.user_id')},
                           case when $4::boolean and newer_session_exists(s.user_id, s.id, l.active_at, s.tag, $2, $3, $5::text[], $6)
                                then 'newer_login' end) as session_ended,
                  s.created_at as session_created_at, s.oauth_client_id, s.scopes
           from refresh_tokens rt join users u on u.id = rt.user_id join sessions s on s.id = rt.session_id
           cross join lateral (select coalesce(s.refreshed_at, greatest(rt.updated_at, s.created_at)) as active_at) l
           left join lateral (select id, parent_id, token_hash from refresh_tokens
                              where session_id = rt.session_id and not revoked order by id desc limit 1) a on true
           where rt.token_hash = $1`,
    values: [tokenHash, policy.timeboxSeconds, policy.inactivitySeconds, policy.singlePerUser, policy.tags, policy.lowAalSeconds],
  });
  return rows[0] ?? null;
}

/**
 * Read under the session lock: the presented token's state (revoked, for how long) and the
 * session's active token (the newest non-revoked one), whose parent tells whether the presented token is
 * the immediately previous one.
 */
export interface TokenState {
  revoked: boolean;
  /** seconds since the token was revoked (or last touched), by the database's clock so instances agree */
  revoked_for: number;
  active_id: string | null;
  active_parent_id: string | null;
  active_hash: string | null;
}

/**
 * What only the decision under the lock needs besides: how many children the presented token has had (a
 * rotated token presented again within the reuse interval gets the next one), how many children the
 * active token's parent had before it (the generation its text was derived with, childRefreshToken), and
 * whether the token was revoked after the session last gained an authentication method (an MFA
 * verification): a token revoked before that belongs to the session at its lower level.
 */
export interface LockedTokenState extends TokenState {
  children: number;
  active_generation: number | null;
  revoked_at_current_level: boolean;
}

export async function readTokenState(q: Queryable, tokenId: string, sessionId: string): Promise<LockedTokenState | null> {
  const { rows } = await q.query<LockedTokenState>({
    name: 'refresh_tokens_state_generations',
    text: `select rt.revoked, extract(epoch from clock_timestamp() - rt.updated_at)::float8 as revoked_for, a.id as active_id, a.parent_id as active_parent_id, a.token_hash as active_hash,
                  (select count(*) from refresh_tokens where parent_id = rt.id)::int as children,
                  (select count(*) from refresh_tokens where parent_id = a.parent_id and id < a.id)::int as active_generation,
                  coalesce(rt.updated_at > (select max(updated_at) from mfa_amr_claims where session_id = $2), true) as revoked_at_current_level
           from refresh_tokens rt
           left join lateral (select id, parent_id, token_hash from refresh_tokens
                              where session_id = $2 and not revoked order by id desc limit 1) a on true
           where rt.id = $1`,
    values: [tokenId, sessionId],
  });
  return rows[0] ?? null;
}

/**
 * Revokes the parent and inserts its child in one statement; the session records the refresh (time,
 * user agent, ip, as the original does) and the audit rows `audit` holds are written (the grant's
 * token_revoked + token_refreshed, built by auditEntry; none with AUDIT_LOG_DISABLE_POSTGRES), in that order. Folding the audit in saves the
 * refresh grant a round trip inside its locked transaction.
 * `parent` revokes the token if it is still active; `touched`, `audited` and `child` hang off `parent`, so
 * null, and nothing written (no audit row either), when the parent was already revoked: callers hold the
 * session lock, under which every rotation and reuse revocation happens, so this is exact
 * (test/refresh-rotation.test.ts). lockAndRotate (refresh-rotation.ts) writes the same rows; keep the two
 * in step.
 */
export function rotateRefreshToken(
  q: Queryable,
  parentId: string,
  childHash: string,
  client: SessionClient,
  audit: AuditEntry[],
): Promise<RefreshTokenRow | null> {
  const parent = `update refresh_tokens set revoked = true, updated_at = now() where id = $1 and not revoked returning user_id, session_id`;
  return insertChild(
    q,
    'refresh_tokens_rotate_audit_entries',
    parent,
    [parentId, childHash, client.userAgent, client.ip, storedAudit(audit)],
    audit,
  );
}

/**
 * Another child for a token already rotated (a revoked token presented within the reuse interval, under
 * the session lock): the child is inserted beside the token's earlier ones, the session records the
 * refresh and the audit rows are written, as rotateRefreshToken does; the parent stays revoked and keeps
 * its revocation time, so the interval is not stretched by presenting it again. No other token is touched:
 * the session's active token stays valid, as in the original.
 */
export function branchRefreshToken(
  q: Queryable,
  parentId: string,
  childHash: string,
  client: SessionClient,
  audit: AuditEntry[],
): Promise<RefreshTokenRow | null> {
  const parent = `select user_id, session_id from refresh_tokens where id = $1 and revoked`;
  return insertChild(q, 'refresh_tokens_branch', parent, [parentId, childHash, client.userAgent, client.ip, storedAudit(audit)], audit);
}

/**
 * A child for the token `parent` selects (its user_id and session_id; $1 its id): the session records the
 * refresh ($3 user agent, $4 ip), the audit rows ($5) are written, and the child ($2, its hash) is inserted
 * and answered; nothing when `parent` finds no row.
 */
async function insertChild(
  q: Queryable,
  name: string,
  parent: string,
  values: unknown[],
  audit: AuditEntry[],
): Promise<RefreshTokenRow | null> {
  const { rows } = await q.query<RefreshTokenRow>({
    name,
    text: `with parent as (${parent}),
                touched as (update sessions set refreshed_at = now(), updated_at = now(), user_agent = $3, ip = $4
                            where id = (select session_id from parent)),
                audited as (insert into audit_log_entries (id, payload, ip_address)
                            select (e ->> 'id')::uuid, e -> 'payload', e ->> 'ip' from parent, jsonb_array_elements($5::jsonb) as e),
                child as (insert into refresh_tokens (token_hash, user_id, session_id, parent_id)
                          select $2, user_id, session_id, $1 from parent returning *)
           select * from child`,
    values,
  });
  if (rows[0]) announceAudit(q, audit);
  return rows[0] ?? null;
}

/**
 * A refresh answered with a token that already exists (the previous token answered with the active one):
 * no token is written, but the session records the refresh (time, user agent, ip) and the audit rows are
 * written (token_refreshed), as for any refresh the original answers. One statement, which also reads the
 * user the token response names. Null, and nothing written, when the session is gone (logged out meanwhile).
 */
export async function recordRefresh(q: Queryable, sessionId: string, client: SessionClient, audit: AuditEntry[]): Promise<UserRow | null> {
  const { rows } = await q.query<UserRow>({
    name: 'refresh_tokens_record_answer',
    text: `with touched as (update sessions set refreshed_at = now(), updated_at = now(), user_agent = $2, ip = $3
                            where id = $1 returning user_id),
                audited as (insert into audit_log_entries (id, payload, ip_address)
                            select (e ->> 'id')::uuid, e -> 'payload', e ->> 'ip' from touched, jsonb_array_elements($4::jsonb) as e)
           select ${USER_COLUMNS} from users where id = (select user_id from touched)`,
    values: [sessionId, client.userAgent, client.ip, storedAudit(audit)],
  });
  if (rows[0]) announceAudit(q, audit);
  return rows[0] ?? null;
}

/**
 * Reuse detection: revokes every live token of the session, as the original revokes the token's family
 * (its session's tokens). Not only the reused token's descendants: a branch given to another rotated token
 * within the reuse interval is no descendant of a later reused token, and must not outlive the detection.
 */
export async function revokeSessionTokens(q: Queryable, sessionId: string): Promise<number> {
  const { rowCount } = await q.query({
    name: 'refresh_tokens_revoke_session',
    text: `update refresh_tokens set revoked = true, updated_at = now() where session_id = $1 and not revoked`,
    values: [sessionId],
  });
  return rowCount ?? 0;
}

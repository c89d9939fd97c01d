// v2 refresh tokens (docs/tokens-and-sessions.md#v2-refresh-tokens): the session row is the whole state,
// its key (refresh_token_hmac_key) and the counter of the one valid token (refresh_token_counter); no
// refresh_tokens rows. A refresh advances the counter with a compare-and-set on (id, counter), so of any
// number of concurrent refreshes with one token exactly one advances it.
import type { Queryable } from './pool.js';
import type { SessionClient } from './sign-in.js';
import { USER_COLUMNS_U, type UserRow } from './users.js';
import { announceAudit, storedAudit, type AuditEntry } from './audit-log.js';
import { identitiesJsonSql, identityRows, type IdentityJsonRow } from './identities.js';
import { amrJsonSql, NOT_AFTER_ENDED_SQL, sessionEndedSql, type AmrRow, type SessionEnd, type SessionPolicy } from './sessions.js';
import { factorRows, factorsJsonSql, type FactorJsonRow } from './mfa-factors.js';
import type { Rotated } from './refresh-rotation.js';

/** What the grant reads before anything is locked: the session's v2 state and what the v1 read gives for its token. */
export interface V2Session extends Pick<UserRow, 'banned_until' | 'email' | 'phone' | 'raw_user_meta_data' | 'is_sso_user'> {
  user_id: string;
  /** null on a session of the 12-character format: a v2 token naming it is not one of ours */
  v2_key: string | null;
  /** bigint as text */
  v2_counter: string | null;
  session_created_at: Date;
  oauth_client_id: string | null;
  scopes: string | null;
  /** why the session has ended, as for v1 (refresh-tokens.ts findPresentedToken): without a policy only not_after ends it */
  session_ended: SessionEnd | null;
}

/**
 * The session a v2 token names, with its user and why it has ended (by not_after alone without a policy). A v2 session has
 * no token rows, so it counts as last active at its last refresh, else its creation, as the original
 * measures it for these tokens.
 */
export async function findV2Session(q: Queryable, sessionId: string, policy: SessionPolicy | null): Promise<V2Session | null> {
  const columns = `s.user_id, s.refresh_token_hmac_key as v2_key, s.refresh_token_counter::text as v2_counter,
                   s.created_at as session_created_at, s.oauth_client_id, s.scopes,
                   u.banned_until, u.email, u.phone, u.raw_user_meta_data, u.is_sso_user`;
  if (!policy) {
    const { rows } = await q.query<V2Session>({
      name: 'sessions_v2_presented',
      text: `select ${columns}, ${NOT_AFTER_ENDED_SQL} as session_ended from sessions s join users u on u.id = s.user_id where s.id = $1`,
      values: [sessionId],
    });
    return rows[0] ?? null;
  }
  const { rows } = await q.query<V2Session>({
    name: 'sessions_v2_presented_policy',
    text: `select ${columns},
                  coalesce(${sessionEndedSql({ timebox: 2, inactivity: 3, lowAal: 6 }, 'coalesce(s.refreshed_at, s.created_at)', 's.user_id')},
                           case when $4::boolean and newer_session_exists(s.user_id, s.id, coalesce(s.refreshed_at, s.created_at), s.tag, $2, $3, $5::text[], $6)
                                then 'newer_login' end) as session_ended
           from sessions s join users u on u.id = s.user_id where s.id = $1`,
    values: [sessionId, policy.timeboxSeconds, policy.inactivitySeconds, policy.singlePerUser, policy.tags, policy.lowAalSeconds],
  });
  return rows[0] ?? null;
}

export interface AdvanceV2 {
  sessionId: string;
  /** the counter the presented token carries, which must still be the session's (bigint as text) */
  counter: string;
  client: SessionClient;
  /** token_refreshed, written only if the counter advances */
  audit: AuditEntry[];
  /** the key sealed anew (a key in clear or under an old key), or null to leave it */
  resealedKey: string | null;
  /** the caller's clock: the user counts as banned while banned_until is later, as isBanned decides */
  now: Date;
}

/**
 * The usual refresh in one autocommit statement (or one statement of a caller's transaction): advance the
 * counter if it is still `counter` and the user is not banned, record the refresh (time, user agent,
 * address), write the audit rows, and read what the token response needs. Null, and nothing written,
 * otherwise. Under READ COMMITTED an update that waited for a concurrent one re-checks its condition on
 * the row that one committed, whose counter has moved: so it writes nothing and the caller decides again
 * under the session lock.
 */
export async function advanceV2Counter(q: Queryable, a: AdvanceV2): Promise<(Rotated & { counter: string }) | null> {
  const { rows } = await q.query<
    UserRow & { v2_counter: string; refresh_amr: AmrRow[]; refresh_identities: IdentityJsonRow[]; refresh_factors: FactorJsonRow[] }
  >({
    name: 'sessions_v2_advance',
    text: `with advanced as (update sessions s set refresh_token_counter = s.refresh_token_counter + 1, refreshed_at = now(), updated_at = now(),
                                                   user_agent = $3, ip = $4, refresh_token_hmac_key = coalesce($6, s.refresh_token_hmac_key)
                             from users u
                             where s.id = $1::uuid and s.refresh_token_counter = $2::bigint and u.id = s.user_id
                               and (u.banned_until is null or u.banned_until <= $7::timestamptz)
                             returning s.user_id, s.refresh_token_counter),
                audited as (insert into audit_log_entries (id, payload, ip_address)
                            select (e ->> 'id')::uuid, e -> 'payload', e ->> 'ip' from advanced, jsonb_array_elements($5::jsonb) as e)
           select ${USER_COLUMNS_U}, a.refresh_token_counter::text as v2_counter,
                  ${amrJsonSql('$1::uuid')} as refresh_amr,
                  ${identitiesJsonSql('u.id')} as refresh_identities,
                  ${factorsJsonSql('u.id')} as refresh_factors
           from advanced a join users u on u.id = a.user_id`,
    values: [a.sessionId, a.counter, a.client.userAgent, a.client.ip, storedAudit(a.audit), a.resealedKey, a.now],
  });
  if (!rows[0]) return null;
  announceAudit(q, a.audit);
  const { v2_counter: counter, refresh_amr: amr, refresh_identities: identities, refresh_factors: factors, ...user } = rows[0];
  return { user, amr, identities: identityRows(identities), factors: factorRows(factors), counter };
}

/** The session row locked until the transaction ends, with its user and v2 state; null when it is gone. */
export interface LockedV2Session {
  user: UserRow;
  v2_key: string | null;
  v2_counter: string | null;
  /** seconds between now (the database's clock) and the session's last refresh, else its creation */
  since_refresh: number;
}

export async function lockV2Session(q: Queryable, sessionId: string): Promise<LockedV2Session | null> {
  const { rows } = await q.query<UserRow & { v2_key: string | null; v2_counter: string | null; v2_since_refresh: number }>({
    name: 'sessions_v2_lock',
    text: `select ${USER_COLUMNS_U}, s.refresh_token_hmac_key as v2_key, s.refresh_token_counter::text as v2_counter,
                  abs(extract(epoch from clock_timestamp() - coalesce(s.refreshed_at, s.created_at)))::float8 as v2_since_refresh
           from sessions s join users u on u.id = s.user_id where s.id = $1 for update of s`,
    values: [sessionId],
  });
  if (!rows[0]) return null;
  const { v2_key, v2_counter, v2_since_refresh, ...user } = rows[0];
  return { user, v2_key, v2_counter, since_refresh: v2_since_refresh };
}

/**
 * An allowed reuse: the counter stays, the refresh is recorded on the session and audited as the
 * original does (token_refreshed). Called under the session lock.
 */
export async function recordV2Reuse(
  q: Queryable,
  sessionId: string,
  client: SessionClient,
  audit: AuditEntry[],
  resealedKey: string | null,
): Promise<void> {
  await q.query({
    name: 'sessions_v2_reuse',
    text: `with touched as (update sessions set refreshed_at = now(), updated_at = now(), user_agent = $2, ip = $3,
                                                refresh_token_hmac_key = coalesce($5, refresh_token_hmac_key)
                            where id = $1 returning id)
           insert into audit_log_entries (id, payload, ip_address)
           select (e ->> 'id')::uuid, e -> 'payload', e ->> 'ip' from touched, jsonb_array_elements($4::jsonb) as e`,
    values: [sessionId, client.userAgent, client.ip, storedAudit(audit), resealedKey],
  });
  announceAudit(q, audit);
}

/**
 * The move of a 12-character session to v2 at a refresh (SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE),
 * under the session lock: the presented token is revoked if still active and, only then, the session
 * gets `key` unless it has one, its counter starts at 0 (or moves on by one), the refresh is recorded
 * and the audit rows written. Null, and nothing written, when the token was no longer active.
 */
export async function upgradeToV2(
  q: Queryable,
  u: { tokenId: string; sessionId: string; key: string; client: SessionClient; audit: AuditEntry[] },
): Promise<{ v2_key: string; v2_counter: string } | null> {
  const { rows } = await q.query<{ v2_key: string; v2_counter: string }>({
    name: 'sessions_v2_upgrade',
    text: `with parent as (update refresh_tokens set revoked = true, updated_at = now()
                           where id = $1 and session_id = $2 and not revoked returning session_id),
                upgraded as (update sessions set refresh_token_hmac_key = coalesce(refresh_token_hmac_key, $3),
                                                 refresh_token_counter = coalesce(refresh_token_counter + 1, 0),
                                                 refreshed_at = now(), updated_at = now(), user_agent = $4, ip = $5
                             where id = (select session_id from parent)
                             returning refresh_token_hmac_key, refresh_token_counter),
                audited as (insert into audit_log_entries (id, payload, ip_address)
                            select (e ->> 'id')::uuid, e -> 'payload', e ->> 'ip' from parent, jsonb_array_elements($6::jsonb) as e)
           select refresh_token_hmac_key as v2_key, refresh_token_counter::text as v2_counter from upgraded`,
    values: [u.tokenId, u.sessionId, u.key, u.client.userAgent, u.client.ip, storedAudit(u.audit)],
  });
  if (rows[0]) announceAudit(q, u.audit);
  return rows[0] ?? null;
}

/** Whether `tokenId` is the newest token row of its session: the one a v2 upgrade revoked last. */
export async function isNewestToken(q: Queryable, tokenId: string, sessionId: string): Promise<boolean> {
  const { rows } = await q.query<{ newest: boolean }>({
    name: 'refresh_tokens_newest',
    text: 'select coalesce(max(id) = $1::bigint, false) as newest from refresh_tokens where session_id = $2',
    values: [tokenId, sessionId],
  });
  return rows[0]?.newest ?? false;
}

/** Reuse of a v2 token where reuse is not allowed, with rotation on: the whole session ends. */
export async function deleteSession(q: Queryable, sessionId: string): Promise<void> {
  await q.query({ name: 'sessions_delete_one', text: 'delete from sessions where id = $1', values: [sessionId] });
}

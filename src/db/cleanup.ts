// The background cleanup's statements (docs/tokens-and-sessions.md#cleanup): each deletes one batch of
// rows that can no longer be used, at most `limit`, and returns how many it deleted. The rows are picked
// with FOR UPDATE SKIP LOCKED: a row a request is using, or another instance is deleting, is left for a
// later batch instead of being waited for, so any number of instances can run these at once. Ages are
// seconds, compared with the database's clock.
import type { Queryable } from './pool.js';
import type { SessionPolicy } from './sessions.js';

const deleted = async (q: Queryable, text: string, values: unknown[]): Promise<number> => (await q.query(text, values)).rowCount ?? 0;

/** Revoked refresh tokens revoked longer than `age` ago (updated_at is the revocation time). */
export function deleteRevokedRefreshTokens(q: Queryable, age: number, limit: number): Promise<number> {
  return deleted(
    q,
    `delete from refresh_tokens where id in (
       select id from refresh_tokens where revoked and updated_at < now() - make_interval(secs => $1)
       limit $2 for update skip locked)`,
    [age, limit],
  );
}

/** Sessions past not_after by more than `grace` (their tokens and AMR claims go with them: on delete cascade). */
export function deleteSessionsPastNotAfter(q: Queryable, grace: number, limit: number): Promise<number> {
  return deleted(
    q,
    `delete from sessions where id in (
       select id from sessions where not_after < now() - make_interval(secs => $1)
       limit $2 for update skip locked)`,
    [grace, limit],
  );
}

/**
 * Sessions the time box or the inactivity timeout ended more than `grace` ago, by the rule the refresh
 * grant applies (session_ended, sql/00005_session_policy_and_cleanup.sql), with the grace added to both
 * limits. Without an index on the expiry this scans sessions, as the original's statement does; it
 * runs only when a limit is set.
 */
export function deleteSessionsPastPolicy(q: Queryable, policy: SessionPolicy, grace: number, limit: number): Promise<number> {
  return deleted(
    q,
    `delete from sessions where id in (
       select id from sessions
       where session_ended(null, created_at, coalesce(refreshed_at, created_at), $1::float8 + $3, $2::float8 + $3) is not null
       limit $4 for update skip locked)`,
    [policy.timeboxSeconds, policy.inactivitySeconds, grace, limit],
  );
}

/**
 * PKCE / OAuth flow state older than `age`, counted from its last step (a magic link's flow lives
 * from when its code was issued). created_at is tested too so its index finds the candidates.
 */
export function deleteExpiredFlowStates(q: Queryable, age: number, limit: number): Promise<number> {
  return deleted(
    q,
    `delete from flow_state where id in (
       select id from flow_state
       where created_at < now() - make_interval(secs => $1)
         and coalesce(auth_code_issued_at, created_at) < now() - make_interval(secs => $1)
       limit $2 for update skip locked)`,
    [age, limit],
  );
}

/** One-time tokens issued longer than `age` ago (a used token is deleted when it is used). */
export function deleteExpiredOneTimeTokens(q: Queryable, age: number, limit: number): Promise<number> {
  return deleted(
    q,
    `delete from one_time_tokens where id in (
       select id from one_time_tokens where created_at < now() - make_interval(secs => $1)
       limit $2 for update skip locked)`,
    [age, limit],
  );
}

/** Used Web3 sign-in messages whose validity ended more than `grace` ago: they would be refused as expired anyway. */
export function deleteSpentWeb3Messages(q: Queryable, grace: number, limit: number): Promise<number> {
  return deleted(
    q,
    `delete from web3_message_uses where message_hash in (
       select message_hash from web3_message_uses where usable_until < now() - make_interval(secs => $1)
       limit $2 for update skip locked)`,
    [grace, limit],
  );
}

/** Audit log entries older than `age`. */
export function deleteOldAuditEntries(q: Queryable, age: number, limit: number): Promise<number> {
  return deleted(
    q,
    `delete from audit_log_entries where id in (
       select id from audit_log_entries where created_at < now() - make_interval(secs => $1)
       limit $2 for update skip locked)`,
    [age, limit],
  );
}

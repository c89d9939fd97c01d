// The background cleanup's statements (docs/tokens-and-sessions.md#cleanup): each deletes one batch of
// rows that can no longer be used, at most `limit`, and returns how many it deleted. The rows are picked
// with FOR UPDATE SKIP LOCKED: a row a request is using, or another instance is deleting, is left for a
// later batch instead of being waited for, so any number of instances can run these at once. Ages are
// seconds, compared with the database's clock.
import type { Queryable } from './pool.js';
import type { SessionPolicy } from './sessions.js';
import { announceAudit, auditToDatabase, type AuditEntry, type AuditPayload } from './audit-log.js';

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

/**
 * OAuth server authorization requests expired more than `grace` ago, whatever their state: a pending one
 * can no longer be approved, an approved one's code no longer exchanged (docs/oauth-server.md#authorization).
 */
export function deleteExpiredOAuthAuthorizations(q: Queryable, grace: number, limit: number): Promise<number> {
  return deleted(
    q,
    `delete from oauth_authorizations where id in (
       select id from oauth_authorizations where expires_at < now() - make_interval(secs => $1)
       limit $2 for update skip locked)`,
    [grace, limit],
  );
}

/**
 * SAML relay states made longer than `age` ago: sign-ins started at POST /sso that never reached the ACS
 * (the ACS deletes the row it uses). created_at has its own index.
 */
export function deleteOldRelayStates(q: Queryable, age: number, limit: number): Promise<number> {
  return deleted(
    q,
    `delete from saml_relay_states where id in (
       select id from saml_relay_states where created_at < now() - make_interval(secs => $1)
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

/**
 * Accepted SAML assertions whose IssueInstant window ended more than `grace` ago: they would be refused as
 * too old anyway. Rows are picked by their index on usable_until; the key is the (provider, ID) pair.
 */
export function deleteSpentSamlAssertions(q: Queryable, grace: number, limit: number): Promise<number> {
  return deleted(
    q,
    `delete from saml_assertion_uses where (sso_provider_id, assertion_id) in (
       select sso_provider_id, assertion_id from saml_assertion_uses where usable_until < now() - make_interval(secs => $1)
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

/** MFA challenges issued longer than `age` ago, verified or not (a challenge is answered once, within its expiry). */
export function deleteOldMfaChallenges(q: Queryable, age: number, limit: number): Promise<number> {
  return deleted(
    q,
    `delete from mfa_challenges where id in (
       select id from mfa_challenges where created_at < now() - make_interval(secs => $1)
       limit $2 for update skip locked)`,
    [age, limit],
  );
}

/**
 * Factors never verified, once neither they nor their last challenge can be used any more: enrolled longer
 * than `enrolledAge` ago and last challenged (or, never challenged, enrolled) longer than `challengedAge`
 * ago. Their challenges go with them (on delete cascade). None of them can still be answered, so no
 * verification of such a factor can be under way (one that tried would find its challenge expired).
 */
export function deleteStaleUnverifiedFactors(q: Queryable, enrolledAge: number, challengedAge: number, limit: number): Promise<number> {
  return deleted(
    q,
    `delete from mfa_factors where id in (
       select id from mfa_factors
       where status = 'unverified' and created_at < now() - make_interval(secs => $1)
         and coalesce(last_challenged_at, created_at) < now() - make_interval(secs => $2)
       limit $3 for update skip locked)`,
    [enrolledAge, challengedAge, limit],
  );
}

/**
 * Anonymous users who signed up longer than `age` ago, deleted as DELETE /admin/users deletes hard
 * (user-deletion.ts): the row goes, its sessions, refresh tokens, identities, factors and the rest with
 * it, and each deletion is audited `user_deleted` under `audit` (the payload without traits). A user whose
 * row a request holds (signing in, becoming permanent) is skipped for a later pass; a request that comes
 * after the lock finds the user gone, as after an admin's deletion. FOR UPDATE re-checks is_anonymous on
 * the newest row version, so a user made permanent since the statement began is not deleted.
 */
export async function deleteOldAnonymousUsers(q: Queryable, age: number, limit: number, audit: AuditPayload): Promise<number> {
  const { rows } = await q.query<{ n: number; entries: AuditEntry[] }>(
    `with doomed as (select id from users where is_anonymous and created_at < now() - make_interval(secs => $1)
                     limit $2 for update skip locked),
          gone as (delete from users where id in (select id from doomed) returning id, email, phone),
          tokens as (delete from refresh_tokens where user_id in (select id from gone)),
          entries as (select gen_random_uuid() as id,
                             $3::jsonb || jsonb_build_object('traits', jsonb_build_object(
                               'user_id', id, 'user_email', coalesce(email, ''), 'user_phone', coalesce(phone, ''))) as payload
                      from gone),
          audited as (insert into audit_log_entries (id, payload, ip_address) select id, payload, '' from entries where $4::boolean)
     select (select count(*)::int from gone) as n,
            (select coalesce(json_agg(json_build_object('id', id, 'payload', payload, 'ip', '')), '[]') from entries) as entries`,
    [age, limit, JSON.stringify(audit), auditToDatabase()],
  );
  announceAudit(q, rows[0].entries);
  return rows[0].n;
}

/**
 * Pretended sends (src/db/pretended-sends.ts) older than `age`: past the longest send interval they refuse
 * nothing. Only those rate_limits rows: the shared counters keep their own time.
 */
export function deleteOldPretendedSends(q: Queryable, age: number, limit: number): Promise<number> {
  return deleted(
    q,
    `delete from rate_limits where key in (
       select key from rate_limits where key like 'pretended\\_send:%' and updated_at < now() - make_interval(secs => $1)
       limit $2 for update skip locked)`,
    [age, limit],
  );
}

/**
 * Per-client bucket rows (limits/per-client.ts) whose bucket has refilled: each `prefix` row untouched for
 * its `seconds`. A row is written for every client address a proxy reports, so without this the table
 * would grow for ever; a refilled row answers exactly as a missing one does.
 */
export function deleteRefilledBuckets(q: Queryable, buckets: { prefix: string; seconds: number }[], limit: number): Promise<number> {
  if (buckets.length === 0) return Promise.resolve(0);
  return deleted(
    q,
    `delete from rate_limits where key in (
       select r.key from rate_limits r
         join unnest($1::text[], $2::float8[]) as b(prefix, secs) on starts_with(r.key, b.prefix)
        where r.updated_at < now() - make_interval(secs => b.secs)
        limit $3 for update of r skip locked)`,
    [buckets.map((b) => b.prefix), buckets.map((b) => b.seconds), limit],
  );
}

// A sign-in in one statement, and the token response's reads in one statement: the writes are
// data-modifying CTEs, atomic on their own (autocommit) and just as well one statement of a caller's
// transaction, so a login costs one round trip after the user lookup.
import type { Queryable } from './pool.js';
import { announceAudit, storedAudit, type AuditEntry } from './audit-log.js';
import { USER_COLUMNS, type UserRow } from './users.js';
import { identitiesJsonSql, identityRows, type IdentityJsonRow, type IdentityRow } from './identities.js';
import { amrJsonSql, type AmrRow } from './sessions.js';
import { factorRows, factorsJsonSql, type FactorJsonRow, type FactorRow } from './mfa-factors.js';

/**
 * Who signed in or refreshed, as the session row records it: NULL, not '', for a request without a
 * User-Agent header (or without a client address), as the original stores it.
 */
export interface SessionClient {
  userAgent: string | null;
  ip: string | null;
}

export interface SignInWrite {
  userId: string;
  /** the authentication method recorded for the new session (password, otp, anonymous, ...) */
  method: string;
  userAgent: SessionClient['userAgent'];
  ip: SessionClient['ip'];
  /** SHA-256 hex of the session's first refresh token; null for a v2 session, which has no token rows */
  refreshTokenHash: string | null;
  /** a v2 session (docs/tokens-and-sessions.md#v2-refresh-tokens): its id, chosen by the caller since its tokens name it, and its key as stored */
  v2?: { sessionId: string; storedKey: string } | null;
  /** a new password hash stored with the sign-in (the password grant's upgrade of an older hash) */
  passwordHash?: string | null;
  /**
   * the stored password (encrypted_password as read) the sign-in's password was checked against: the sign-in
   * happens only while it is still the stored one, so a password changed meanwhile starts no session
   */
  checkedPassword?: string | null;
  /** the sign-in's audit entry (auditEntry() in audit-log.ts), written and announced with it */
  audit?: AuditEntry | null;
  /** when the session ends whatever its refreshes (a SAML assertion's SessionNotOnOrAfter) */
  notAfter?: Date | null;
  /** a session issued to an OAuth server client: the client and the scopes granted (docs/oauth-server.md) */
  oauthClientId?: string | null;
  scopes?: string | null;
}

export interface SignIn {
  /** the user row after the sign-in (last_sign_in_at, updated_at) */
  user: UserRow;
  sessionId: string;
  /** the new session's created_at, by the database's clock (SESSIONS_ALLOW_LOW_AAL counts from it) */
  sessionCreatedAt: Date;
  amr: AmrRow[];
  identities: IdentityRow[];
  factors: FactorRow[];
}

/**
 * Creates the session, its first refresh token and its AMR claim, sets last_sign_in_at (and the upgraded
 * hash, if any), writes the audit entry, and returns what the token response needs. The sign-in's time is
 * the database's, to the microsecond as every timestamp of the answer (and the same instant the session
 * records as its creation): a time from the application would be whole milliseconds. Null, and nothing
 * written, when the user is gone or soft-deleted, or its password is no longer `checkedPassword`: every write
 * hangs off the user's update, whose row lock orders it after a concurrent deletion or password change (the
 * update re-checks its condition on the row they left), so no session outlives either. The CTEs' writes are
 * invisible to the rest of the statement (one snapshot), so the user and the AMR come from their RETURNING
 * rows; identities are not written here, and earlier statements of a caller's transaction are visible.
 * Identities come back as json with text timestamps, parsed by identityRows (identities.ts).
 */
export async function signIn(q: Queryable, s: SignInWrite): Promise<SignIn | null> {
  const { rows } = await q.query<
    UserRow & {
      sign_in_session_id: string;
      sign_in_session_created_at: Date;
      sign_in_amr: AmrRow[];
      sign_in_identities: IdentityJsonRow[];
      sign_in_factors: FactorJsonRow[];
    }
  >({
    name: 'sign_in',
    text: `with signed_in as (
             update users set last_sign_in_at = now(), encrypted_password = coalesce($6::text, encrypted_password),
                              updated_at = now()
             where id = $1::uuid and deleted_at is null and ($13::text is null or encrypted_password = $13::text)
             returning ${USER_COLUMNS}),
           session as (
             insert into sessions (id, user_id, aal, user_agent, ip, not_after, oauth_client_id, scopes, refresh_token_hmac_key, refresh_token_counter)
             select coalesce($11::uuid, gen_random_uuid()), id, 'aal1', $2::text, $3::text, $8::timestamptz, $9::uuid, $10::text,
                    $12::text, case when $12::text is not null then 0 end
             from signed_in returning id, created_at),
           token as (
             insert into refresh_tokens (token_hash, user_id, session_id) select $4::text, $1::uuid, id from session where $4::text is not null),
           amr as (
             insert into mfa_amr_claims (session_id, authentication_method) select id, $5::text from session
             returning authentication_method, updated_at),
           audit as (
             insert into audit_log_entries (id, payload, ip_address)
             select (e ->> 'id')::uuid, e -> 'payload', e ->> 'ip' from signed_in, jsonb_array_elements($7::jsonb) as e)
           select u.*, (select id from session) as sign_in_session_id, (select created_at from session) as sign_in_session_created_at,
                  (select json_agg(json_build_object('method', authentication_method,
                                                     'timestamp', floor(extract(epoch from updated_at))::int))
                   from amr) as sign_in_amr,
                  ${identitiesJsonSql('$1::uuid')} as sign_in_identities,
                  ${factorsJsonSql('$1::uuid')} as sign_in_factors
           from signed_in u`,
    values: [
      s.userId,
      s.userAgent,
      s.ip,
      s.refreshTokenHash,
      s.method,
      s.passwordHash ?? null,
      storedAudit(s.audit ? [s.audit] : []),
      s.notAfter ?? null,
      s.oauthClientId ?? null,
      s.scopes ?? null,
      s.v2?.sessionId ?? null,
      s.v2?.storedKey ?? null,
      s.checkedPassword ?? null,
    ],
  });
  if (!rows[0]) return null;
  if (s.audit) announceAudit(q, [s.audit]);
  const {
    sign_in_session_id: sessionId,
    sign_in_session_created_at: sessionCreatedAt,
    sign_in_amr: amr,
    sign_in_identities: identities,
    sign_in_factors: factors,
    ...user
  } = rows[0];
  return { user, sessionId, sessionCreatedAt, amr, identities: identityRows(identities), factors: factorRows(factors) };
}

/** The token response's reads for an existing session (the refresh grant): its AMR, newest first, the user's identities and factors. */
export async function findAmrAndIdentities(
  q: Queryable,
  sessionId: string,
  userId: string,
): Promise<{ amr: AmrRow[]; identities: IdentityRow[]; factors: FactorRow[] }> {
  const { rows } = await q.query<{ amr: AmrRow[]; identities: IdentityJsonRow[]; factors: FactorJsonRow[] }>({
    name: 'amr_and_identities',
    text: `select ${amrJsonSql('$1::uuid')} as amr,
                  ${identitiesJsonSql('$2::uuid')} as identities,
                  ${factorsJsonSql('$2::uuid')} as factors`,
    values: [sessionId, userId],
  });
  return { amr: rows[0].amr, identities: identityRows(rows[0].identities), factors: factorRows(rows[0].factors) };
}

// The session upgrade after a verified challenge (docs/mfa.md#what-verifying-does), in one statement of
// the caller's transaction: the method joins the session's AMR, the session becomes aal2 and remembers
// the factor, its refresh token is swapped for a new one (so a token issued at aal1 cannot carry on as
// the upgraded session), the user's other sessions below aal2 end, and the user's other unverified
// factors of the same type go. A v2 session (docs/tokens-and-sessions.md#v2-refresh-tokens) gets no token
// row: its counter moves on by two instead, as the original's, so that neither the aal1 token nor the one
// a fail-to-save reuse would hand back is still good. A 12-character token's swap is audited token_revoked
// after the verification, as the original's swap writes it.
import type { Queryable } from './pool.js';
import { announceAudit, storedAudit, type AuditEntry } from './audit-log.js';

export interface Upgrade {
  userId: string;
  sessionId: string;
  factorId: string;
  factorType: string;
  amrMethod: string;
  /** SHA-256 hex of the session's new refresh token */
  refreshTokenHash: string;
  /** verification_attempted, with the client's address */
  audit: AuditEntry;
  /** token_revoked, written after it when the session's 12-character token is swapped, as a refresh audits its swap */
  swapAudit: AuditEntry;
}

/**
 * `upgraded` false when the session is gone (nothing is written then: the caller rolls back);
 * `factorVerified` when this verification turned the factor from unverified to verified (its enrolment).
 */
export async function upgradeSession(
  q: Queryable,
  u: Upgrade,
): Promise<{ upgraded: boolean; factorVerified: boolean; v2: { key: string; counter: string } | null }> {
  const { rows } = await q.query<{ upgraded: boolean; factor_verified: boolean; v2_key: string | null; v2_counter: string | null }>(
    `with upgraded as (update sessions set aal = 'aal2', factor_id = $3, updated_at = now(), refresh_token_counter = refresh_token_counter + 2
                       where id = $2 and user_id = $1 returning id, refresh_token_hmac_key, refresh_token_counter),
          claim as (insert into mfa_amr_claims (session_id, authentication_method)
                    select id, $5 from upgraded
                    on conflict (session_id, authentication_method) do update set updated_at = now()),
          parent as (update refresh_tokens set revoked = true, updated_at = now()
                     where session_id = (select id from upgraded) and not revoked returning id),
          child as (insert into refresh_tokens (token_hash, user_id, session_id, parent_id)
                    select $6, $1, id, (select max(id) from parent) from upgraded where refresh_token_hmac_key is null),
          others as (delete from sessions where user_id = $1 and id <> $2 and aal < 'aal2' and exists (select 1 from upgraded)),
          unverified as (delete from mfa_factors where user_id = $1 and factor_type = $4 and status = 'unverified' and id <> $3
                           and exists (select 1 from upgraded)),
          verified as (update mfa_factors set status = 'verified', updated_at = now()
                       where id = $3 and status <> 'verified' and exists (select 1 from upgraded) returning id),
          audited as (insert into audit_log_entries (id, payload, ip_address)
                      select (e ->> 'id')::uuid, e -> 'payload', e ->> 'ip' from upgraded, jsonb_array_elements($7::jsonb) as e),
          swap_audited as (insert into audit_log_entries (id, payload, ip_address)
                           select (e ->> 'id')::uuid, e -> 'payload', e ->> 'ip' from upgraded, jsonb_array_elements($8::jsonb) as e
                           where refresh_token_hmac_key is null)
     select exists (select 1 from upgraded) as upgraded, exists (select 1 from verified) as factor_verified,
            (select refresh_token_hmac_key from upgraded) as v2_key, (select refresh_token_counter::text from upgraded) as v2_counter`,
    [u.userId, u.sessionId, u.factorId, u.factorType, u.amrMethod, u.refreshTokenHash, storedAudit([u.audit]), storedAudit([u.swapAudit])],
  );
  const { v2_key: key, v2_counter: counter } = rows[0];
  if (rows[0].upgraded) announceAudit(q, key === null ? [u.audit, u.swapAudit] : [u.audit]);
  return {
    upgraded: rows[0].upgraded,
    factorVerified: rows[0].factor_verified,
    v2: key !== null && counter !== null ? { key, counter } : null,
  };
}

// The refresh grant's usual path in one autocommit statement: lock the session, rotate its active token
// (audit rows included), and read what the token response needs; one round trip instead of a transaction.
import type { Queryable } from './pool.js';
import type { SessionClient } from './sign-in.js';
import { USER_COLUMNS_U, type UserRow } from './users.js';
import { announceAudit, storedAudit, type AuditEntry } from './audit-log.js';
import { identitiesJsonSql, identityRows, type IdentityJsonRow, type IdentityRow } from './identities.js';
import { amrJsonSql, type AmrRow } from './sessions.js';
import { factorRows, factorsJsonSql, type FactorJsonRow, type FactorRow } from './mfa-factors.js';

export interface LockAndRotate {
  parentId: string;
  sessionId: string;
  childHash: string;
  client: SessionClient;
  /** the rotation's audit entries (the grant's rotationAudit), written and announced only if it rotates */
  audit: AuditEntry[];
  /** the caller's clock: the user counts as banned while banned_until is later, as isBanned decides */
  now: Date;
}

/** The rotation done: the session's user (as locked) and the token response's reads. */
export interface Rotated {
  user: UserRow;
  amr: AmrRow[];
  identities: IdentityRow[];
  factors: FactorRow[];
}

/**
 * Locks the session row (FOR UPDATE, as lockSessionUser), and if its user is not banned rotates the
 * parent exactly as rotateRefreshToken does. The lock is taken first because the rotation's `parent`
 * update is guarded by a condition on `locked`. The user, AMR and identities are read in the statement's
 * snapshot, taken before any wait for the lock: the lock's other holders (refreshes, which write none of
 * them, and deletions of the session) change nothing there that a read after the commit would see; the
 * routes that change a user or its identities take no session lock, so either read races with them alike.
 * Null, and nothing written, when the session is gone, its user is banned, or the parent is no longer
 * active. Under READ COMMITTED a lock that waited for another rotation of the same parent re-checks the
 * parent's newest row version, which that rotation revoked, so only one of them rotates
 * (test/refresh-lock-rotate.test.ts runs two clients against each other); the caller then decides on state
 * read under the lock in a transaction of its own.
 */
export async function lockAndRotate(q: Queryable, r: LockAndRotate): Promise<Rotated | null> {
  const { rows } = await q.query<
    UserRow & { refresh_rotated: boolean; refresh_amr: AmrRow[]; refresh_identities: IdentityJsonRow[]; refresh_factors: FactorJsonRow[] }
  >({
    name: 'refresh_tokens_lock_rotate_entries',
    // `locked` first: `parent` revokes only while the locked user is not banned. The rest writes what
    // rotateRefreshToken (refresh-tokens.ts) writes; keep the two in step. AMR newest first, identities
    // oldest first with text timestamps (identityRows, identities.ts).
    text: `with locked as (select ${USER_COLUMNS_U} from sessions s join users u on u.id = s.user_id where s.id = $6::uuid for update of s),
                parent as (update refresh_tokens set revoked = true, updated_at = now()
                           where id = $1 and not revoked
                             and exists (select 1 from locked where banned_until is null or banned_until <= $7::timestamptz)
                           returning user_id, session_id),
                touched as (update sessions set refreshed_at = now(), updated_at = now(), user_agent = $3, ip = $4
                            where id = (select session_id from parent)),
                audited as (insert into audit_log_entries (id, payload, ip_address)
                            select (e ->> 'id')::uuid, e -> 'payload', e ->> 'ip' from parent, jsonb_array_elements($5::jsonb) as e),
                child as (insert into refresh_tokens (token_hash, user_id, session_id, parent_id)
                          select $2, user_id, session_id, $1 from parent returning *)
           select l.*, exists (select 1 from child) as refresh_rotated,
                  ${amrJsonSql('$6::uuid')} as refresh_amr,
                  ${identitiesJsonSql('l.id')} as refresh_identities,
                  ${factorsJsonSql('l.id')} as refresh_factors
           from locked l`,
    values: [r.parentId, r.childHash, r.client.userAgent, r.client.ip, storedAudit(r.audit), r.sessionId, r.now],
  });
  if (!rows[0]?.refresh_rotated) return null;
  announceAudit(q, r.audit);
  const { refresh_rotated: _, refresh_amr: amr, refresh_identities: identities, refresh_factors: factors, ...user } = rows[0];
  return { user, amr, identities: identityRows(identities), factors: factorRows(factors) };
}

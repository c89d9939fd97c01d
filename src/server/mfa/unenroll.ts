// DELETE /factors/{factor_id} and the admin's DELETE /admin/users/{user_id}/factors/{factor_id}
// (docs/mfa.md#delete-factorsfactor_id): the factor goes, and the sessions it upgraded lose its AMR method
// and fall back to aal1. A user may remove a verified factor only from an aal2 session.
import { apiError } from '../errors.js';
import { tx, type Queryable } from '../../db/pool.js';
import { assuranceOf, deleteFactorAndDowngrade, findOwnedFactor, type FactorRow } from '../../db/mfa-factors.js';
import { writeAudit, type AuditActor } from '../../db/audit-log.js';
import { lockUserById } from '../../db/users.js';
import { actorOf } from '../users/actor.js';
import { ownedFactor, requireNotAnonymous } from './factor-access.js';
import { requireSession } from '../auth/session-required.js';
import { assertSessionStillLive } from '../auth/session-still-live.js';
import { FACTOR_TYPES } from './factor-types/index.js';
import type { Authenticated } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { notice, sendNotifications } from '../delivery/notifications.js';

/** The AMR method of every type the original knows, also for types without a module here (their rows may exist). */
const AMR_METHODS: Record<string, string> = { totp: 'totp', phone: 'mfa/phone', webauthn: 'mfa/webauthn' };

export const amrMethodOf = (factorType: string) => FACTOR_TYPES.get(factorType)?.amrMethod ?? AMR_METHODS[factorType] ?? factorType;

export async function unenrollFactor(req: ApiRequest, ctx: AppContext, principal: Authenticated): Promise<{ id: string }> {
  requireNotAnonymous(principal);
  const { user } = principal;
  const session = requireSession(principal);
  const found = await ownedFactor(ctx.db, req, user.id);
  const factor = await removeFactor(ctx, req, found, {
    actor: actorOf(user),
    action: 'factor_unenrolled',
    // On the locked row and session: a verification that committed meanwhile may have made the factor verified.
    async check(c, row) {
      // Ended since the bearer check (another session's new password, a logout): no factor removed for it.
      await assertSessionStillLive(c, session.id);
      const { aal } = await assuranceOf(c, user.id, session.id);
      if (row.status === 'verified' && aal !== 'aal2' && aal !== 'aal3') throw apiError('insufficient_aal_unenroll');
    },
    traits: (row) => ({ factor_id: row.id, factor_status: row.status, session_id: session.id }),
  });
  // Any factor the user removes, verified or not, as the original (the admin's deletion tells no one).
  await sendNotifications(ctx, req, notice(ctx, { kind: 'mfaFactorUnenrolled', user, factorType: factor.factor_type }));
  return { id: factor.id };
}

/** What removeFactor checks and records, on the factor's row as it is once locked. */
export interface FactorRemoval {
  actor: AuditActor;
  action: 'factor_unenrolled' | 'factor_deleted';
  /** Throws the refusal; none for the admin. */
  check?: (c: Queryable, factor: FactorRow) => Promise<void>;
  traits: (factor: FactorRow) => Record<string, unknown>;
}

/**
 * Deletes the factor, downgrades its sessions and writes the audit entry, in one transaction; resolves the
 * row it deleted. The user's row is locked first, as a verification and a concurrent DELETE /admin/users
 * take it before the factor and sessions: in another order the deletion's cascade and this statement
 * deadlocked (a 500). The factor found before is read again under that lock, and the checks made on it:
 * of concurrent removals of one factor only the first removes it, the others answer as a repeat would.
 */
export async function removeFactor(
  ctx: AppContext,
  req: ApiRequest,
  found: Pick<FactorRow, 'id' | 'user_id'>,
  removal: FactorRemoval,
): Promise<FactorRow> {
  return tx(
    ctx.db,
    async (c) => {
      // Gone meanwhile (deleted with the user): as for a user that no longer exists.
      if (!(await lockUserById(c, found.user_id))) throw apiError('user_not_found');
      const factor = await findOwnedFactor(c, found.user_id, found.id, true);
      if (!factor) throw apiError('mfa_factor_not_found');
      await removal.check?.(c, factor);
      await deleteFactorAndDowngrade(c, factor, amrMethodOf(factor.factor_type));
      await writeAudit(c, req, removal.actor, removal.action, removal.traits(factor), req.ip);
      return factor;
    },
    req.signal,
  );
}

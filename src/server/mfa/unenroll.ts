// DELETE /factors/{factor_id} and the admin's DELETE /admin/users/{user_id}/factors/{factor_id}
// (docs/mfa.md#delete-factorsfactor_id): the factor goes, and the sessions it upgraded lose its AMR method
// and fall back to aal1. A user may remove a verified factor only from an aal2 session.
import { apiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import { assuranceOf, deleteFactorAndDowngrade, type FactorRow } from '../../db/mfa-factors.js';
import { writeAudit, type AuditActor } from '../../db/audit-log.js';
import { lockUserById } from '../../db/users.js';
import { actorOf } from '../users/actor.js';
import { ownedFactor, requireNotAnonymous } from './factor-access.js';
import { requireSession } from '../auth/session-required.js';
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
  const factor = await ownedFactor(ctx.db, req, user.id);
  const { aal } = await assuranceOf(ctx.db, user.id, session.id);
  if (factor.status === 'verified' && aal !== 'aal2' && aal !== 'aal3') throw apiError('insufficient_aal_unenroll');
  await removeFactor(ctx, req, factor, actorOf(user), 'factor_unenrolled', {
    factor_id: factor.id,
    factor_status: factor.status,
    session_id: session.id,
  });
  // Any factor the user removes, verified or not, as the original (the admin's deletion tells no one).
  await sendNotifications(ctx, req, notice(ctx, { kind: 'mfaFactorUnenrolled', user, factorType: factor.factor_type }));
  return { id: factor.id };
}

/**
 * Deletes the factor, downgrades its sessions and writes the audit entry, in one transaction. The user's
 * row is locked first, as a verification and a concurrent DELETE /admin/users take it before the factor
 * and sessions: in another order the deletion's cascade and this statement deadlocked (a 500).
 */
export async function removeFactor(
  ctx: AppContext,
  req: ApiRequest,
  factor: FactorRow,
  actor: AuditActor,
  action: 'factor_unenrolled' | 'factor_deleted',
  traits: Record<string, unknown>,
): Promise<void> {
  await tx(
    ctx.db,
    async (c) => {
      // Gone meanwhile (deleted with the user): as for a user that no longer exists.
      if (!(await lockUserById(c, factor.user_id))) throw apiError('user_not_found');
      await deleteFactorAndDowngrade(c, factor, amrMethodOf(factor.factor_type));
      await writeAudit(c, req, actor, action, traits, req.ip);
    },
    req.signal,
  );
}

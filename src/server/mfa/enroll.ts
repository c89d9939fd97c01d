// POST /factors (docs/mfa.md#post-factors): the type's switch and body checks, then one transaction on
// the user's locked factors: stale unverified factors deleted, the type's own pre-checks (phone), the
// common checks in the original's order (name, counts, aal) and the new unverified factor.
import { randomUUID } from 'node:crypto';
import { apiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import { assuranceOf, insertFactor, lockFactorsForEnrolment, takenFactorIndex, type FactorRow } from '../../db/mfa-factors.js';
import { writeAudit } from '../../db/audit-log.js';
import { actorOf } from '../users/actor.js';
import { FACTOR_TYPES, KNOWN_FACTOR_TYPES } from './factor-types/index.js';
import { requireNotAnonymous } from './factor-access.js';
import { requireSession } from '../auth/session-required.js';
import { assertSessionStillLive } from '../auth/session-still-live.js';
import type { Authenticated } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import type { ApiRequest, JsonObject } from '../http/types.js';
import type { MfaConfig } from '../config/types.js';
import { goQuoted } from '../go-quoted.js';

export async function enrollFactor(req: ApiRequest, ctx: AppContext, principal: Authenticated): Promise<JsonObject> {
  requireNotAnonymous(principal);
  const { user } = principal;
  const session = requireSession(principal);
  const body = req.body();
  const typeName = body.factor_type;
  if (!KNOWN_FACTOR_TYPES.includes(typeName as (typeof KNOWN_FACTOR_TYPES)[number])) throw apiError('mfa_factor_type');
  const type = FACTOR_TYPES.get(typeName as string);
  if (!type) throw apiError('mfa_webauthn_enroll_not_enabled');
  if (!type.switches(ctx).enrollEnabled) throw apiError(type.disabled.enroll);
  const friendlyName = typeof body.friendly_name === 'string' ? body.friendly_name : '';
  checkFriendlyNameLength(friendlyName);
  const factorId = randomUUID();
  const plan = await type.enroll({ ctx, req, user, factorId, friendlyName, body });
  await tx(
    ctx.db,
    async (c) => {
      const locked = await lockFactorsForEnrolment(c, user.id, ctx.config.mfa.factorExpirySeconds);
      // Deleted by a concurrent request since the bearer check: the factor's foreign key would refuse it.
      if (!locked) throw apiError('user_not_found');
      // Ended since the bearer check (another session's new password, a logout): no factor enrolled for it.
      await assertSessionStillLive(c, session.id);
      let factors = locked;
      if (plan.beforeChecks) factors = await plan.beforeChecks(c, factors);
      const { aal } = await assuranceOf(c, user.id, session.id);
      checkEnrolment(factors, friendlyName, ctx.config.mfa, aal);
      await insertFactor(c, { id: factorId, userId: user.id, friendlyName, factorType: type.name, ...plan.columns });
      const traits = type.auditsTypeAtEnrolment ? { factor_id: factorId, factor_type: type.name } : { factor_id: factorId };
      await writeAudit(c, req, actorOf(user), 'factor_in_progress', traits, req.ip);
    },
    req.signal,
  ).catch((err: unknown) => {
    // A name committed after the check (by a writer that does not take the user's row): the check's 422, not a 500.
    if (takenFactorIndex(err) === 'friendly_name') throw nameConflict(friendlyName);
    throw err;
  });
  return { id: factorId, type: type.name, friendly_name: friendlyName, ...plan.answer };
}

/** Names up to this many UTF-8 bytes always fit the (friendly_name, user_id) unique index's entry (at most 2704 bytes). */
const MAX_FRIENDLY_NAME_BYTES = 2000;

/** A longer name could fail the unique index's insert as a 500; refused as input instead (POST /factors and the admin rename). */
export function checkFriendlyNameLength(friendlyName: string): void {
  if (Buffer.byteLength(friendlyName) > MAX_FRIENDLY_NAME_BYTES) throw apiError('mfa_friendly_name_too_long');
}

/** The original's validateFactors: a name taken (an empty name too), too many factors, or aal1 with a verified factor. */
function checkEnrolment(factors: FactorRow[], friendlyName: string, mfa: MfaConfig, aal: string): void {
  if (factors.some((f) => (f.friendly_name ?? '') === friendlyName)) throw nameConflict(friendlyName);
  const verified = factors.filter((f) => f.status === 'verified').length;
  // MFA_MAX_ENROLLED_FACTORS may be fractional; the original counts against its whole part (2.5 allows 2).
  if (factors.length >= Math.trunc(mfa.maxEnrolledFactors) || verified >= mfa.maxVerifiedFactors)
    throw apiError('too_many_enrolled_mfa_factors');
  if (verified > 0 && aal !== 'aal2' && aal !== 'aal3') throw apiError('insufficient_aal_enroll');
}

const nameConflict = (friendlyName: string) =>
  apiError('mfa_factor_name_conflict', `A factor with the friendly name ${goQuoted(friendlyName)} for this user already exists`);

// The admin's view of a user's MFA factors (docs/mfa.md#admin): list, rename or renumber, delete.
import { apiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import { findFactorsByUser, findOwnedFactor, takenFactorIndex, updateFactor, type FactorRow } from '../../db/mfa-factors.js';
import { writeAudit } from '../../db/audit-log.js';
import { lockUserById } from '../../db/users.js';
import { loadUser } from '../admin/load-user.js';
import { factorJson } from '../mfa/factor-json.js';
import { factorIdParam } from '../mfa/factor-access.js';
import { checkFriendlyNameLength } from '../mfa/enroll.js';
import { removeFactor } from '../mfa/unenroll.js';
import { actorOf } from '../users/actor.js';
import { parsePhone } from '../users/addresses.js';
import { bodySchema, type BodyOf } from '../http/validate.js';
import type { Queryable } from '../../db/pool.js';
import type { Admin } from '../auth/admin.js';
import type { ApiRequest, GuardedHandler } from '../http/types.js';

const FIELDS = { friendly_name: 'string', phone: 'string' } as const;
export const adminFactorBody = bodySchema(FIELDS);

async function loadFactor(q: Queryable, req: ApiRequest, userId: string): Promise<FactorRow> {
  const factor = await findOwnedFactor(q, userId, factorIdParam(req));
  if (!factor) throw apiError('mfa_factor_not_found');
  return factor;
}

const nameConflict = (name: string) =>
  apiError('mfa_factor_name_conflict', `A factor with the friendly name "${name}" for this user already exists`);

export const adminListFactors: GuardedHandler<Admin> = async (req, ctx) => {
  const user = await loadUser(ctx.db, req);
  return { body: (await findFactorsByUser(ctx.db, user.id)).map(factorJson) };
};

export const adminUpdateFactor: GuardedHandler<Admin, BodyOf<typeof FIELDS>> = async (req, ctx, admin) => {
  const user = await loadUser(ctx.db, req);
  const found = await loadFactor(ctx.db, req, user.id);
  const body = req.body();
  if (body.friendly_name) checkFriendlyNameLength(body.friendly_name);
  const updated = await tx(
    ctx.db,
    async (c) => {
      // The user's row first, as removeFactor and enrolment take it, then the factor read again under it: a
      // concurrent deletion, rename or enrolment of the user's factors goes wholly before or after this one,
      // so a factor deleted meanwhile is the 404 of a missing one and the checks below see the others' writes.
      if (!(await lockUserById(c, user.id))) throw apiError('admin_user_not_found');
      const factor = await findOwnedFactor(c, user.id, found.id, true);
      if (!factor) throw apiError('mfa_factor_not_found');
      let row = factor;
      // The user's other factors, for the unique name and number (checked here rather than left to the indexes' 500).
      const others = (await findFactorsByUser(c, user.id)).filter((f) => f.id !== factor.id);
      if (body.friendly_name) {
        if (others.some((f) => f.friendly_name === body.friendly_name)) throw nameConflict(body.friendly_name);
        row = await updateFactor(c, factor.id, { friendly_name: body.friendly_name });
      }
      if (body.phone && factor.factor_type === 'phone') {
        const phone = parsePhone(body.phone);
        if (!phone) throw apiError('phone_invalid');
        if (others.some((f) => f.phone === phone)) throw apiError('mfa_phone_factor_exists');
        row = await updateFactor(c, factor.id, { phone });
      }
      await writeAudit(c, req, admin.actor, 'factor_updated', { user_id: user.id, factor_id: factor.id, factor_type: factor.factor_type });
      return row;
    },
    req.signal,
  ).catch((err: unknown) => {
    // The indexes' refusal of a name or number taken after the checks is the checks' answer, not a 500.
    const taken = takenFactorIndex(err);
    if (taken === 'friendly_name' && body.friendly_name) throw nameConflict(body.friendly_name);
    if (taken === 'phone') throw apiError('mfa_phone_factor_exists');
    throw err;
  });
  return { body: factorJson(updated) };
};

export const adminDeleteFactor: GuardedHandler<Admin> = async (req, ctx) => {
  const user = await loadUser(ctx.db, req);
  const found = await loadFactor(ctx.db, req, user.id);
  // Audited under the factor's owner, not the admin, as the original does (its update is the admin's).
  const factor = await removeFactor(ctx, req, found, {
    actor: actorOf(user),
    action: 'factor_deleted',
    traits: (row) => ({ user_id: user.id, factor_id: row.id }),
  });
  return { body: factorJson(factor) };
};

// POST /factors/{factor_id}/challenge (docs/mfa.md#post-factorsfactor_idchallenge): the type's verify
// switch, then one sending transaction on the locked user and factor, under which the session is checked
// again: the type's work (a phone code sent), the challenge row bound to the caller's address, the factor's
// last_challenged_at, the audit entry (a code's). A failed send rolls all of it back.
import { randomUUID } from 'node:crypto';
import { apiError } from '../errors.js';
import { insertChallenge } from '../../db/mfa-challenges.js';
import { writeAudit } from '../../db/audit-log.js';
import { lockLiveUserById } from '../../db/users.js';
import { sendingTx } from '../delivery/sending-tx.js';
import { assertSessionStillLive } from '../auth/session-still-live.js';
import { actorOf } from '../users/actor.js';
import { ownedFactor, requireNotAnonymous, typeOf } from './factor-access.js';
import type { Authenticated } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import type { ApiRequest, JsonObject } from '../http/types.js';

export async function challengeFactor(req: ApiRequest, ctx: AppContext, principal: Authenticated): Promise<JsonObject> {
  requireNotAnonymous(principal);
  const { user } = principal;
  const found = await ownedFactor(ctx.db, req, user.id);
  const type = typeOf(found, 'verify');
  if (!type.switches(ctx).verifyEnabled) throw apiError(type.disabled.verify);
  const body = type.readsChallengeBody ? req.body() : {};
  return sendingTx(ctx, req.signal, async (c) => {
    // The user's row before the factor's, as unenrolment, verification and the user's deletion take them:
    // the other way round a challenge beside them could deadlock. Gone meanwhile: as at the bearer check.
    if (!(await lockLiveUserById(c, user.id))) throw apiError('user_not_found');
    // Locked, so two challenges of one factor pass its send interval one at a time.
    const factor = await ownedFactor(c, req, user.id, true);
    // Ended since the bearer check (another session's new password, a logout): no challenge, no code sent.
    await assertSessionStillLive(c, principal.session?.id ?? null);
    const challengeId = randomUUID();
    const plan = await type.challenge({ ctx, req, user, factor, challengeId, body, q: c });
    const challenge = await insertChallenge(c, { id: challengeId, factorId: factor.id, ip: req.ip, ...plan.columns });
    // As the original, which audits the challenges of codes (TOTP, phone) and not WebAuthn ceremonies.
    if (type.needsCode) {
      await writeAudit(c, req, actorOf(user), 'challenge_created', { factor_id: factor.id, factor_status: factor.status }, req.ip);
    }
    const expiresAt = Math.floor(challenge.created_at.getTime() / 1000) + ctx.config.mfa.challengeExpirySeconds;
    return { id: challengeId, type: type.name, expires_at: expiresAt, ...plan.answer };
  });
}

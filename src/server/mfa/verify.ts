// POST /factors/{factor_id}/verify (docs/mfa.md#post-factorsfactor_idverify): the challenge checked in
// the original's order (unknown, already used or from another address, expired), the type's verdict
// (outside any transaction: it may ask a gateway), then one transaction that spends the challenge and
// upgrades the session (src/db/mfa-upgrade.ts); the answer is a token response for the upgraded session.
import { ApiError, ERRORS, apiError } from '../errors.js';
import { enforceMfaVerificationAttempt } from '../hooks/mfa-verification-attempt.js';
import { lockUserById } from '../../db/users.js';
import { deleteChallenge, deleteSpentChallenge, findChallenge, markChallengeVerified } from '../../db/mfa-challenges.js';
import { upgradeSession } from '../../db/mfa-upgrade.js';
import { auditEntry } from '../../db/audit-log.js';
import { newRefreshToken, sha256Hex } from '../crypto/tokens.js';
import { encodeV2Token } from '../crypto/refresh-token-v2.js';
import { openSessionKey } from '../sessions/refresh-key.js';
import { issuingTx, signsInTransaction, tokenResponse, type TokenResponse } from '../sessions/issue.js';
import { actorOf } from '../users/actor.js';
import { ownedFactor, requireNotAnonymous, typeOf } from './factor-access.js';
import { NIL_UUID, readUuid } from '../uuid-text.js';
import { requireSession } from '../auth/session-required.js';
import type { FactorType } from './factor-types/index.js';
import type { Authenticated } from '../auth/principal.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { notice, sendNotifications } from '../delivery/notifications.js';

export async function verifyFactor(req: ApiRequest, ctx: AppContext, principal: Authenticated): Promise<TokenResponse> {
  requireNotAnonymous(principal);
  const { user } = principal;
  // Before the challenge is spent: the verification upgrades a session, and without one it cannot.
  const session = requireSession(principal);
  const factor = await ownedFactor(ctx.db, req, user.id);
  const body = req.body();
  // The original decodes challenge_id into a UUID with the rest of the body, so a string that is not one
  // ("" included) fails before any other check. Absent or null, it is the nil UUID: no such challenge.
  const read = typeof body.challenge_id === 'string' ? readUuid(body.challenge_id) : { uuid: NIL_UUID };
  if ('error' in read) throw apiError('bad_json', `Could not parse request body as JSON: ${read.error}`);
  const type = typeOf(factor, 'verify');
  if (type.needsCode && !body.code) throw apiError('mfa_code_required');
  if (!type.switches(ctx).verifyEnabled) throw apiError(type.disabled.verify);
  type.checkVerifyBody?.(ctx, body);
  const challenge = read.uuid !== NIL_UUID ? await findChallenge(ctx.db, factor.id, read.uuid) : null;
  if (!challenge) throw apiError('mfa_challenge_not_found');
  if (challenge.verified_at || challenge.ip_address !== req.ip) throw apiError('mfa_ip_address_mismatch');
  if (challenge.created_at.getTime() + ctx.config.mfa.challengeExpirySeconds * 1000 < Date.now()) {
    await deleteChallenge(ctx.db, challenge.id);
    throw apiError(
      'mfa_challenge_expired',
      `MFA challenge ${challenge.id} has expired, verify against another challenge or create a new challenge.`,
    );
  }
  const outcome = await verdictAfterHook(ctx, req, type, { ctx, req, user, factor, challenge, body });
  const refreshToken = newRefreshToken();
  // As at sign-in: a signature that fails must undo the upgrade too.
  const signInside = signsInTransaction(ctx);
  const { factorVerified, made, issued } = await issuingTx(
    ctx,
    async (c) => {
      // The user's row first, as a concurrent DELETE /admin/users takes it before cascading to the challenge,
      // factor and session written below: in the other order the two deadlock. After it, the user is gone.
      if (!(await lockUserById(c, user.id))) throw apiError('user_not_found');
      // Removed meanwhile (unenrolled, or another of the type verified first: upgradeSession): the 404 a
      // verification sent after that gets, rather than a refusal of the challenge that went with it.
      await ownedFactor(c, req, user.id);
      // A concurrent verification of the same challenge got there first: as for a used challenge.
      if (type.spendsChallengeBy === 'deleting') {
        if (!(await deleteSpentChallenge(c, challenge.id))) throw apiError('mfa_challenge_not_found');
      } else if (!(await markChallengeVerified(c, challenge.id))) throw apiError('mfa_ip_address_mismatch');
      if (outcome.commit && !(await outcome.commit(c))) throw apiError(type.failed);
      const upgraded = await upgradeSession(c, {
        userId: user.id,
        sessionId: session.id,
        factorId: factor.id,
        factorType: type.name,
        amrMethod: type.amrMethod,
        refreshTokenHash: sha256Hex(refreshToken),
        audit: auditEntry(
          req,
          actorOf(user),
          'verification_attempted',
          { factor_id: factor.id, challenge_id: challenge.id, factor_type: type.name },
          req.ip,
        ),
        swapAudit: auditEntry(req, actorOf(user), 'token_revoked'),
      });
      if (!upgraded.upgraded) throw apiError('session_not_found');
      // A v2 session's token is its counter signed with its key; the 12-character one above was not stored.
      const { v2 } = upgraded;
      const issued = v2 ? encodeV2Token(session.id, BigInt(v2.counter), openSessionKey(ctx.config, session.id, v2.key).key) : refreshToken;
      const made = signInside ? await tokenResponse(ctx, c, user, session, issued, undefined, req, type.amrMethod) : null;
      return { factorVerified: upgraded.factorVerified, made, issued };
    },
    req.signal,
  );
  // The first successful verification enrols the factor: its notification goes after the commit.
  if (factorVerified) await sendNotifications(ctx, req, notice(ctx, { kind: 'mfaFactorEnrolled', user, factorType: type.name }));
  return made ?? tokenResponse(ctx, ctx.db, user, session, issued, undefined, req, type.amrMethod);
}

/**
 * The type's verdict, shown to the MFA verification attempt hook before it is acted on, as the original:
 * the hook sees wrong codes too (valid: false), and a "reject" ends every session of the user. As there,
 * only codes are shown to it (TOTP and phone factors); a WebAuthn verification never calls the hook.
 */
async function verdictAfterHook(
  ctx: AppContext,
  req: ApiRequest,
  type: FactorType,
  input: Parameters<FactorType['verify']>[0],
): Promise<Awaited<ReturnType<FactorType['verify']>>> {
  if (!type.needsCode) return type.verify(input);
  try {
    const outcome = await type.verify(input);
    await enforceMfaVerificationAttempt(ctx, { userId: input.user.id, factorId: input.factor.id, factorType: type.name, valid: true }, req);
    return outcome;
  } catch (error) {
    if (error instanceof ApiError && error.message === ERRORS[type.failed].msg && error.errorCode === ERRORS[type.failed].code) {
      await enforceMfaVerificationAttempt(
        ctx,
        { userId: input.user.id, factorId: input.factor.id, factorType: type.name, valid: false },
        req,
      );
    }
    throw error;
  }
}

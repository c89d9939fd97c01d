// The checks of a password change in PUT /user (docs/api.md#put-user), before the update's transaction opens
// (the policy may wait on the leaked-password check): the policy; reauthentication required → a nonce must
// come with it and be right; the current password where it is required; not the same password. Resolves
// the new hash. Also the columns any new password writes (PUT /user and PUT /admin/users).
import { apiError } from '../errors.js';
import { assertStrongPassword, isPasswordTooLong } from './password-policy.js';
import { lockLiveUserById, type UserRow, type UserWrite } from '../../db/users.js';
import { tx } from '../../db/pool.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { reauthenticationChannel, spendNonce } from './reauthentication.js';
import { isRecoverySession } from '../../db/sessions.js';
import { passwordHashOf, storedPasswordHash } from './password-at-rest.js';

/**
 * docs/differences.md#security: "When SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION is enabled, the body must contain
 * password and nonce". The original exempts sessions younger than 24 h; the spec does not, and a stolen
 * fresh access token is exactly the case the setting guards against, so every change needs the nonce.
 * Except for a user with neither email nor phone (anonymous): no nonce can reach them, and the password
 * they set comes with the address that makes them permanent.
 */
export function needsNonce(ctx: AppContext, user: UserRow): boolean {
  return ctx.config.security.updatePasswordRequireReauthentication && reauthenticationChannel(user) !== null;
}

/** What the caller sent beside the new password: `current_password`, and the session it acts in (null: none). */
export interface CurrentPassword {
  password: string | null;
  sessionId: string | null;
}

/** The password's own faults (too long, too weak), which the original finds with the body's formats, first of all. */
export async function assertPasswordAcceptable(ctx: AppContext, password: string, req: Pick<ApiRequest, 'requestId'>): Promise<void> {
  if (isPasswordTooLong(password)) throw apiError('password_too_long');
  await assertStrongPassword(ctx, password, req.requestId);
}

/**
 * What the request lacks, after assertPasswordAcceptable and the address checks, in the original's order: the
 * nonce, sent and then right (spent here, in a transaction of its own, as the original spends it before it
 * looks further), the current password, a password that differs from the old one. Resolves the new hash.
 */
export async function checkNewPassword(
  ctx: AppContext,
  user: UserRow,
  password: string,
  nonce: string,
  current: CurrentPassword,
  req: Pick<ApiRequest, 'signal' | 'requestId'>,
): Promise<string> {
  if (needsNonce(ctx, user)) {
    if (!nonce) throw apiError('reauthentication_needed');
    await spendNonceNow(ctx, user, nonce, req.signal);
  }
  return checkAgainstStored(ctx, user, password, current, req);
}

/**
 * The checks against the password `user` holds (the current one, a different new one), and the new hash.
 * PUT /user runs them again when a concurrent change replaced that password before its write: the
 * current password it checked is then no longer the current one (routes/user-update.ts).
 */
export async function checkAgainstStored(
  ctx: AppContext,
  user: UserRow,
  password: string,
  current: CurrentPassword,
  req: Pick<ApiRequest, 'signal'>,
): Promise<string> {
  const hash = passwordHashOf(ctx.config, user);
  if (password && hash) await assertCurrentPassword(ctx, hash, current, req.signal);
  if (hash && (await ctx.hasher.verify(hash, password, req.signal)).ok) {
    throw apiError('same_password');
  }
  return storedPasswordHash(ctx.config, user.id, await ctx.hasher.hash(password, req.signal));
}

/**
 * Spends the nonce under the user's row lock, so that two updates with one nonce pass one at a time and only
 * one of them finds it; a wrong nonce's counted attempt commits with the refusal.
 */
async function spendNonceNow(ctx: AppContext, user: UserRow, nonce: string, signal?: AbortSignal): Promise<void> {
  const refused = await tx(
    ctx.db,
    async (c) => {
      if (!(await lockLiveUserById(c, user.id))) return apiError('user_not_found');
      return spendNonce(ctx, c, user, nonce);
    },
    signal,
  );
  if (refused) throw refused;
}

/**
 * SECURITY_UPDATE_PASSWORD_REQUIRE_CURRENT_PASSWORD, for a user who has a password: the change names it,
 * unless a one-time code or link (recovery, magic link, OTP) signed this session in, so the user who forgot
 * it can still set a new one, as the original. A token that names no session is not such a session.
 */
async function assertCurrentPassword(ctx: AppContext, hash: string, current: CurrentPassword, signal?: AbortSignal): Promise<void> {
  if (!ctx.config.security.updatePasswordRequireCurrentPassword) return;
  if (current.sessionId && (await isRecoverySession(ctx.db, current.sessionId))) return;
  if (!current.password) throw apiError('current_password_required');
  if (!(await ctx.hasher.verify(hash, current.password, signal)).ok) throw apiError('current_password_invalid');
}

/**
 * The write of a new password (stored form): as the original, it also clears when each confirmation,
 * recovery, address-change and reauthentication message went out, since those were asked for under the
 * old password; with the one-time tokens deleted beside it, the user may ask for them again at once
 * instead of waiting out the send interval.
 */
export function newPasswordWrite(storedHash: string): UserWrite {
  return {
    encrypted_password: storedHash,
    confirmation_sent_at: null,
    recovery_sent_at: null,
    email_change_sent_at: null,
    phone_change_sent_at: null,
    reauthentication_sent_at: null,
  };
}

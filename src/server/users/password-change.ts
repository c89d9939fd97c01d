// The checks of a password change in PUT /user (docs/api.md#put-user), before any write: reauthentication
// required → a nonce must come with it; the policy; not the same password. Resolves the new hash. Runs before
// the update's transaction opens: the policy may wait on the leaked-password check.
import { apiError } from '../errors.js';
import { assertStrongPassword, isPasswordTooLong } from './password-policy.js';
import type { UserRow } from '../../db/users.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { reauthenticationChannel } from './reauthentication.js';

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

export async function checkNewPassword(
  ctx: AppContext,
  user: UserRow,
  password: string,
  nonce: string,
  req: Pick<ApiRequest, 'signal' | 'requestId'>,
): Promise<string> {
  if (needsNonce(ctx, user) && !nonce) throw apiError('reauthentication_needed');
  if (isPasswordTooLong(password)) throw apiError('password_too_long');
  await assertStrongPassword(ctx, password, req.requestId);
  if (user.encrypted_password && (await ctx.hasher.verify(user.encrypted_password, password, req.signal)).ok) {
    throw apiError('same_password');
  }
  return ctx.hasher.hash(password, req.signal);
}

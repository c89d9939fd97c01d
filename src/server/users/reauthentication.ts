// The reauthentication nonce (docs/api.md#get-reauthenticate): a one-time code sent to the user's email (preferred)
// or phone by GET /reauthenticate, spent by PUT /user as `nonce`. It expires like its channel's codes.
import { apiError } from '../errors.js';
import { deleteOneTimeTokens } from '../../db/one-time-tokens.js';
import type { Queryable } from '../../db/pool.js';
import type { UserRow } from '../../db/users.js';
import { findTokenByCode, findTokenCheckedByGateway, isExpired } from '../verify/one-time-codes.js';
import type { AppContext } from '../context.js';
import { testOtpFor } from '../delivery/sms/test-otp.js';

export const nonceInvalid = () => apiError('reauthentication_not_valid');

/** The channel the nonce goes to: email when the user has one, else phone. */
export function reauthenticationChannel(user: UserRow): { channel: 'email' | 'sms'; address: string } | null {
  if (user.email) return { channel: 'email', address: user.email };
  if (user.phone) return { channel: 'sms', address: user.phone };
  return null;
}

/**
 * True when `nonce` is the user's live nonce, which is then spent. A wrong nonce counts as a failed
 * attempt; the caller must commit even when this returns false, or the count is lost.
 */
export async function spendNonce(ctx: AppContext, q: Queryable, user: UserRow, nonce: string): Promise<boolean> {
  const target = reauthenticationChannel(user);
  if (!target) return false;
  const code = nonce.trim();
  const maxAttempts = ctx.config.security.otpMaxAttempts;
  // A gateway that makes and checks its own codes (Twilio Verify) is asked, as /verify does for SMS.
  const gatewayCheck =
    target.channel === 'sms' && !testOtpFor(ctx.config.sms, target.address) && !ctx.config.hooks.sendSms.enabled
      ? ctx.sms?.verifyOtp?.bind(ctx.sms)
      : undefined;
  const row = gatewayCheck
    ? await findTokenCheckedByGateway(q, gatewayCheck, target.address, code, ['reauthentication_token'], maxAttempts)
    : await findTokenByCode(q, target.address, code, ['reauthentication_token'], maxAttempts);
  const lifetime = target.channel === 'email' ? ctx.config.mailer.otpExpSeconds : ctx.config.sms.otpExpSeconds;
  if (!row || row.user_id !== user.id || isExpired(row, lifetime)) return false;
  await deleteOneTimeTokens(q, user.id, ['reauthentication_token']);
  return true;
}

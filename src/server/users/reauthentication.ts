// The reauthentication nonce (docs/api.md#get-reauthenticate): a one-time code sent to the user's email (preferred)
// or phone by GET /reauthenticate, spent by PUT /user as `nonce`. It expires like its channel's codes; one made
// by Twilio Verify, when Twilio says so.
import { apiError, type ApiError } from '../errors.js';
import { deleteOneTimeTokens, type OneTimeTokenType } from '../../db/one-time-tokens.js';
import type { Queryable } from '../../db/pool.js';
import type { UserRow } from '../../db/users.js';
import { findTokenByCode, findTokenCheckedByGateway, isExpired, linkKeyFor } from '../verify/one-time-codes.js';
import type { AppContext } from '../context.js';
import { gatewayCodeCheck } from '../verify/gateway-check.js';

export const nonceInvalid = () => apiError('reauthentication_not_valid');

/** The channel the nonce goes to: email when the user has one, else phone. */
export function reauthenticationChannel(user: UserRow): { channel: 'email' | 'sms'; address: string } | null {
  if (user.email) return { channel: 'email', address: user.email };
  if (user.phone) return { channel: 'sms', address: user.phone };
  return null;
}

/**
 * Spends `nonce` when it is the user's live nonce and answers null; otherwise answers the refusal. A wrong
 * nonce counts as a failed attempt, so the caller must commit even when refusing, or the count is lost.
 */
export async function spendNonce(ctx: AppContext, q: Queryable, user: UserRow, nonce: string): Promise<ApiError | null> {
  const target = reauthenticationChannel(user);
  if (!target) return nonceInvalid();
  const code = nonce.trim();
  const maxAttempts = ctx.config.security.otpMaxAttempts;
  const types: OneTimeTokenType[] = ['reauthentication_token'];
  // A gateway that makes and checks its own codes (Twilio Verify) is asked, as /verify does for SMS.
  const gatewayCheck = target.channel === 'sms' ? gatewayCodeCheck(ctx, target.address) : undefined;
  if (gatewayCheck) {
    const verdict = await findTokenCheckedByGateway(q, gatewayCheck, target.address, code, types, maxAttempts);
    // As the original: with no nonce pending it is the nonce refusal; once the gateway has been asked,
    // a code it refuses, or failing to ask it, is 403 otp_expired as at /verify. An approved code is
    // not held to SMS_OTP_EXP: the gateway has applied its own lifetime, and used the code up.
    if (verdict.outcome === 'no_token') return nonceInvalid();
    if (verdict.outcome === 'failed') ctx.log.warn({ err: verdict.error }, 'checking a reauthentication code with the gateway failed');
    if (verdict.outcome !== 'approved' || verdict.row.user_id !== user.id) return apiError('otp_expired');
  } else {
    const row = await findTokenByCode(q, linkKeyFor(ctx.config.jwt), target.address, code, types, maxAttempts);
    const lifetime = target.channel === 'email' ? ctx.config.mailer.otpExpSeconds : ctx.config.sms.otpExpSeconds;
    if (!row || row.user_id !== user.id || isExpired(row, lifetime)) return nonceInvalid();
  }
  await deleteOneTimeTokens(q, user.id, types);
  return null;
}

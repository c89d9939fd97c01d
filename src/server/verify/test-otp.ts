// SMS_TEST_OTP at POST /verify (docs/sms.md#test-numbers). A listed number's fixed code is accepted as the
// original accepts it: for the user holding that number (the phone of `sms`, the pending new phone of
// `phone_change`, in the request's audience), with no stored token behind it — so neither a send first nor
// SMS_OTP_EXP — until SMS_TEST_OTP_VALID_UNTIL. Any other code goes the ordinary way (verify/consume.ts).
import type pg from 'pg';
import { findUserByPhone, findUserByPhoneChange, lockLiveUserById, type UserRow } from '../../db/users.js';
import type { OneTimeTokenType } from '../../db/one-time-tokens.js';
import { testOtpFor } from '../delivery/sms/test-otp.js';
import { safeEqual } from '../crypto/tokens.js';
import { requestAudience } from '../auth/bearer.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import type { VerifyType } from './types.js';

/** The user a test number's fixed code verifies, locked, with the token type it stands for; else null. */
export async function testOtpHolder(
  ctx: AppContext,
  c: pg.PoolClient,
  req: ApiRequest,
  type: VerifyType,
  phone: string,
  code: string,
): Promise<{ user: UserRow; tokenType: OneTimeTokenType } | null> {
  const fixed = type.testOtpColumn ? testOtpFor(ctx.config.sms, phone) : undefined;
  if (fixed === undefined || !safeEqual(fixed, code)) return null;
  const aud = requestAudience(req, ctx);
  const found = type.testOtpColumn === 'phone' ? await findUserByPhone(c, phone, aud) : await findUserByPhoneChange(c, phone, aud);
  const user = found && (await lockLiveUserById(c, found.id));
  return user ? { user, tokenType: type.tokenTypes[0] } : null;
}

// SMS_TEST_OTP: fixed codes for listed numbers, bypassing the gateway, until SMS_TEST_OTP_VALID_UNTIL
// when that is set (docs/sms.md#test-numbers). After that time the numbers get real codes again.
import type { Config } from '../../config/types.js';
import { parseTimestamp } from '../../go-time.js';

/** The fixed code for `phone` (digits, no '+'), or undefined when there is none or it is no longer valid. */
export function testOtpFor(sms: Pick<Config['sms'], 'testOtp' | 'testOtpValidUntil'>, phone: string, now = Date.now()): string | undefined {
  const code = sms.testOtp[phone];
  if (code === undefined) return undefined;
  // Valid strictly before that time, as the original's now.Before(until); the value was checked at start.
  if (sms.testOtpValidUntil && now >= (parseTimestamp(sms.testOtpValidUntil) ?? 0)) return undefined;
  return code;
}

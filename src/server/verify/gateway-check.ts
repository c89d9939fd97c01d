// Twilio Verify makes, sends and checks its own phone codes (docs/sms.md#twilio-verify), so such a code is
// checked by asking Twilio, and the stored token only records that a code went out. Not when our own code
// went out instead: the send-SMS hook's (docs/hooks.md#send-sms) or a test number's fixed code, which are
// compared with the stored token as for any other gateway.
import { bounded } from '../delivery/send-token.js';
import { SmsSendError } from '../delivery/sms/index.js';
import { testOtpFor } from '../delivery/sms/test-otp.js';
import type { SmsGatewayName } from '../config/types.js';
import type { AppContext } from '../context.js';
import type { GatewayCheck } from './one-time-codes.js';

/** The gateway's check of a code sent to `phone` (digits, no '+'), or undefined when the stored code is compared. */
export function gatewayCodeCheck(ctx: AppContext, phone: string): GatewayCheck | undefined {
  const sms = ctx.sms;
  const verifyOtp = sms?.verifyOtp?.bind(sms);
  if (!sms || !verifyOtp || ctx.config.hooks.sendSms.enabled || testOtpFor(ctx.config.sms, phone)) return undefined;
  const gateway = sms.gateway as SmsGatewayName;
  // Callers ask inside their transaction: SEND_TIMEOUT bounds how long it stays open, as for a send.
  return (to, code) =>
    bounded(
      ctx,
      verifyOtp(to, code),
      () => new SmsSendError(gateway, `${gateway} request failed: no answer within ${ctx.config.api.sendTimeoutSeconds} s`),
    );
}

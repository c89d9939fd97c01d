// Phone factors: a code by SMS or WhatsApp at each challenge, through the configured gateway (or the send-SMS
// hook) within the factor's MFA_PHONE_MAX_FREQUENCY. As in the original, RATE_LIMIT_SMS_SENT does not count
// these codes: a spent sign-up budget must not lock users out of their second factor. The code is kept
// sealed on the challenge row (../encryption.ts) and compared in constant time; with twilio_verify the
// gateway makes and checks the code itself, as the original.
import { apiError } from '../../errors.js';
import { deleteFactors } from '../../../db/mfa-factors.js';
import { parsePhone } from '../../users/addresses.js';
import { challengeChannel } from '../../delivery/sms/channel-field.js';
import { renderSmsTemplate, SmsChannelError, SmsGatewayUnknownError, SmsSendError } from '../../delivery/sms/index.js';
import { bounded } from '../../delivery/send-token.js';
import { sendSmsHook } from '../../hooks/send-sms.js';
import { assertSendInterval } from '../../limits/sends.js';
import { newOtp, safeEqual } from '../../crypto/tokens.js';
import { secretBox } from '../encryption.js';
import type { SmsGatewayName } from '../../config/types.js';
import type { FactorType } from './factor-type.js';

export const phone: FactorType = {
  name: 'phone',
  amrMethod: 'mfa/phone',
  disabled: { enroll: 'mfa_phone_enroll_not_enabled', verify: 'mfa_phone_verify_not_enabled' },
  failed: 'mfa_phone_verification_failed',
  needsCode: true,
  spendsChallengeBy: 'marking',
  readsChallengeBody: true,
  auditsTypeAtEnrolment: true,
  switches: (ctx) => ctx.config.mfa.phone,

  enroll({ body }) {
    const given = typeof body.phone === 'string' ? body.phone : '';
    if (!given) throw apiError('mfa_phone_required');
    const number = parsePhone(given);
    if (!number) throw apiError('phone_invalid');
    return {
      columns: { phone: number },
      answer: { phone: given },
      async beforeChecks(q, factors) {
        const same = factors.filter((f) => f.phone === number);
        if (same.some((f) => f.status === 'verified')) throw apiError('mfa_verified_factor_exists');
        await deleteFactors(
          q,
          same.map((f) => f.id),
        );
        return factors.filter((f) => f.phone !== number);
      },
    };
  },

  async challenge({ ctx, req, user, factor, challengeId, body, q }) {
    const channel = challengeChannel(ctx, body);
    const hooked = ctx.config.hooks.sendSms.enabled;
    const sms = ctx.sms;
    // docs/hooks.md#send-sms: as the original, the hook replaces the gateway here too, so none need be configured.
    if (!sms && !hooked) throw apiError('phone_provider_unsupported');
    assertSendInterval('sms', factor.last_challenged_at, ctx.config.mfa.phone.maxFrequencySeconds);
    const to = factor.phone ?? '';
    const code = newOtp(ctx.config.mfa.phone.otpLength);
    if (hooked || !sms) {
      await sendSmsHook(ctx, user, { otp: code, phone: to, smsType: 'mfa' }, req, q);
      return { columns: { otpCode: secretBox(ctx.config).sealOrClear(challengeId, code) } };
    }
    // twilio_verify makes its own code and checks it at verify; the others send ours.
    // Counted in auth_deliveries_total as a sign-in code's SMS is (docs/observability.md#metrics).
    try {
      let timedOut = false;
      await bounded(ctx, sms.send(to, renderSmsTemplate(ctx.config.mfa.phone.template, code), channel, code), () => {
        timedOut = true;
        return new SmsSendError(
          sms.gateway as SmsGatewayName,
          `${sms.gateway} request failed: no answer within ${ctx.config.api.sendTimeoutSeconds} s`,
        );
      }).catch((err: unknown) => {
        ctx.metrics.sent('sms', timedOut ? 'timeout' : 'failed');
        throw err;
      });
      ctx.metrics.sent('sms', 'sent');
    } catch (err) {
      if (err instanceof SmsChannelError) throw apiError('sms_channel_invalid');
      if (err instanceof SmsSendError) throw apiError('sms_send_failed', `Error sending MFA OTP to provider: ${err.message}`);
      if (err instanceof SmsGatewayUnknownError) throw apiError('mfa_sms_gateway_unknown').causedBy(err);
      throw err;
    }
    return { columns: { otpCode: sms.verifyOtp ? null : secretBox(ctx.config).sealOrClear(challengeId, code) } };
  },

  async verify({ ctx, factor, challenge, body }) {
    const code = typeof body.code === 'string' ? body.code : '';
    if (ctx.sms?.verifyOtp && challenge.otp_code === null) {
      const check = ctx.sms.verifyOtp(factor.phone ?? '', code);
      const timeout = () =>
        new SmsSendError('twilio_verify', `twilio_verify request failed: no answer within ${ctx.config.api.sendTimeoutSeconds} s`);
      let approved: boolean;
      try {
        approved = await bounded(ctx, check, timeout);
      } catch (err) {
        // As the original, and as /verify answers it: a check the gateway could not make (an outage, its
        // attempts spent) is a code that did not verify; the gateway's words go to the log only.
        if (!(err instanceof SmsSendError)) throw err;
        ctx.log.warn({ err }, 'the SMS gateway could not check an MFA code');
        throw apiError('otp_expired');
      }
      if (!approved) throw apiError('otp_expired');
      return {};
    }
    const sent = challenge.otp_code ? secretBox(ctx.config).open(challenge.id, challenge.otp_code).value : '';
    if (!sent || !safeEqual(sent, code)) throw apiError('mfa_phone_verification_failed');
    return {};
  },
};

// The `channel` field: sms (default) or whatsapp (docs/sms.md#channels).
import { apiError } from '../../errors.js';
import type { AppContext } from '../../context.js';
import type { SmsChannel } from './sender.js';

/**
 * The channel field of the sign-up, OTP and user-update bodies: a string, as the original decodes it. Its
 * value is checked only where a code may go to a phone (phoneChannel), so an email sign-up ignores it.
 */
export const CHANNEL_FIELD = { channel: 'string' } as const;

/**
 * An MFA phone challenge's channel. The challenge body declares the field as any value, since TOTP and
 * WebAuthn challenges never read it; a phone challenge reads it as a string (absent or null: sms), so any
 * other JSON type is refused like a wrong type anywhere (docs/differences.md#answers). The value itself is
 * then checked as phoneChannel checks it: anything passes under the send-SMS hook, as in the original.
 */
export function challengeChannel(ctx: Pick<AppContext, 'config' | 'sms'>, body: Record<string, unknown>): SmsChannel {
  const channel = body.channel ?? '';
  if (typeof channel !== 'string') throw apiError('validation_failed', 'channel must be a string');
  return phoneChannel(ctx, channel);
}

/**
 * The channel of a phone sign-up, of POST /otp with a phone and of PUT /user with a phone, checked before
 * anything is stored or sent, as the original does, so a request that ends up sending nothing
 * (autoconfirm, a test number) is refused alike. With the send-SMS hook on, any value passes: the hook is
 * not told the channel. Otherwise sms (also for an empty or absent value), or whatsapp with a gateway that
 * delivers it; anything else is 400 with the original's message.
 */
export function phoneChannel(ctx: Pick<AppContext, 'config' | 'sms'>, channel: string | null | undefined): SmsChannel {
  const given = channel ?? '';
  if (ctx.config.hooks.sendSms.enabled) return given === 'whatsapp' ? 'whatsapp' : 'sms';
  if (given === '' || given === 'sms') return 'sms';
  if (given === 'whatsapp' && ctx.sms?.channels.includes('whatsapp')) return 'whatsapp';
  throw apiError('sms_channel_invalid');
}

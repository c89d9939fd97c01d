// POST /otp (docs/api.md#post-otp): an email gets a magic link exactly as POST /magiclink; a phone gets an SMS
// code. create_user follows the original (docs/differences.md): true (the default) may sign the address up;
// false with an unknown address is 422 otp_disabled.
import { ApiError, apiError } from '../errors.js';
import { sendingTx } from '../delivery/sending-tx.js';
import { findUserByEmail, findUserByPhone, lockLiveUserById } from '../../db/users.js';
import { writeAudit } from '../../db/audit-log.js';
import { lookupPhone, normaliseEmail, normalisePhone } from '../users/addresses.js';
import { PKCE_FIELDS, readPkceParams } from '../verify/pkce-challenge.js';
import { bodySchema, type BodyOf } from '../http/validate.js';
import { requestAudience } from '../auth/bearer.js';
import { sendMagicLink } from './magiclink.js';
import { signUpWithoutPassword } from '../users/signup.js';
import { actorOf } from '../users/actor.js';
import { sendConfirmation } from '../users/confirmation.js';
import { CHANNEL_FIELD, phoneChannel } from '../delivery/sms/channel-field.js';
import type { Handler, ApiRequest, ApiResponse } from '../http/types.js';
import type { AppContext } from '../context.js';

const FIELDS = { email: 'string', phone: 'string', ...CHANNEL_FIELD, ...PKCE_FIELDS, create_user: 'boolean', data: 'object' } as const;
export const otpBody = bodySchema(FIELDS);
type OtpBody = BodyOf<typeof FIELDS>;

export const otp: Handler<OtpBody> = async (req, ctx) => {
  const body = req.body();
  const email = body.email ?? '';
  const phone = body.phone ?? '';
  if (email && phone) throw apiError('otp_email_and_phone');
  if (email && body.channel !== undefined && body.channel !== null && body.channel !== '') {
    throw apiError('otp_channel_with_email');
  }
  readPkceParams(body);
  if (!email && !phone) throw apiError('otp_no_address');
  if (!(await mayProceed(req, ctx, body, email, phone))) throw apiError('otp_disabled');
  if (email) {
    await sendMagicLink(req, ctx, body);
    return { body: {} };
  }
  return sendSmsOtp(req, ctx, body);
};

/**
 * create_user false: only an existing user may get a code. An address that does not parse names nobody, so
 * it is refused as otp_disabled too, as the original refuses it, not as a malformed address.
 */
async function mayProceed(req: ApiRequest, ctx: AppContext, body: OtpBody, email: string, phone: string): Promise<boolean> {
  if (body.create_user ?? true) return true;
  const aud = requestAudience(req, ctx);
  let address: string;
  try {
    address = email ? normaliseEmail(email) : lookupPhone(phone);
  } catch (err) {
    if (err instanceof ApiError) return false;
    throw err;
  }
  const user = email ? await findUserByEmail(ctx.db, address, aud) : await findUserByPhone(ctx.db, address, aud);
  return user !== null;
}

/** `again`: the user found was deleted before its row was locked, and the number is looked up once more. */
async function sendSmsOtp(req: ApiRequest, ctx: AppContext, body: OtpBody, again = false): Promise<ApiResponse> {
  if (!ctx.config.external.phoneEnabled) throw apiError('phone_provider_unsupported');
  // Looked up as the original looks it up; only a number that is to be signed up must also be possible.
  const phone = lookupPhone(body.phone);
  const channel = phoneChannel(ctx, body.channel);
  const aud = requestAudience(req, ctx);
  let user = await findUserByPhone(ctx.db, phone, aud);
  // An unknown number is signed up silently, and so, without SMS_AUTOCONFIRM, is an unconfirmed one: its
  // confirmation SMS is the code. Under autoconfirm an unconfirmed user gets the code below alone, as the
  // original sends one after confirming it; verifying it confirms the number (a repeated sign-up confirms
  // nothing here: docs/differences.md).
  if (!user || (!user.phone_confirmed_at && !ctx.config.sms.autoconfirm)) {
    // The number signed up must also be possible (normalisePhone, as every number given to a user).
    await signUpWithoutPassword(req, ctx, { provider: 'phone', address: normalisePhone(phone), data: body.data ?? {}, channel });
    if (!ctx.config.sms.autoconfirm) return { body: {} };
    user = await findUserByPhone(ctx.db, phone, aud);
    if (!user) return { body: {} };
  }
  const userId = user.id;
  const sent = await sendingTx(ctx, req.signal, async (c) => {
    const current = await lockLiveUserById(c, userId);
    // Deleted (or soft-deleted) by a concurrent request since the lookup above: nothing sent here.
    if (!current) return null;
    // With the channel the code goes by, as the original's entry.
    await writeAudit(c, req, actorOf(current), 'user_recovery_requested', { channel });
    return sendConfirmation(ctx, c, current, {
      provider: 'phone',
      address: phone,
      channel,
      redirectTo: '',
      pkce: null,
      checkInterval: true,
      req,
    });
  });
  // The number is free now: answered as one with no account is, signed up and sent its code.
  if (!sent) return again ? { body: {} } : sendSmsOtp(req, ctx, body, true);
  return { body: sent.messageId ? { message_id: sent.messageId } : {} };
}

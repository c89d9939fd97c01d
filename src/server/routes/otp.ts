// POST /otp (REFERENCE §2.4): an email gets a magic link exactly as POST /magiclink; a phone gets an SMS
// code. create_user follows the original (decisions table): true (the default) may sign the address up;
// false with an unknown address is 422 otp_disabled.
import { ApiError, badRequest, unprocessable } from '../errors.js';
import { sendingTx } from '../delivery/sending-tx.js';
import { findUserByEmail, findUserByPhone, lockUserById } from '../../db/users.js';
import { writeAudit } from '../../db/audit-log.js';
import { normaliseEmail, normalisePhone, objectField, stringField } from '../users/addresses.js';
import { readPkceParams } from '../verify/pkce-challenge.js';
import { requestAudience } from '../auth/bearer.js';
import { sendMagicLink } from './magiclink.js';
import { signUpWithoutPassword } from '../users/signup.js';
import { actorOf } from '../users/actor.js';
import { sendConfirmation } from '../users/confirmation.js';
import { parseChannel } from '../delivery/sms/channel-field.js';
import type { Handler, ApiRequest, ApiResponse } from '../http/types.js';
import type { AppContext } from '../context.js';

export const otp: Handler = async (req, ctx) => {
  const body = req.body();
  const email = stringField(body, 'email');
  const phone = stringField(body, 'phone');
  if (email && phone) throw badRequest('Only an email address or phone number should be provided');
  if (email && body.channel !== undefined && body.channel !== null && body.channel !== '') {
    throw badRequest('Channel should only be specified with Phone OTP');
  }
  readPkceParams(body);
  if (!email && !phone) throw badRequest('One of email or phone must be set');
  if (!await mayProceed(req, ctx, body, email, phone)) throw unprocessable('otp_disabled', 'Signups not allowed for otp');
  if (email) {
    await sendMagicLink(req, ctx, body);
    return { body: {} };
  }
  return sendSmsOtp(req, ctx, body);
};

/** create_user false: only an existing user may get a code. */
async function mayProceed(req: ApiRequest, ctx: AppContext, body: Record<string, unknown>, email: string, phone: string): Promise<boolean> {
  const createUser = body.create_user ?? true;
  if (typeof createUser !== 'boolean') throw badRequest('create_user must be a boolean');
  if (createUser) return true;
  const aud = requestAudience(req, ctx);
  const user = email ? await findUserByEmail(ctx.db, normaliseEmail(email), aud) : await findUserByPhone(ctx.db, normalisePhone(phone), aud);
  return user !== null;
}

async function sendSmsOtp(req: ApiRequest, ctx: AppContext, body: Record<string, unknown>): Promise<ApiResponse> {
  if (!ctx.config.external.phoneEnabled) throw new ApiError(400, 'phone_provider_disabled', 'Unsupported phone provider');
  const phone = normalisePhone(stringField(body, 'phone'));
  const channel = parseChannel(body);
  const aud = requestAudience(req, ctx);
  let user = await findUserByPhone(ctx.db, phone, aud);
  if (!user?.phone_confirmed_at) {
    // An unknown or unconfirmed number is signed up silently; its confirmation SMS is the code.
    await signUpWithoutPassword(req, ctx, { provider: 'phone', address: phone, data: objectField(body, 'data'), channel });
    if (!ctx.config.sms.autoconfirm) return { body: {} };
    user = await findUserByPhone(ctx.db, phone, aud);
    if (!user) return { body: {} };
  }
  const userId = user.id;
  const { messageId } = await sendingTx(ctx, req.signal, async (c) => {
    const current = (await lockUserById(c, userId))!;
    await writeAudit(c, actorOf(current), 'user_recovery_requested');
    return sendConfirmation(ctx, c, current, { provider: 'phone', address: phone, channel, redirectTo: '', pkce: null, checkInterval: true });
  });
  return { body: messageId ? { message_id: messageId } : {} };
}

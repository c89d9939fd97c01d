// POST /magiclink (REFERENCE §2.5), also the email half of POST /otp: a confirmed user gets a magic link
// (the recovery token); an unknown or unconfirmed address is signed up and gets the confirmation mail,
// whose link signs in just the same. The answer is always {} so it reveals nothing about the address.
import { unprocessable } from '../errors.js';
import { findUserByEmail } from '../../db/users.js';
import { normaliseEmail, objectField, stringField } from '../users/addresses.js';
import { readPkceParams } from '../verify/pkce-challenge.js';
import { requestAudience } from '../auth/bearer.js';
import { redirectTarget } from '../http/redirect-target.js';
import { sendLinkMail } from '../passwordless/link-mail.js';
import { signUpWithoutPassword } from '../users/signup.js';
import type { Handler, ApiRequest } from '../http/types.js';
import type { AppContext } from '../context.js';

export const magiclink: Handler = async (req, ctx) => {
  await sendMagicLink(req, ctx, req.body());
  return { body: {} };
};

export async function sendMagicLink(req: ApiRequest, ctx: AppContext, body: Record<string, unknown>): Promise<void> {
  if (!ctx.config.external.emailEnabled) throw unprocessable('email_provider_disabled', 'Email logins are disabled');
  if (!ctx.config.external.magicLinkEnabled) throw unprocessable('email_provider_disabled', 'Login with magic link is disabled');
  const rawEmail = stringField(body, 'email');
  if (!rawEmail) throw unprocessable('validation_failed', 'Password recovery requires an email');
  const email = normaliseEmail(rawEmail);
  const pkce = readPkceParams(body);
  const aud = requestAudience(req, ctx);
  let user = await findUserByEmail(ctx.db, email, aud);
  if (!user?.email_confirmed_at) {
    await signUpWithoutPassword(req, ctx, { provider: 'email', address: email, data: objectField(body, 'data'), pkce });
    // With autoconfirm the sign-up confirmed the address and sent nothing: send a real magic link now.
    if (!ctx.config.mailer.autoconfirm) return;
    user = await findUserByEmail(ctx.db, email, aud);
    if (!user) return;
  }
  await sendLinkMail(ctx, user.id, { kind: 'magicLink', redirectTo: redirectTarget(req, ctx), pkce }, req.signal);
}

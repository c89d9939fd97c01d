// Sending a one-time token to a user: issue it, count the send against the global limit, build the link,
// and hand the mail or SMS to the mailer or gateway. Callers run this inside their transaction, so a
// failed send rolls back the token and anything else the request wrote.
import { ApiError } from './errors.js';
import { buildConfirmationUrl, linkPathFor, type LinkKind, type MailKind } from './mailer.js';
import { renderSmsTemplate, SmsChannelError, SmsSendError, type SmsChannel } from './sms/index.js';
import { issueOneTimeToken } from './one-time-tokens.js';
import { takeEmailSend, takeSmsSend } from './send-limits.js';
import type { OneTimeTokenType } from '../db/one-time-tokens.js';
import type { Queryable } from '../db/pool.js';
import type { UserRow } from '../db/users.js';
import type { AppContext } from './app.js';

export interface EmailTokenRequest {
  kind: MailKind;
  tokenType: OneTimeTokenType;
  /** the address the mail goes to (the new address for an email change) */
  to: string;
  redirectTo: string;
  pkce?: boolean;
  newEmail?: string;
}

export async function sendEmailToken(ctx: AppContext, q: Queryable, user: UserRow, r: EmailTokenRequest): Promise<{ otp: string; linkToken: string }> {
  await takeEmailSend(ctx);
  const issued = await issueOneTimeToken(q, { userId: user.id, type: r.tokenType, address: r.to, length: ctx.config.mailer.otpLength, pkce: r.pkce });
  const linkKind = r.kind === 'reauthentication' ? null : r.kind as LinkKind;
  const confirmationUrl = linkKind ? buildConfirmationUrl({
    externalUrl: ctx.config.api.externalUrl, path: linkPathFor(ctx.config.mailer.urlPaths, linkKind),
    tokenHash: issued.linkToken, type: linkKind, redirectTo: r.redirectTo,
  }) : '';
  try {
    await ctx.mailer.send(r.kind, r.to, {
      SiteURL: ctx.config.siteUrl, Email: user.email ?? r.to, ConfirmationURL: confirmationUrl, Token: issued.otp,
      TokenHash: issued.linkToken, RedirectTo: r.redirectTo, Data: user.raw_user_meta_data, NewEmail: r.newEmail, SendingTo: r.to,
    });
  } catch (err) {
    ctx.log.error({ err, kind: r.kind }, 'sending mail failed');
    throw new ApiError(500, 'unexpected_failure', `Error sending ${describe(r.kind)} email`);
  }
  return issued;
}

export interface SmsTokenRequest { tokenType: OneTimeTokenType; to: string; channel: SmsChannel; purpose: 'confirmation' | 'phone_change' | 'reauthentication' }

/** Sends an SMS code; resolves the gateway's message id ('test-otp' for SMS_TEST_OTP numbers). */
export async function sendSmsToken(ctx: AppContext, q: Queryable, user: UserRow, r: SmsTokenRequest): Promise<{ messageId: string }> {
  const testOtp = ctx.config.sms.testOtp[r.to];
  if (testOtp) {
    await issueOneTimeToken(q, { userId: user.id, type: r.tokenType, address: r.to, length: ctx.config.sms.otpLength, otp: testOtp });
    return { messageId: 'test-otp' };
  }
  if (!ctx.sms) throw new ApiError(400, 'phone_provider_disabled', 'Unsupported phone provider');
  await takeSmsSend(ctx);
  const { otp } = await issueOneTimeToken(q, { userId: user.id, type: r.tokenType, address: r.to, length: ctx.config.sms.otpLength });
  try {
    return await ctx.sms.send(r.to, renderSmsTemplate(ctx.config.sms.template, otp), r.channel, otp);
  } catch (err) {
    if (err instanceof SmsChannelError) throw new ApiError(400, 'validation_failed', err.message);
    if (err instanceof SmsSendError) throw new ApiError(422, 'sms_send_failed', `Error sending ${r.purpose} OTP to provider: ${err.message}`);
    throw err;
  }
}

function describe(kind: MailKind): string {
  return { invite: 'invite', confirmation: 'confirmation', recovery: 'recovery', magicLink: 'magic link', emailChange: 'email change', reauthentication: 'reauthentication' }[kind];
}

// Sending a one-time token to a user: issue it, count the send against the global limit, build the link,
// and hand the mail or SMS to the mailer or gateway. Callers run this inside their sendingTx, so a failed
// send rolls back the token and anything else the request wrote. The send is bounded by SEND_TIMEOUT, so
// the transaction is never held open across network I/O for longer (docs/architecture.md#mail-and-sms-inside-the-transaction).
import { apiError } from '../errors.js';
import { buildConfirmationUrl, linkPathFor, MailAddressRefused, type MailKind } from './mail/mailer.js';
import { mailLinkBase } from './mail/link-base.js';
import { renderSmsTemplate, SmsChannelError, SmsGatewayUnknownError, SmsSendError, type SmsChannel } from './sms/index.js';
import { issueOneTimeToken, linkKeyFor, type IssuedToken } from '../verify/one-time-codes.js';
import { requireCheckedRecipients, requirePermits, spendPermit } from './sending-tx.js';
import { assertAuthorizedRecipients } from './authorized-addresses.js';
import type { OneTimeTokenType } from '../../db/one-time-tokens.js';
import type { Queryable } from '../../db/pool.js';
import type { UserRow } from '../../db/users.js';
import type { AppContext } from '../context.js';
import type { SmsGatewayName } from '../config/types.js';
import { testOtpFor } from './sms/test-otp.js';
import type { HookRequest } from '../hooks/invoke.js';
import { emailData, sendEmailHook } from '../hooks/send-email.js';
import { sendSmsHook } from '../hooks/send-sms.js';
import { goQuoted } from '../go-quoted.js';

export interface EmailTokenRequest {
  kind: MailKind;
  tokenType: OneTimeTokenType;
  /** the address the mail goes to (the new address for an email change) */
  to: string;
  redirectTo: string;
  pkce?: boolean;
  newEmail?: string;
  /**
   * false for the second mail of one action (a secure email change's mail to the current address): the
   * original counts RATE_LIMIT_EMAIL_SENT once per action, however many mails it sends.
   */
  counted?: false;
}

/** Issues the token a mail will carry, its send counted against the global limit (unless `counted` is false). */
export async function issueEmailToken(ctx: AppContext, q: Queryable, user: UserRow, r: EmailTokenRequest): Promise<IssuedToken> {
  assertAuthorizedRecipients(ctx, [r.to]);
  if (r.counted !== false) spendPermit(ctx, q, 'email');
  return issueOneTimeToken(q, {
    userId: user.id,
    type: r.tokenType,
    address: r.to,
    length: ctx.config.mailer.otpLength,
    pkce: r.pkce,
    linkKey: linkKeyFor(ctx.config.jwt),
  });
}

/**
 * With the send email hook on, the hook gets the token instead of the SMTP server (docs/hooks.md#send-email);
 * its errors are the request's, as the original.
 */
export async function sendEmailToken(
  ctx: AppContext,
  q: Queryable,
  user: UserRow,
  r: EmailTokenRequest,
  req: HookRequest,
): Promise<{ otp: string; linkToken: string }> {
  const hooked = ctx.config.hooks.sendEmail.enabled;
  // The hook, when on, gets the mail unchecked, as in the original (docs/one-time-codes-and-mail.md#address-validation).
  if (!hooked) requireCheckedRecipients(ctx, q, [r.to]);
  const issued = await issueEmailToken(ctx, q, user, r);
  if (hooked) {
    const data = emailData(ctx, req, r.kind, { token: issued.otp, token_hash: issued.linkToken, redirect_to: r.redirectTo });
    await sendEmailHook(ctx, user, data, req, q);
    return issued;
  }
  const linkKind = r.kind === 'reauthentication' ? null : r.kind;
  const confirmationUrl = linkKind
    ? buildConfirmationUrl({
        externalUrl: mailLinkBase(ctx.config, req),
        path: linkPathFor(ctx.config.mailer.urlPaths, linkKind),
        tokenHash: issued.linkToken,
        type: linkKind,
        redirectTo: r.redirectTo,
      })
    : '';
  try {
    await bounded(
      ctx,
      ctx.mailer.send(r.kind, r.to, {
        SiteURL: ctx.config.siteUrl,
        // The user's own address, as the original fills it: empty for a user adding a first email (the
        // change's new address is NewEmail).
        Email: user.email ?? '',
        ConfirmationURL: confirmationUrl,
        Token: issued.otp,
        TokenHash: issued.linkToken,
        RedirectTo: r.redirectTo,
        Data: user.raw_user_meta_data,
        NewEmail: r.newEmail,
        SendingTo: r.to,
      }),
      () => new SendTimeoutError('no answer from the mail server within SEND_TIMEOUT'),
    );
    ctx.metrics.sent('email', 'sent', ACTION_TYPE[r.kind]);
  } catch (err) {
    ctx.metrics.sent('email', err instanceof SendTimeoutError ? 'timeout' : 'failed', ACTION_TYPE[r.kind]);
    if (err instanceof MailAddressRefused) {
      // The client's own input, so a 400 (a blocked MX included: the original answers that one 500).
      ctx.log.info({ kind: r.kind, fault: err.fault }, 'the address check refused the recipient');
      throw addressInvalid(err.address);
    }
    ctx.log.error({ err, kind: r.kind }, 'sending mail failed');
    throw apiError('email_send_failed', `Error sending ${describe(r.kind)} email`);
  }
  return issued;
}

/** The refusal of a recipient MAILER_EMAIL_VALIDATION_* refused: the client's own input, so a 400. */
export const addressInvalid = (address: string) => apiError('email_address_invalid', `Email address ${goQuoted(address)} is invalid`);

/**
 * Makes the transaction's first attempt already cover the permit of an SMS code to `to`, for a request that
 * sends something else first (an email change's mails): sendingTx otherwise finds the need at the send, rolls
 * back and runs everything again, the mails included. The same conditions as sendSmsToken's, so no permit is
 * taken for a send that will not count (a test number, a missing gateway).
 */
export function prepareSmsSend(ctx: AppContext, q: Queryable, to: string): void {
  if (smsSendCounts(ctx, to)) requirePermits(ctx, q, 'sms', 1);
}

/** Whether an SMS code to `to` is sent and counted: not to an SMS_TEST_OTP number, nor with no gateway or hook. */
export const smsSendCounts = (ctx: AppContext, to: string): boolean =>
  !testOtpFor(ctx.config.sms, to) && (!!ctx.sms || ctx.config.hooks.sendSms.enabled);

export interface SmsTokenRequest {
  tokenType: OneTimeTokenType;
  to: string;
  channel: SmsChannel;
  purpose: 'confirmation' | 'phone_change' | 'reauthentication';
}

/** Sends an SMS code; resolves the gateway's message id ('test-otp' for SMS_TEST_OTP numbers). */
export async function sendSmsToken(
  ctx: AppContext,
  q: Queryable,
  user: UserRow,
  r: SmsTokenRequest,
  req: HookRequest,
): Promise<{ messageId: string }> {
  const testOtp = testOtpFor(ctx.config.sms, r.to);
  if (testOtp) {
    await issueOneTimeToken(q, {
      userId: user.id,
      type: r.tokenType,
      address: r.to,
      length: ctx.config.sms.otpLength,
      otp: testOtp,
      linkKey: linkKeyFor(ctx.config.jwt),
    });
    return { messageId: 'test-otp' };
  }
  // docs/hooks.md#send-sms: the hook replaces the gateway, so none need be configured.
  const hooked = ctx.config.hooks.sendSms.enabled;
  if (!ctx.sms && !hooked) throw apiError('phone_provider_unsupported');
  spendPermit(ctx, q, 'sms');
  const { otp } = await issueOneTimeToken(q, {
    userId: user.id,
    type: r.tokenType,
    address: r.to,
    length: ctx.config.sms.otpLength,
    linkKey: linkKeyFor(ctx.config.jwt),
  });
  if (hooked || !ctx.sms) {
    await sendSmsHook(ctx, user, { otp, phone: r.to }, req, q);
    return { messageId: '' };
  }
  try {
    const gateway = ctx.sms.gateway;
    let timedOut = false;
    const sent = await bounded(ctx, ctx.sms.send(r.to, renderSmsTemplate(ctx.config.sms.template, otp), r.channel, otp), () => {
      timedOut = true;
      return new SmsSendError(
        gateway as SmsGatewayName,
        `${gateway} request failed: no answer within ${ctx.config.api.sendTimeoutSeconds} s`,
      );
    }).catch((err: unknown) => {
      ctx.metrics.sent('sms', timedOut ? 'timeout' : 'failed');
      throw err;
    });
    ctx.metrics.sent('sms', 'sent');
    return sent;
  } catch (err) {
    if (err instanceof SmsChannelError) throw apiError('sms_channel_invalid');
    if (err instanceof SmsSendError) throw apiError('sms_send_failed', `Error sending ${r.purpose} OTP to provider: ${err.message}`);
    if (err instanceof SmsGatewayUnknownError) throw apiError('sms_gateway_unknown').causedBy(err);
    throw err;
  }
}

/**
 * The send, or `timeout()` once SEND_TIMEOUT has passed: the caller's transaction then rolls back and the
 * request answers the send's error. A send that still completes later carries a token that was never
 * committed, so its link or code does nothing.
 */
export function bounded<T>(ctx: AppContext, send: Promise<T>, timeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timeout()), ctx.config.api.sendTimeoutSeconds * 1000);
  });
  send.catch(() => undefined); // its own failure after the timeout has nobody left to tell
  return Promise.race([send, expired]).finally(() => clearTimeout(timer));
}

class SendTimeoutError extends Error {}

/** The original's name for each mail, the `type` of its mail counters (observability/metrics.ts). */
const ACTION_TYPE: Record<MailKind, string> = {
  invite: 'invite',
  confirmation: 'signup',
  recovery: 'recovery',
  magicLink: 'magiclink',
  emailChange: 'email_change',
  reauthentication: 'reauthentication',
};

function describe(kind: MailKind): string {
  return {
    invite: 'invite',
    confirmation: 'confirmation',
    recovery: 'recovery',
    magicLink: 'magic link',
    emailChange: 'email change',
    reauthentication: 'reauthentication',
  }[kind];
}

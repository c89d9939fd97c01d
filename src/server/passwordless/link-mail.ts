// The mails that carry the user's recovery token: the magic link and the password recovery mail
// (docs/one-time-codes-and-mail.md#send-intervals). Both share recovery_token and recovery_sent_at, so one interval covers both.
import { sendingTx } from '../delivery/sending-tx.js';
import { lockLiveUserById, updateUser } from '../../db/users.js';
import { insertFlowState } from '../../db/flow-state.js';
import { writeAudit } from '../../db/audit-log.js';
import { addressInvalid, sendEmailToken } from '../delivery/send-token.js';
import { assertAuthorizedRecipients } from '../delivery/authorized-addresses.js';
import { assertSendInterval, takeSendPermit } from '../limits/sends.js';
import { keyedOtpHash, newOtp } from '../crypto/tokens.js';
import { linkKeyFor } from '../verify/one-time-codes.js';
import { actorOf } from '../users/actor.js';
import { assertNoRecentPretendedSend, rememberPretendedSend, type PretendedSend } from '../limits/pretended-sends.js';
import type { PkceParams } from '../verify/pkce-challenge.js';
import type { Config } from '../config/types.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import type { SendTimingKey } from '../delivery/send-timing.js';
import { nowTimestamp } from '../micro-clock.js';

export interface LinkMail {
  kind: 'magicLink' | 'recovery';
  redirectTo: string;
  pkce: PkceParams | null;
}

/** The flow_state authentication_method of each mail, which GET /verify and the pkce grant read back. */
export const FLOW_METHOD = { magicLink: 'magiclink', recovery: 'recovery' } as const;

/**
 * Seconds between two recovery-token mails to one user: SMTP_MAX_FREQUENCY, as the original checks for
 * both (docs/one-time-codes-and-mail.md#send-intervals). An operator who sets it below 60 s gets that, as
 * with the original; the default (900 s) keeps the spec's "at least 60 s" (test/magiclink.test.ts).
 */
export const linkMailInterval = (config: Config) => config.smtp.maxFrequencySeconds;

/**
 * Sends the mail in one transaction: a failed send leaves no token, flow or timestamp behind. False, with
 * nothing written or sent, when the user was deleted (or soft-deleted, its address obfuscated) by a
 * concurrent request since the caller found it: the caller answers as for an unknown address
 * (/recover: pretendLinkMail, once this transaction has ended and its connection gone back to the pool).
 * With `timing`, a mail that went records its duration; one not sent waits nothing here, the caller's
 * pretended send waiting it out as an unknown address's does.
 */
export async function sendLinkMail(
  ctx: AppContext,
  req: ApiRequest,
  userId: string,
  mail: LinkMail,
  timing?: SendTimingKey,
): Promise<boolean> {
  const sent = await sendingTx(ctx, req.signal, async (c) => {
    const user = await lockLiveUserById(c, userId);
    if (!user) return false;
    assertSendInterval('email', user.recovery_sent_at, linkMailInterval(ctx.config));
    if (mail.pkce) {
      await insertFlowState(c, {
        userId: user.id,
        codeChallenge: mail.pkce.codeChallenge,
        method: mail.pkce.method,
        authenticationMethod: FLOW_METHOD[mail.kind],
      });
    }
    await writeAudit(c, req, actorOf(user), 'user_recovery_requested');
    await sendEmailToken(
      ctx,
      c,
      user,
      {
        kind: mail.kind,
        tokenType: 'recovery_token',
        to: user.email!,
        redirectTo: mail.redirectTo,
        pkce: !!mail.pkce,
      },
      req,
    );
    await updateUser(c, user.id, { recovery_sent_at: nowTimestamp() });
    return true;
  });
  // Recorded once committed, as sendingTx records a send's timing (the mail above always spends a permit).
  if (sent && timing) ctx.sendTiming.sent(timing);
  return sent;
}

/**
 * What /recover does for an address with no account, so the answer does not reveal which addresses
 * exist (docs/architecture.md#same-work-and-same-answer-for-unknown-accounts): the same lookup has already been made, and here the same global send slot is
 * taken (an exhausted RATE_LIMIT_EMAIL_SENT answers 429 for known and unknown addresses alike) and the
 * same code and hash are computed; an address no mail may go to gets the same 400 as a known one. The
 * SMTP exchange is skipped, and its usual duration waited out instead.
 * The send is remembered, so a repeat within SMTP_MAX_FREQUENCY gets the known address's 429
 * (limits/pretended-sends.ts). Each step runs on the pool: no connection is held while another is waited for.
 */
export async function pretendLinkMail(ctx: AppContext, address: string, timing: SendTimingKey, signal?: AbortSignal): Promise<void> {
  const send: PretendedSend = { kind: 'recovery', channel: 'email', address };
  // Refused, as a known address is, before the permit is spent: a refusal leaves everything as it was.
  await assertNoRecentPretendedSend(ctx, ctx.db, send);
  // An address no mail may go to is refused as a known one's mail is (delivery/send-token.ts), in the same
  // order and after the same address check, or the unknown address's 200 would tell it from a known one's 400.
  const fault = ctx.config.hooks.sendEmail.enabled ? null : await ctx.mailer.checkAddress(address);
  assertAuthorizedRecipients(ctx, [address]);
  await takeSendPermit(ctx, ctx.db, 'email');
  // A known address's refused mail has spent its permit by then, and its request wrote nothing.
  if (fault) throw addressInvalid(address);
  keyedOtpHash(linkKeyFor(ctx.config.jwt), address, newOtp(ctx.config.mailer.otpLength));
  await ctx.sendTiming.nothingSent(timing, signal);
  // Recorded when the send would have ended, as a known address's recovery_sent_at is, so the seconds a
  // repeat is told match. Of concurrent requests for the address, the first to get here is served and the
  // others are refused, permit spent, as concurrent requests for one user are after waiting on its row.
  await rememberPretendedSend(ctx, ctx.db, send);
}

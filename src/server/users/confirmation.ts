// Sending a confirmation (docs/one-time-codes-and-mail.md#which-mail-each-request-sends): the mail or SMS with the confirmation token, the
// optional PKCE flow it belongs to, the per-user interval, and confirmation_sent_at. Sign-up, /resend
// and the phone /otp all send it the same way.
import { insertFlowState } from '../../db/flow-state.js';
import { markConfirmationSent, type UserRow } from '../../db/users.js';
import type { Queryable } from '../../db/pool.js';
import { sendEmailToken, sendSmsToken } from '../delivery/send-token.js';
import { assertSendInterval } from '../limits/sends.js';
import type { PkceParams } from '../verify/pkce-challenge.js';
import type { SmsChannel } from '../delivery/sms/index.js';
import type { AddressProvider } from './create.js';
import type { AppContext } from '../context.js';
import type { HookRequest } from '../hooks/invoke.js';

/** The flow_state authentication_method of email sign-ups (docs/tokens-and-sessions.md#pkce-flow-state). */
export const SIGNUP_FLOW_METHOD = 'email/signup';

export interface ConfirmationSend {
  provider: AddressProvider;
  address: string;
  channel: SmsChannel;
  redirectTo: string;
  pkce: PkceParams | null;
  /** false for a user created by this very request, who cannot have been sent anything yet */
  checkInterval: boolean;
  /** the PKCE flow's provider_type: `email` for a sign-up's mail (the original's), `email/signup` for /resend's */
  flowProviderType?: string;
  /** the request, for a send hook's metadata and deadline, and the base of the mail's link */
  req: HookRequest;
}

export async function sendConfirmation(
  ctx: AppContext,
  c: Queryable,
  user: UserRow,
  s: ConfirmationSend,
): Promise<{ user: UserRow; messageId?: string }> {
  let messageId: string | undefined;
  if (s.provider === 'email') {
    if (s.checkInterval) assertSendInterval('email', user.confirmation_sent_at, ctx.config.smtp.maxFrequencySeconds);
    if (s.pkce) {
      await insertFlowState(c, {
        userId: user.id,
        codeChallenge: s.pkce.codeChallenge,
        method: s.pkce.method,
        authenticationMethod: SIGNUP_FLOW_METHOD,
        providerType: s.flowProviderType ?? 'email',
      });
    }
    await sendEmailToken(
      ctx,
      c,
      user,
      {
        kind: 'confirmation',
        tokenType: 'confirmation_token',
        to: s.address,
        redirectTo: s.redirectTo,
        pkce: !!s.pkce,
      },
      s.req,
    );
  } else {
    if (s.checkInterval) assertSendInterval('sms', user.confirmation_sent_at, ctx.config.sms.maxFrequencySeconds);
    ({ messageId } = await sendSmsToken(
      ctx,
      c,
      user,
      {
        tokenType: 'confirmation_token',
        to: s.address,
        channel: s.channel,
        purpose: 'confirmation',
      },
      s.req,
    ));
  }
  return { user: await markConfirmationSent(c, user.id), messageId };
}

// A send the request only pretends to make — a sign-up of a confirmed address, a resend to an unknown or
// confirmed one — must refuse where the real send would, or the refusal tells which addresses have
// accounts (docs/architecture.md#same-work-and-same-answer-for-unknown-accounts). So it makes every check
// sendEmailToken / sendSmsToken make before the SMTP exchange or the gateway call, in their order, and
// spends the global send permit; only the exchange itself is skipped. Runs inside the request's sendingTx.
import { assertAuthorizedRecipients } from './authorized-addresses.js';
import { requireCheckedRecipients, spendPermitOnPretendedSend } from './sending-tx.js';
import { addressInvalid, smsSendCounts } from './send-token.js';
import type { Channel } from '../limits/sends.js';
import type { Queryable } from '../../db/pool.js';
import type { AppContext } from '../context.js';

export async function checkPretendedSend(ctx: AppContext, q: Queryable, channel: Channel, to: string): Promise<void> {
  if (channel === 'sms') {
    // A send that would not count (a test number; no gateway or hook) takes no permit, as for a real code.
    if (smsSendCounts(ctx, to)) spendPermitOnPretendedSend(ctx, q, 'sms');
    return;
  }
  // The send email hook, when on, gets mail unchecked, as the real send's does.
  const hooked = ctx.config.hooks.sendEmail.enabled;
  if (!hooked) requireCheckedRecipients(ctx, q, [to]);
  assertAuthorizedRecipients(ctx, [to]);
  spendPermitOnPretendedSend(ctx, q, 'email');
  // The verdict is remembered by now (requireCheckedRecipients made sure): no network wait in the transaction.
  // A refused address fails at the send, after its permit, as a known address's mail does.
  if (!hooked && (await ctx.mailer.checkAddress(to))) throw addressInvalid(to);
}

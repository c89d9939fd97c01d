// GET /reauthenticate (docs/api.md#get-reauthenticate): sends a one-time nonce to the user's email (preferred) or phone,
// within that channel's per-user frequency limit; PUT /user spends it as `nonce`.
import { redirectTarget } from '../http/redirect-target.js';
import { apiError } from '../errors.js';
import { sendingTx } from '../delivery/sending-tx.js';
import { lockLiveUserById, updateUser, type UserRow } from '../../db/users.js';
import { assertSessionStillLive } from '../auth/session-still-live.js';
import { writeAudit } from '../../db/audit-log.js';
import type { Authenticated } from '../auth/bearer.js';
import { sendEmailToken, sendSmsToken } from '../delivery/send-token.js';
import { assertSendInterval } from '../limits/sends.js';
import { reauthenticationChannel } from '../users/reauthentication.js';
import { actorOf } from '../users/actor.js';
import type { GuardedHandler } from '../http/types.js';
import { nowTimestamp } from '../micro-clock.js';

export const reauthenticate: GuardedHandler<Authenticated> = async (req, ctx, { user, session }) => {
  nonceTarget(user);
  const body = await sendingTx(ctx, req.signal, async (c) => {
    // Locked so that two concurrent requests cannot both pass the frequency check.
    const locked = await lockLiveUserById(c, user.id);
    // Deleted, or soft-deleted, by a concurrent request since the bearer check: no nonce for a user who is gone.
    if (!locked) throw apiError('user_not_found');
    // Ended since the bearer check (another session's new password, a revocation): no nonce sent for it.
    await assertSessionStillLive(c, session?.id ?? null);
    // The address as locked: one changed since the bearer check read it gets the nonce PUT /user will check
    // against, and the address the user left gets none.
    const target = nonceTarget(locked);
    let answer: Record<string, string> = {};
    if (target.channel === 'email') {
      assertSendInterval('email', locked.reauthentication_sent_at, ctx.config.smtp.maxFrequencySeconds);
      await sendEmailToken(
        ctx,
        c,
        locked,
        {
          kind: 'reauthentication',
          tokenType: 'reauthentication_token',
          to: target.address,
          // The request's redirect_to or allowed Referer, else SITE_URL, as the original (its template's
          // RedirectTo, the send email hook's redirect_to).
          redirectTo: redirectTarget(req, ctx),
        },
        req,
      );
    } else {
      assertSendInterval('sms', locked.reauthentication_sent_at, ctx.config.sms.maxFrequencySeconds);
      const { messageId } = await sendSmsToken(
        ctx,
        c,
        locked,
        {
          tokenType: 'reauthentication_token',
          to: target.address,
          channel: 'sms',
          purpose: 'reauthentication',
        },
        req,
      );
      if (messageId) answer = { message_id: messageId };
    }
    await updateUser(c, user.id, { reauthentication_sent_at: nowTimestamp() });
    await writeAudit(c, req, actorOf(user), 'user_reauthenticate_requested');
    return answer;
  });
  return { body };
};

/** Where the user's nonce goes, or the refusal: the user needs a confirmed email, else a confirmed phone. */
function nonceTarget(user: UserRow): { channel: 'email' | 'sms'; address: string } {
  const target = reauthenticationChannel(user);
  if (!target) throw apiError('reauthentication_no_address');
  if (target.channel === 'email' && !user.email_confirmed_at) throw apiError('reauthentication_email_not_confirmed');
  if (target.channel === 'sms' && !user.phone_confirmed_at) throw apiError('reauthentication_phone_not_confirmed');
  return target;
}

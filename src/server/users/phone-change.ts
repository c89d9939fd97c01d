// Starting a phone change (docs/api.md#put-user): an SMS code to the new number, recorded as new_phone and
// phone_change_sent_at; POST /verify type=phone_change completes it (verify/address-change.ts).
import { updateUser, type UserRow } from '../../db/users.js';
import type { Queryable } from '../../db/pool.js';
import { sendSmsToken } from '../delivery/send-token.js';
import type { HookRequest } from '../hooks/invoke.js';
import { assertSendInterval } from '../limits/sends.js';
import type { AppContext } from '../context.js';
import { nowTimestamp } from '../micro-clock.js';

export async function sendPhoneChange(
  ctx: AppContext,
  q: Queryable,
  user: UserRow,
  phone: string,
  channel: 'sms' | 'whatsapp',
  /** the request, for the send-SMS hook's metadata (ip_address) and deadline */
  req: HookRequest,
): Promise<{ user: UserRow; messageId: string }> {
  assertSendInterval('sms', user.phone_change_sent_at, ctx.config.sms.maxFrequencySeconds);
  // The hook sees the pending number as new_phone, as the original sets it before sending.
  const pending = { ...user, phone_change: phone };
  const { messageId } = await sendSmsToken(
    ctx,
    q,
    pending,
    { tokenType: 'phone_change_token', to: phone, channel, purpose: 'phone_change' },
    req,
  );
  return { user: await updateUser(q, user.id, { phone_change: phone, phone_change_sent_at: nowTimestamp() }), messageId };
}

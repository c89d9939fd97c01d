// POST /resend (docs/api.md#post-resend transitions table): sends a pending signup, sms, email_change or
// phone_change code again, to the user holding the given address now. An unknown user (a pending new
// address included), a confirmed address or no pending change answers 200 {}
// without sending, the same as a send, so the endpoint reveals nothing about accounts. For signup and sms
// that pretended send is remembered, so a repeat within the interval is refused as a real one is
// (limits/pretended-sends.ts); a change's repeat is not (PRETENDED below).
import { apiError } from '../errors.js';
import type { Queryable } from '../../db/pool.js';
import { sendingTx } from '../delivery/sending-tx.js';
import { checkPretendedSend } from '../delivery/pretended-send.js';
import { findUserByEmail, findUserByPhone, lockUserById, type UserRow } from '../../db/users.js';
import { writeAudit } from '../../db/audit-log.js';
import { requestAudience } from '../auth/bearer.js';
import { lookupPhone, normaliseEmail } from '../users/addresses.js';
import { bodySchema, type BodyOf } from '../http/validate.js';
import { resendEmailChange } from '../users/email-change.js';
import { sendPhoneChange } from '../users/phone-change.js';
import { PKCE_FIELDS, readPkceParams, type PkceParams } from '../verify/pkce-challenge.js';
import { redirectTarget } from '../http/redirect-target.js';
import { sendConfirmation } from '../users/confirmation.js';
import { actorOf } from '../users/actor.js';
import { assertNoRecentPretendedSend, rememberPretendedSend, type PretendedSend } from '../limits/pretended-sends.js';
import type { AppContext } from '../context.js';
import type { ApiRequest, Handler } from '../http/types.js';

type ResendType = 'signup' | 'sms' | 'email_change' | 'phone_change';
const TYPES = new Set<string>(['signup', 'sms', 'email_change', 'phone_change']);
const isResendType = (type: string): type is ResendType => TYPES.has(type);

interface Resend {
  type: ResendType;
  address: string;
  byEmail: boolean;
  pkce: PkceParams | null;
  redirectTo: string;
}

const FIELDS = { type: 'string', email: 'string', phone: 'string', ...PKCE_FIELDS } as const;
export const resendBody = bodySchema(FIELDS);
type ResendBody = BodyOf<typeof FIELDS>;

export const resend: Handler<ResendBody> = async (req, ctx) => {
  const timing = { kind: `resend:${req.body().type ?? ''}`, startedAt: performance.now() };
  const r = readResend(req.body(), ctx, redirectTarget(req, ctx));
  const aud = requestAudience(req, ctx);
  const pretended = pretendedSendOf(r);
  const sent = await sendingTx(
    ctx,
    req.signal,
    async (c) => {
      // By the address the user holds now, as the original: a pending new address finds no one, so the
      // endpoint cannot be used to learn that someone is moving to it.
      const found = r.byEmail ? await findUserByEmail(c, r.address, aud) : await findUserByPhone(c, r.address, aud);
      // Locked so that concurrent resends pass the frequency check one at a time.
      const user = found && (await lockUserById(c, found.id));
      const answer = user && (await send(ctx, c, req, user, r));
      // Nothing to send (no one, or nothing pending): a repeat within the interval is refused here, as
      // quickly as a known address's repeat is.
      if (!answer && pretended) {
        await assertNoRecentPretendedSend(ctx, c, pretended);
        // Refused where a real send would be, and counted against the global send limit (delivery/pretended-send.ts).
        await checkPretendedSend(ctx, c, pretended.channel, pretended.address);
      }
      return answer;
    },
    timing,
  );
  // Remembered once the timing wait is over, when a real send's time is recorded, so the seconds a repeat
  // is told match a known address's; on the pool, as the transaction has ended.
  if (!sent && pretended) await rememberPretendedSend(ctx, ctx.db, pretended);
  return { body: sent ?? {} };
};

function readResend(body: ResendBody, ctx: AppContext, redirectTo: string): Resend {
  const type = body.type ?? '';
  const email = body.email ?? '';
  const phone = body.phone ?? '';
  if (!isResendType(type)) throw apiError('resend_type_invalid');
  // Read for the mail types only, right after the type, as the original: a phone type ignores them.
  const pkce = type === 'signup' || type === 'email_change' ? readPkceParams(body) : null;
  if (type === 'signup' && !email) throw apiError('resend_email_required');
  if (type === 'sms' && !phone) throw apiError('resend_phone_required');
  if (email && phone) throw apiError('resend_email_and_phone');
  if (!email && !phone) throw apiError('resend_no_address');
  if (email && !ctx.config.external.emailEnabled) throw apiError('email_logins_disabled');
  if (phone && !ctx.config.external.phoneEnabled) throw apiError('phone_logins_disabled');
  return { type, address: email ? normaliseEmail(email) : lookupPhone(phone), byEmail: !!email, pkce, redirectTo };
}

/**
 * What a send of this type would have been: the interval a user's pending send of it is checked against.
 * None for the changes: a repeat that finds nothing pending is served, as the original serves it. Their
 * interval would tell only that an account has a change pending, a passing state, and @supabase/auth-js's
 * own tests resend a phone change twice at once for a number nobody holds, expecting 200 both times.
 */
const PRETENDED: Record<ResendType, Omit<PretendedSend, 'address'> | null> = {
  signup: { kind: 'confirmation', channel: 'email' },
  sms: { kind: 'confirmation', channel: 'sms' },
  email_change: null,
  phone_change: null,
};
function pretendedSendOf(r: Resend): PretendedSend | null {
  const send = PRETENDED[r.type];
  return send && { ...send, address: r.address };
}

/** Sends the pending code; null when there is nothing pending to send. */
async function send(ctx: AppContext, c: Queryable, req: ApiRequest, user: UserRow, r: Resend): Promise<Record<string, string> | null> {
  switch (r.type) {
    case 'signup': {
      if (user.email_confirmed_at) return null;
      await sendConfirmation(ctx, c, user, {
        provider: 'email',
        address: r.address,
        channel: 'sms',
        redirectTo: r.redirectTo,
        pkce: r.pkce,
        checkInterval: true,
        flowProviderType: 'email/signup',
        req,
      });
      await writeAudit(c, req, actorOf(user), 'user_confirmation_requested');
      return {};
    }
    case 'sms': {
      if (user.phone_confirmed_at) return null;
      // The original audits a resent phone code as a recovery request.
      await writeAudit(c, req, actorOf(user), 'user_recovery_requested');
      const { messageId } = await sendConfirmation(ctx, c, user, {
        provider: 'phone',
        address: r.address,
        channel: 'sms',
        redirectTo: r.redirectTo,
        pkce: null,
        checkInterval: true,
        req,
      });
      return messageId ? { message_id: messageId } : {};
    }
    case 'email_change': {
      if (!user.email_change) return null;
      await resendEmailChange(ctx, c, user, r.redirectTo, r.pkce, req);
      return {};
    }
    case 'phone_change': {
      if (!user.phone_change) return null;
      const { messageId } = await sendPhoneChange(ctx, c, user, user.phone_change, 'sms', req);
      return messageId ? { message_id: messageId } : {};
    }
  }
}

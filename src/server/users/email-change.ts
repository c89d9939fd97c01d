// Starting an email change (docs/one-time-codes-and-mail.md#email-change): with secure email change (default on), one link/code to the
// new address and one to the current address, both with the email_change template; otherwise only the
// new address. With a code_challenge the links are PKCE links and a flow_state row waits for the exchange.
import { updateUser, type UserRow } from '../../db/users.js';
import { insertFlowState } from '../../db/flow-state.js';
import type { Queryable } from '../../db/pool.js';
import { issueEmailToken, sendEmailToken } from '../delivery/send-token.js';
import { assertAuthorizedRecipients } from '../delivery/authorized-addresses.js';
import { emailData, sendEmailHook } from '../hooks/send-email.js';
import type { HookRequest } from '../hooks/invoke.js';
import { assertSendInterval } from '../limits/sends.js';
import { requireCheckedRecipients, requirePermits } from '../delivery/sending-tx.js';
import type { PkceParams } from '../verify/pkce-challenge.js';
import type { AppContext } from '../context.js';
import { nowTimestamp } from '../micro-clock.js';

export interface EmailChangeRequest {
  newEmail: string;
  redirectTo: string;
  pkce: PkceParams | null;
  /** the request, for the send email hook's metadata and deadline, and the base of the mails' links */
  req: HookRequest;
}

/**
 * The current address is written to only when the user has one. MAILER_AUTOCONFIRM does not stop that mail,
 * as in the original; it only lets either link complete the change alone (verify/address-change.ts).
 */
export const isSecureChange = (ctx: AppContext, user: UserRow) => ctx.config.mailer.secureEmailChangeEnabled && !!user.email;

export async function sendEmailChange(ctx: AppContext, q: Queryable, user: UserRow, r: EmailChangeRequest): Promise<UserRow> {
  assertSendInterval('email', user.email_change_sent_at, ctx.config.smtp.maxFrequencySeconds);
  // Both addresses before either mail goes: the new one, and the current one a secure change also writes to.
  const recipients = isSecureChange(ctx, user) ? [r.newEmail, user.email!] : [r.newEmail];
  assertAuthorizedRecipients(ctx, recipients);
  if (r.pkce) {
    await insertFlowState(q, {
      userId: user.id,
      codeChallenge: r.pkce.codeChallenge,
      method: r.pkce.method,
      authenticationMethod: 'email_change',
    });
  }
  // One permit for the change, its two mails included, as the original counts one per email action.
  requirePermits(ctx, q, 'email', 1);
  const common = { kind: 'emailChange' as const, redirectTo: r.redirectTo, pkce: !!r.pkce, newEmail: r.newEmail };
  if (ctx.config.hooks.sendEmail.enabled) {
    await emailChangeHook(ctx, q, user, common, r);
  } else {
    requireCheckedRecipients(ctx, q, recipients);
    await sendEmailToken(ctx, q, user, { ...common, tokenType: 'email_change_token_new', to: r.newEmail }, r.req);
    if (isSecureChange(ctx, user)) {
      const current = { ...common, tokenType: 'email_change_token_current' as const, to: user.email!, counted: false as const };
      await sendEmailToken(ctx, q, user, current, r.req);
    }
  }
  return updateUser(q, user.id, { email_change: r.newEmail, email_change_sent_at: nowTimestamp(), email_change_confirm_status: 0 });
}

/** Resends the pending change's mails (POST /resend type=email_change), fresh tokens, same addresses. */
export async function resendEmailChange(
  ctx: AppContext,
  q: Queryable,
  user: UserRow,
  redirectTo: string,
  pkce: PkceParams | null,
  req: HookRequest,
): Promise<UserRow> {
  return sendEmailChange(ctx, q, user, { newEmail: user.email_change!, redirectTo, pkce, req });
}

/**
 * One send email hook call for the whole change, as the original: with a secure change, token and
 * token_hash_new belong to the current address, token_new and token_hash to the new one (the original's
 * crossed pairing, kept because hooks written for it rely on it: docs/hooks.md#send-email); otherwise
 * token and token_hash belong to the new address.
 */
async function emailChangeHook(
  ctx: AppContext,
  q: Queryable,
  user: UserRow,
  common: { kind: 'emailChange'; redirectTo: string; pkce: boolean; newEmail: string },
  r: EmailChangeRequest,
): Promise<void> {
  // The hook sees the pending address as new_email, one mail or two, as the original sets it before sending.
  const pending = { ...user, email_change: r.newEmail };
  const toNew = await issueEmailToken(ctx, q, user, { ...common, tokenType: 'email_change_token_new', to: r.newEmail });
  if (!isSecureChange(ctx, user)) {
    const data = emailData(ctx, r.req, 'emailChange', { token: toNew.otp, token_hash: toNew.linkToken, redirect_to: r.redirectTo });
    return sendEmailHook(ctx, pending, data, r.req, q);
  }
  const toCurrent = await issueEmailToken(ctx, q, user, {
    ...common,
    tokenType: 'email_change_token_current',
    to: user.email!,
    counted: false,
  });
  const data = emailData(ctx, r.req, 'emailChange', {
    token: toCurrent.otp,
    token_hash: toNew.linkToken,
    token_new: toNew.otp,
    token_hash_new: toCurrent.linkToken,
    redirect_to: r.redirectTo,
  });
  return sendEmailHook(ctx, pending, data, r.req, q);
}

// The /verify effects of an email or phone change (docs/one-time-codes-and-mail.md#email-change). A secure
// email change needs both links (either one under MAILER_AUTOCONFIRM): the first one spends its own token,
// marks the change half-confirmed and answers a message instead of a session; the second (or the only one)
// makes the new address the user's.
import { apiError } from '../errors.js';
import { deleteOneTimeTokens, type OneTimeTokenType } from '../../db/one-time-tokens.js';
import { updateUser, type UserRow } from '../../db/users.js';
import type { Queryable } from '../../db/pool.js';
import { adoptAddress } from '../users/change-address.js';
import { isSecureChange } from '../users/email-change.js';
import { addressChangeNotices } from '../delivery/notifications.js';
import type { AppContext } from '../context.js';
import type { Notification } from '../delivery/notifications.js';

/** The shape of Apply (types.ts), written out so that this module does not import its user. */
type Apply = (
  ctx: AppContext,
  q: Queryable,
  user: UserRow,
  tokenType: OneTimeTokenType,
) => Promise<{ user: UserRow; message?: string; notifications?: Notification[] }>;

export const SECURE_CHANGE_FIRST_HALF = 'Confirmation link accepted. Please proceed to confirm link sent to the other email';

const OTHER_HALF: Partial<Record<OneTimeTokenType, OneTimeTokenType>> = {
  email_change_token_new: 'email_change_token_current',
  email_change_token_current: 'email_change_token_new',
};

export const applyEmailChange: Apply = async (ctx, q, user, tokenType) => {
  // A token without a pending change (cancelled meanwhile) proves nothing.
  if (!user.email_change) throw apiError('link_expired');
  // The first half of a secure change is told by the change's own state, as the original tells it, never by
  // whether the other half's token still exists: that token can be gone for other reasons (spent by wrong
  // codes, SECURITY_OTP_MAX_ATTEMPTS), and one link must never complete a change that needs two.
  // Under MAILER_AUTOCONFIRM both halves are mailed but either one completes the change, as in the original.
  const firstHalf = isSecureChange(ctx, user) && !ctx.config.mailer.autoconfirm && user.email_change_confirm_status === 0;
  if (firstHalf && OTHER_HALF[tokenType]) {
    await deleteOneTimeTokens(q, user.id, [tokenType]);
    return { user: await updateUser(q, user.id, { email_change_confirm_status: 1 }), message: SECURE_CHANGE_FIRST_HALF };
  }
  const adopted = await adoptAddress(q, user, 'email', user.email_change, { listProvider: true });
  // To the old address: its owner learns that the account moved away from it.
  return { user: adopted.user, notifications: addressChangeNotices(ctx, user, adopted.user, 'email', false) };
};

export const applyPhoneChange: Apply = async (ctx, q, user) => {
  if (!user.phone_change) throw apiError('otp_expired');
  const adopted = await adoptAddress(q, user, 'phone', user.phone_change, { listProvider: true });
  return { user: adopted.user, notifications: addressChangeNotices(ctx, user, adopted.user, 'phone', adopted.identityCreated) };
};

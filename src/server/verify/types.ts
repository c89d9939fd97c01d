// What each /verify type consumes and does (docs/one-time-codes-and-mail.md#verifying-a-code-or-link). One entry per type; the verify routes look
// the type up here, so a new flow adds an entry, not a branch.
import type { OneTimeTokenType } from '../../db/one-time-tokens.js';
import type { Queryable } from '../../db/pool.js';
import type { UserRow } from '../../db/users.js';
import { confirmAddress } from '../users/create.js';
import type { AppContext } from '../context.js';
import type { Notification } from '../delivery/notifications.js';
import { applyEmailChange, applyPhoneChange } from './address-change.js';

export interface VerifyOutcome {
  user: UserRow;
  /** a message instead of a session (first half of a secure email change) */
  message?: string;
  /** account-change notifications due once the verification committed */
  notifications?: Notification[];
}

export interface VerifyType {
  tokenTypes: OneTimeTokenType[];
  /** email types are also verified through GET /verify links (and token_hash); sms types only by code */
  channel: 'email' | 'sms';
  /** the AMR method of the session it creates */
  amr: string;
  apply(ctx: AppContext, q: Queryable, user: UserRow, tokenType: OneTimeTokenType): Promise<VerifyOutcome>;
}

const confirmEmail: VerifyType['apply'] = async (_ctx, q, user) => ({ user: await confirmAddress(q, user, 'email') });

export const VERIFY_TYPES = new Map<string, VerifyType>([
  ['signup', { tokenTypes: ['confirmation_token'], channel: 'email', amr: 'otp', apply: confirmEmail }],
  ['invite', { tokenTypes: ['confirmation_token'], channel: 'email', amr: 'otp', apply: confirmEmail }],
  // Magic links reuse the recovery token; a new or unconfirmed user got the confirmation mail instead.
  ['magiclink', { tokenTypes: ['recovery_token', 'confirmation_token'], channel: 'email', amr: 'otp', apply: confirmEmail }],
  ['recovery', { tokenTypes: ['recovery_token'], channel: 'email', amr: 'otp', apply: confirmEmail }],
  // The email OTP: the code of a confirmation, magic link or recovery mail; as a link (or token_hash), either
  // mail's link token, the session then counted as a sign-up or a magic link (emailLinkType).
  ['email', { tokenTypes: ['confirmation_token', 'recovery_token'], channel: 'email', amr: 'otp', apply: confirmEmail }],
  [
    'sms',
    {
      tokenTypes: ['confirmation_token'],
      channel: 'sms',

      amr: 'otp',
      apply: async (_ctx, q, user) => ({ user: await confirmAddress(q, user, 'phone') }),
    },
  ],
  [
    'email_change',
    {
      tokenTypes: ['email_change_token_new', 'email_change_token_current'],
      channel: 'email',

      amr: 'otp',
      apply: applyEmailChange,
    },
  ],
  ['phone_change', { tokenTypes: ['phone_change_token'], channel: 'sms', amr: 'otp', apply: applyPhoneChange }],
]);

/** The type a verified `email` link stands for, by the token it spent, as the original renames it. */
export function emailLinkType(tokenType: OneTimeTokenType): 'signup' | 'magiclink' {
  return tokenType === 'recovery_token' ? 'magiclink' : 'signup';
}

// What each /verify type consumes and does (docs/one-time-codes-and-mail.md#verifying-a-code-or-link). One entry per type; the verify routes look
// the type up here, so a new flow adds an entry, not a branch.
import type { OneTimeTokenType } from '../../db/one-time-tokens.js';
import type { Queryable } from '../../db/pool.js';
import type { UserRow } from '../../db/users.js';
import { confirmAddress } from '../users/create.js';
import type { AppContext } from '../context.js';
import type { Notification } from '../delivery/notifications.js';
import { applyEmailChange, applyPhoneChange } from './address-change.js';
import type { AuditAction } from '../../db/audit-log.js';

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
  /** The audit entry the original writes, from the user as it was before and the token spent. */
  audit(user: UserRow, tokenType: OneTimeTokenType): VerifyAudit;
  /** sms types: the column holding the number a test number's fixed code is typed for (verify/test-otp.ts) */
  testOtpColumn?: 'phone' | 'phone_change';
}

export interface VerifyAudit {
  action: AuditAction;
  traits?: Record<string, unknown>;
}

// docs/users-and-audit.md#audit-log, the original's entries: a confirmation is a sign-up (each time), a
// recovery or magic link a sign-up for an address never confirmed and a login after, a phone code always
// a sign-up, an address change a modification.
const SIGNED_UP_BY_EMAIL: VerifyAudit = { action: 'user_signedup', traits: { provider: 'email' } };
const confirmation = (): VerifyAudit => SIGNED_UP_BY_EMAIL;
const recovery = (user: UserRow): VerifyAudit => (user.email_confirmed_at ? { action: 'login' } : SIGNED_UP_BY_EMAIL);
const emailCode = (user: UserRow, tokenType: OneTimeTokenType) => (tokenType === 'recovery_token' ? recovery(user) : confirmation());
const modified = (): VerifyAudit => ({ action: 'user_modified' });

/**
 * A recovery or magic link token signs in: it confirms an address never confirmed (and its email identity),
 * and changes nothing of a confirmed user, whose user_metadata and identities stay as they were, as the
 * original's recovery leaves them.
 */
const confirmEmail: VerifyType['apply'] = async (_ctx, q, user) => ({
  user: user.email_confirmed_at ? user : await confirmAddress(q, user, 'email'),
});

/**
 * A confirmation link or code (sign-up, invite, or an email code of either): as the original confirms it,
 * every identity carrying the address is marked verified too, an OAuth one included, not only the email
 * identity. A recovery or magic link token among them is a sign-in (confirmEmail).
 */
const confirmSignUp: VerifyType['apply'] = async (ctx, q, user, tokenType) =>
  tokenType === 'recovery_token'
    ? confirmEmail(ctx, q, user, tokenType)
    : { user: await confirmAddress(q, user, 'email', { everyIdentity: true }) };

export const VERIFY_TYPES = new Map<string, VerifyType>([
  ['signup', { tokenTypes: ['confirmation_token'], channel: 'email', amr: 'otp', apply: confirmSignUp, audit: confirmation }],
  ['invite', { tokenTypes: ['confirmation_token'], channel: 'email', amr: 'otp', apply: confirmSignUp, audit: confirmation }],
  // Magic links reuse the recovery token; a new or unconfirmed user got the confirmation mail instead.
  [
    'magiclink',
    { tokenTypes: ['recovery_token', 'confirmation_token'], channel: 'email', amr: 'otp', apply: confirmSignUp, audit: recovery },
  ],
  ['recovery', { tokenTypes: ['recovery_token'], channel: 'email', amr: 'otp', apply: confirmEmail, audit: recovery }],
  // The email OTP: the code of a confirmation, magic link or recovery mail; as a link (or token_hash), either
  // mail's link token, the session then counted as a sign-up or a magic link (emailLinkType).
  ['email', { tokenTypes: ['confirmation_token', 'recovery_token'], channel: 'email', amr: 'otp', apply: confirmSignUp, audit: emailCode }],
  [
    'sms',
    {
      tokenTypes: ['confirmation_token'],
      channel: 'sms',

      amr: 'otp',
      // Confirmed again, now, at every code: the original's ConfirmPhone on each SMS sign-in.
      apply: async (_ctx, q, user) => ({ user: await confirmAddress(q, user, 'phone', { again: true }) }),
      audit: () => ({ action: 'user_signedup', traits: { provider: 'phone' } }),
      testOtpColumn: 'phone',
    },
  ],
  [
    'email_change',
    {
      tokenTypes: ['email_change_token_new', 'email_change_token_current'],
      channel: 'email',

      amr: 'otp',
      apply: applyEmailChange,
      audit: modified,
    },
  ],
  [
    'phone_change',
    {
      tokenTypes: ['phone_change_token'],
      channel: 'sms',
      amr: 'otp',
      apply: applyPhoneChange,
      audit: modified,
      testOtpColumn: 'phone_change',
    },
  ],
]);

/** The type a verified `email` link stands for, by the token it spent, as the original renames it. */
export function emailLinkType(tokenType: OneTimeTokenType): 'signup' | 'magiclink' {
  return tokenType === 'recovery_token' ? 'magiclink' : 'signup';
}

// Password strength rules (docs/passwords.md#strength-rules) and the leaked-password check
// (docs/passwords.md#leaked-passwords). The messages and reason codes are the original's and go to clients as
// the 422 weak_password body or the login's `weak_password` field: do not reword them.
import { apiError } from '../errors.js';
import type { Config } from '../config/types.js';
import type { AppContext } from '../context.js';

/**
 * The original rejects longer passwords with 400 validation_failed "Password cannot be longer than 72
 * characters". The limit is in UTF-8 bytes (bcrypt's input limit, kept for compatibility).
 */
export const PASSWORD_MAX_LENGTH = 72;

export type PasswordPolicy = Pick<Config['password'], 'minLength' | 'requiredCharacters'>;

export interface WeakPassword {
  message: string;
  reasons: string[];
}

/** UTF-8 length: the original measures passwords with Go's len(), which counts bytes. */
export function passwordLength(password: string): number {
  return Buffer.byteLength(password, 'utf8');
}

export function isPasswordTooLong(password: string): boolean {
  return passwordLength(password) > PASSWORD_MAX_LENGTH;
}

/**
 * null when the password satisfies the policy; otherwise every failed rule, in the original's order.
 * `pwned`: the leaked-password check found it, which comes last.
 */
export function checkPasswordStrength(password: string, policy: PasswordPolicy, pwned = false): WeakPassword | null {
  const messages: string[] = [];
  const reasons: string[] = [];
  if (passwordLength(password) < policy.minLength) {
    reasons.push('length');
    messages.push(`Password should be at least ${policy.minLength} characters.`);
  }
  if (policy.requiredCharacters.some((set) => !containsAny(password, set))) {
    // One message naming every set, even when several are missing (as the original does).
    reasons.push('characters');
    messages.push(`Password should contain at least one character of each: ${policy.requiredCharacters.join(', ')}.`);
  }
  if (pwned) {
    reasons.push('pwned');
    messages.push('Password is known to be weak and easy to guess, please choose a different one.');
  }
  return reasons.length === 0 ? null : { message: messages.join(' '), reasons };
}

/**
 * 422 weak_password with the failed rules' reasons, as sign-ups and password changes answer. With
 * PASSWORD_HIBP_ENABLED the range API is asked too (even when a local rule already failed, so that the
 * answer names every reason, as the original's does): call it before any transaction opens. When the API
 * cannot answer, the password is accepted unchecked, or with PASSWORD_HIBP_FAIL_CLOSED refused with 503.
 */
export async function assertStrongPassword(ctx: AppContext, password: string, requestId: string): Promise<void> {
  const pwned = await isLeaked(ctx, password, requestId, ctx.config.password.hibp.failClosed);
  const weak = checkPasswordStrength(password, ctx.config.password, pwned);
  if (weak) throw apiError('weak_password', weak.message, { weak_password: { reasons: weak.reasons } });
}

/**
 * What the password grant reports as `weak_password` about a password that just signed in. Never throws:
 * a failed range API only leaves `pwned` out, whether or not the check fails closed.
 */
export async function signInWeakness(ctx: AppContext, password: string, requestId: string): Promise<WeakPassword | null> {
  // The original's strength check stops at the length limit with an error that is not a weakness, so a
  // longer password (an imported hash can have one) is reported as null and never sent to the range API.
  if (isPasswordTooLong(password)) return null;
  return checkPasswordStrength(password, ctx.config.password, await isLeaked(ctx, password, requestId, false));
}

/** false when the check is off, or failed and `refuse` is false; the failure is logged, never the password. */
async function isLeaked(ctx: AppContext, password: string, requestId: string, refuse: boolean): Promise<boolean> {
  if (!ctx.pwned) return false;
  try {
    return await ctx.pwned.isPwned(password);
  } catch (err) {
    if (refuse) {
      ctx.log.error({ err, request_id: requestId }, 'leaked-password check failed: password refused');
      throw apiError('pwned_check_unavailable');
    }
    ctx.log.warn({ err, request_id: requestId }, 'leaked-password check failed: password accepted unchecked');
    return false;
  }
}

/** Go's strings.ContainsAny: true if any code point of `set` occurs in `text`; an empty set passes. */
function containsAny(text: string, set: string): boolean {
  if (set === '') return true;
  for (const ch of set) if (text.includes(ch)) return true;
  return false;
}

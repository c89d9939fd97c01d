// Password strength rules and generated passwords (docs/passwords.md#strength-rules). The messages and reason codes are
// the original's and go to clients as the 422 weak_password body or the login's `weak_password`
// field: do not reword them. HIBP ("pwned") is not implemented here.
import { apiError } from '../errors.js';
import type { Config } from '../config/types.js';

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

/** null when the password satisfies the policy; otherwise every failed rule, in the original's order. */
export function checkPasswordStrength(password: string, policy: PasswordPolicy): WeakPassword | null {
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
  return reasons.length === 0 ? null : { message: messages.join(' '), reasons };
}

/** 422 weak_password with the failed rules' reasons, as sign-ups and password changes answer. */
export function assertStrongPassword(password: string, policy: PasswordPolicy): void {
  const weak = checkPasswordStrength(password, policy);
  if (weak) throw apiError('weak_password', weak.message, { weak_password: { reasons: weak.reasons } });
}

/** Go's strings.ContainsAny: true if any code point of `set` occurs in `text`; an empty set passes. */
function containsAny(text: string, set: string): boolean {
  if (set === '') return true;
  for (const ch of set) if (text.includes(ch)) return true;
  return false;
}

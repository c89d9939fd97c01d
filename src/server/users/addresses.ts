// Email and phone validation and normalisation. Emails follow the original's HTML5-style check
// (docs/users-and-audit.md#addresses) and are lower-cased; phones are stored and looked up as the original
// stores them (digits without '+'), a new one checked by libphonenumber as well.
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { apiError } from '../errors.js';

const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** Validated, lower-cased email; throws the original's 400 messages. */
export function normaliseEmail(input: unknown): string {
  if (typeof input !== 'string' || input === '') throw apiError('email_required');
  // The original's limit is on the address as sent, in UTF-8 bytes, and comes before any other check: one
  // padded or written past 255 bytes is too long, whatever its trimmed length or characters.
  if (Buffer.byteLength(input, 'utf8') > 255) throw apiError('email_too_long');
  // Trimmed here (docs/differences.md#deliberate-departures), but only an empty value is "required" in the original:
  // white space alone is an address sent, of an invalid format.
  const email = input.trim();
  if (!EMAIL.test(email)) throw apiError('email_invalid');
  return email.toLowerCase();
}

/**
 * A phone number in the form the original stores and looks numbers up in: its digits without '+' and
 * spaces (and here without `(`, `)`, `-` too), when they are 2–15 digits not starting with 0; else null.
 */
export function phoneDigits(input: unknown): string | null {
  if (typeof input !== 'string') return null;
  const digits = input.replace(/[\s()-]/g, '').replace(/^\+/, '');
  return /^[1-9]\d{1,14}$/.test(digits) ? digits : null;
}

/**
 * A number a user may be given: the original's form (phoneDigits), never rewritten, so that the row reads
 * as the original would have written it and its lookups keep finding it; and, ours, one that
 * libphonenumber finds possible for its country (`1234567890` is no one's: docs/differences.md#answers).
 */
export function parsePhone(input: unknown): string | null {
  const digits = phoneDigits(input);
  return digits && parsePhoneNumberFromString(`+${digits}`)?.isPossible() ? digits : null;
}

/** parsePhone, or the original's 400 phone_invalid: for a number that is to be stored. */
export function normalisePhone(input: unknown): string {
  const phone = parsePhone(input);
  if (!phone) throw apiError('phone_invalid');
  return phone;
}

/**
 * phoneDigits, or 400 phone_invalid: for a number that is only looked up (a sign-in, a code to verify or
 * resend). The original's check alone, so that a number it stored, which libphonenumber would refuse
 * today (adopted rows), still finds its user.
 */
export function lookupPhone(input: unknown): string {
  const phone = phoneDigits(input);
  if (!phone) throw apiError('phone_invalid');
  return phone;
}

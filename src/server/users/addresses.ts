// Email and phone validation and normalisation. Emails follow the original's HTML5-style check
// (docs/users-and-audit.md#addresses) and are lower-cased; phones are parsed by libphonenumber and stored as E.164
// digits without '+', as the original stores them.
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { apiError } from '../errors.js';

const EMAIL =
  /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** Validated, lower-cased email; throws the original's 400 messages. */
export function normaliseEmail(input: unknown): string {
  if (typeof input !== 'string' || input.trim() === '') throw apiError('email_required');
  const email = input.trim();
  if (email.length > 255) throw apiError('email_too_long');
  if (!EMAIL.test(email)) throw apiError('email_invalid');
  return email.toLowerCase();
}

/** E.164 digits without '+', or null when the text is not a possible phone number. */
export function parsePhone(input: unknown): string | null {
  if (typeof input !== 'string') return null;
  const compact = input.replace(/[\s()-]/g, '');
  if (!/^\+?[1-9]\d{1,14}$/.test(compact)) return null;
  const parsed = parsePhoneNumberFromString(compact.startsWith('+') ? compact : `+${compact}`);
  if (!parsed || !parsed.isPossible()) return null;
  return parsed.number.slice(1);
}

export function normalisePhone(input: unknown): string {
  const phone = parsePhone(input);
  if (!phone) throw apiError('phone_invalid');
  return phone;
}

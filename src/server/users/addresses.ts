// Email and phone validation and normalisation. Emails follow the original's HTML5-style check
// (REFERENCE §14.8) and are lower-cased; phones are parsed by libphonenumber and stored as E.164
// digits without '+', as the original stores them.
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { badRequest } from '../errors.js';

const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;

/** Validated, lower-cased email; throws the original's 400 messages. */
export function normaliseEmail(input: unknown): string {
  if (typeof input !== 'string' || input.trim() === '') throw badRequest('An email address is required');
  const email = input.trim();
  if (email.length > 255) throw badRequest('An email address is too long');
  if (!EMAIL.test(email)) throw badRequest('Unable to validate email address: invalid format');
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
  if (!phone) throw badRequest('Invalid phone number format (E.164 required)');
  return phone;
}

/** A string field of a JSON body: '' when absent; 400 naming the field when it is not a string. */
export function stringField(body: Record<string, unknown>, name: string): string {
  const value = body[name];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw badRequest(`${name} must be a string`);
  return value;
}

/** An object field ({} when absent). */
export function objectField(body: Record<string, unknown>, name: string): Record<string, unknown> {
  const value = body[name];
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw badRequest(`${name} must be an object`);
  return value as Record<string, unknown>;
}

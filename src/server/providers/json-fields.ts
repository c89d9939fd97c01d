// Reading a provider's JSON without trusting its shape: a field of the wrong type reads as absent, so a
// changed or hostile answer yields an empty value (and then a refused profile), never an exception.
import { ProviderError } from './outbound.js';

type Json = Record<string, unknown>;

/** The value at a path of object keys, or undefined where any step is not an object. */
export function at(value: unknown, ...path: string[]): unknown {
  let here = value;
  for (const key of path) {
    if (here === null || typeof here !== 'object' || Array.isArray(here)) return undefined;
    here = (here as Json)[key];
  }
  return here;
}

/** A string field, or '' when absent or not a string. */
export function text(value: unknown, ...path: string[]): string {
  const found = at(value, ...path);
  return typeof found === 'string' ? found : '';
}

/** A boolean field: only `true` itself is true. */
export function flag(value: unknown, ...path: string[]): boolean {
  return at(value, ...path) === true;
}

/** An id that providers send as a JSON number (gitlab, kakao) or a string; integers are written out in full. */
export function idText(value: unknown, ...path: string[]): string {
  const found = at(value, ...path);
  if (typeof found === 'string') return found;
  if (typeof found === 'number' && Number.isSafeInteger(found)) return String(found);
  return '';
}

/** An array field, or [] when absent or not an array. */
export function list(value: unknown, ...path: string[]): unknown[] {
  const found = at(value, ...path);
  return Array.isArray(found) ? found : [];
}

/**
 * identity_data keeps only the keys a provider supplied (the original's `omitempty`): empty strings and
 * absent values are dropped, booleans and custom_claims are kept as given.
 */
export function claims(entries: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined && v !== null && v !== ''));
}

/** A profile without a subject cannot become an identity: the provider answered something else (an error body). */
export function requireSubject(subject: string, provider: string): string {
  if (!subject) throw new ProviderError(`${provider} answered a profile without a user id`);
  return subject;
}

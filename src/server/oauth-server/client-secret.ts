// Client secrets: 32 random bytes (base64url) shown once, stored as the base64url SHA-256 the original
// stores, so an adopted client's secret keeps working; compared in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const newClientSecret = (): string => randomBytes(32).toString('base64url');

export const hashClientSecret = (secret: string): string => createHash('sha256').update(secret, 'utf8').digest('base64url');

export function clientSecretMatches(presented: string, storedHash: string | null): boolean {
  if (!storedHash) return false;
  const stored = Buffer.from(storedHash, 'base64url');
  const calc = createHash('sha256').update(presented, 'utf8').digest();
  return stored.length === calc.length && timingSafeEqual(stored, calc);
}

// Password hashes at rest (docs/passwords.md#hashes-at-rest). With SECURITY_DB_ENCRYPTION_ENCRYPT the
// original seals each new hash in its envelope format, keyed by the user's id, so a database it wrote
// holds envelopes where a hash is expected; with the setting on here, new hashes are sealed the same way,
// so either service reads what the other wrote. Hashes stored in clear stay readable either way.
import { secretBox } from '../mfa/encryption.js';
import type { Config } from '../config/types.js';
import type { UserRow } from '../../db/users.js';

type Keys = Pick<Config, 'security' | 'jwt'>;

/** The hash to check a password against, the envelope opened; null when the user has no password. */
export function passwordHashOf(config: Keys, user: Pick<UserRow, 'id' | 'encrypted_password'>): string | null {
  const stored = user.encrypted_password;
  // Every hash format starts with `$`; only the envelope is JSON.
  if (!stored || !stored.startsWith('{')) return stored;
  return secretBox(config).open(user.id, stored).value;
}

/** A stored hash that SECURITY_DB_ENCRYPTION_ENCRYPT would have sealed otherwise: in clear, or under an older key. */
export function needsResealing(config: Keys, userId: string, stored: string): boolean {
  return !stored.startsWith('{') || secretBox(config).open(userId, stored).stale;
}

/** The value to store for a new hash of `userId`'s password: sealed when SECURITY_DB_ENCRYPTION_ENCRYPT is on. */
export function storedPasswordHash(config: Keys, userId: string, hash: string): string {
  return config.security.dbEncryption.encrypt ? secretBox(config).seal(userId, hash) : hash;
}

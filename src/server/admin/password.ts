// The stored password of an admin-created or admin-updated user: a password to hash, or an imported hash
// (argon2 PHC, bcrypt, Firebase scrypt) that must be one we can verify, or none (docs/api.md#post-adminusers, docs/passwords.md#imported-hash-formats).
import { apiError } from '../errors.js';
import { assertStrongPassword, isPasswordTooLong } from '../users/password-policy.js';
import { parseStoredHash } from '../../workers/password-formats.js';
import type { AdminUserParams } from './user-params.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';

/**
 * undefined: leave the password alone. A user created without one gets no password (the original stores a
 * random 64-character one: neither can be signed in with, and ours costs no hash).
 * `strength`: updates go through the password policy (and the leaked-password check); creation does not, as in
 * the original. Called before the request's transaction opens.
 */
export async function storedPassword(
  ctx: AppContext,
  p: AdminUserParams,
  strength: boolean,
  req: Pick<ApiRequest, 'signal' | 'requestId'>,
): Promise<string | undefined> {
  if (p.password !== undefined && p.passwordHash !== undefined) {
    throw apiError('admin_password_and_hash');
  }
  if (p.passwordHash !== undefined) {
    // Imported hashes are user data: refuse what the verifier could not check, rather than lock the user out.
    if (!parseStoredHash(p.passwordHash)) throw apiError('admin_password_hash_format');
    return p.passwordHash;
  }
  // An empty password on create means "none"; on update it is a password that fails the policy.
  if (p.password === undefined || (p.password === '' && !strength)) return undefined;
  if (isPasswordTooLong(p.password)) throw apiError('password_too_long');
  if (strength) await assertStrongPassword(ctx, p.password, req.requestId);
  return ctx.hasher.hash(p.password, req.signal);
}

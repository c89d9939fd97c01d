// A v2 session's signing key at rest (sessions.refresh_token_hmac_key): 32 bytes as base64url, sealed for
// its session with the secrets-at-rest box (docs/mfa.md#secrets-at-rest), the envelope the original writes
// under SECURITY_DB_ENCRYPTION, bound to the session id as the original binds it. Whoever reads the key can
// mint that session's refresh tokens, so it is sealed like a TOTP secret, always; a key the original left
// in clear still opens, and is sealed at its session's next refresh. Only with no key to seal with at all
// (JWT_KEYS without JWT_SECRET or SECURITY_DB_ENCRYPTION_ENCRYPTION_KEY) is it kept in clear, as the original
// keeps it without encryption configured.
import { secretBox } from '../mfa/encryption.js';
import { newRefreshTokenKey } from '../crypto/refresh-token-v2.js';
import type { Config } from '../config/types.js';

type Keys = Pick<Config, 'security' | 'jwt'>;

/** A new key for `sessionId`: the bytes to sign with, and the text to store. */
export function newSessionKey(config: Keys, sessionId: string): { key: Buffer; stored: string } {
  const key = newRefreshTokenKey();
  return { key, stored: secretBox(config).sealOrClear(sessionId, key.toString('base64url')) };
}

/**
 * The key of `sessionId` from its stored text; `resealed` is the text to store instead when it is in
 * clear or sealed with a key other than the current one, else null. Throws when no configured key opens it.
 */
export function openSessionKey(config: Keys, sessionId: string, stored: string): { key: Buffer; resealed: string | null } {
  const box = secretBox(config);
  const { value, stale } = box.open(sessionId, stored);
  if (!stale) return { key: Buffer.from(value, 'base64url'), resealed: null };
  return { key: Buffer.from(value, 'base64url'), resealed: box.seal(sessionId, value) };
}

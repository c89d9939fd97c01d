// Random tokens and the hashes they are stored under. The wire formats are the original service's
// (docs/tokens-and-sessions.md#refresh-token-formats, docs/one-time-codes-and-mail.md#codes-and-link-tokens) so existing clients and links keep working; what we keep at rest is a hash
// (docs/differences.md decisions: "store hashes only"). Everything here is cheap: it runs inline on the HTTP
// thread, never through the crypto pool, whose round trip costs more than the work (bench/README.md).
import { createHash, createHmac, randomBytes, randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import { parseV2Token } from './refresh-token-v2.js';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const REFRESH_TOKEN_LENGTH = 12;

/** A v1 refresh token: 12 chars of lowercase base32 cut from 8 random bytes (60 bits), as the original issues. */
export function newRefreshToken(): string {
  return base32(randomBytes(8)).slice(0, REFRESH_TOKEN_LENGTH);
}

/**
 * A refresh token stored as a row, hashed (the format above), rather than a v2 token: exactly 12 characters
 * `^[a-z0-9]{12}$`, as the original checks them, or 22 characters of base64url, the 16 random bytes the
 * original issued before its v2.171 (April 2025). Never issued here, those reach us only from an adopted
 * database whose clients still hold them (docs/adopting-gotrue.md); a v2 token is never that short.
 */
export function isRowRefreshToken(token: string): boolean {
  return token.length === REFRESH_TOKEN_LENGTH ? /^[a-z0-9]{12}$/.test(token) : /^[A-Za-z0-9_-]{22}$/.test(token);
}

/**
 * The original's pre-validation of the refresh grant (docs/tokens-and-sessions.md#refresh-token-formats): a
 * row's token (isRowRefreshToken), or else a well-formed v2 token (refresh-token-v2.ts). False means 400
 * "Refresh token is not valid" before any database work.
 */
export function isPlausibleRefreshToken(token: string): boolean {
  if (token.length < REFRESH_TOKEN_LENGTH) return false;
  return isRowRefreshToken(token) || parseV2Token(token) !== null;
}

/** A numeric one-time code: uniform in [0, 10^length), zero-padded (docs/one-time-codes-and-mail.md#codes-and-link-tokens). */
export function newOtp(length: number): string {
  if (!Number.isInteger(length) || length < 1 || length > 12) throw new TypeError(`OTP length must be 1..12, got ${length}`);
  return String(randomInt(0, 10 ** length)).padStart(length, '0');
}

/**
 * Lowercase hex SHA-224 of identifier + otp: 56 hex chars. This is the original's token hash, which it puts
 * into links as `token`/`token_hash`: codes it sent before an adoption are still found by it. New codes get
 * keyedOtpHash. identifier: lowercase email, or phone digits without '+'.
 */
export function otpHash(identifier: string, otp: string): string {
  return createHash('sha224')
    .update(identifier + otp)
    .digest('hex');
}

/**
 * The link token of a new code: HMAC-SHA224 of identifier + otp under a key of the service's, 56 lowercase hex
 * chars, the same shape as the original's unkeyed otpHash. Derived from the code, so a code typed by the
 * user is found by recomputing it; keyed, so nobody without the key can compute the links of the 10^6
 * codes and try them, where a wrong link, unlike a wrong typed code, names no account to count the
 * attempt against (docs/one-time-codes-and-mail.md#codes-and-link-tokens).
 */
export function keyedOtpHash(key: Buffer, identifier: string, otp: string): string {
  return createHmac('sha224', key)
    .update(identifier + otp)
    .digest('hex');
}

const derivedKeys = new Map<string, Buffer>();

/**
 * A key for one use (`label`), derived from a secret of the service's (sessions/child-token.ts's
 * childSecretOf), so that no two uses share a key; made once per label and secret.
 */
export function derivedKey(label: string, secret: string): Buffer {
  const id = `portcullis/${label}\0${secret}`;
  let key = derivedKeys.get(id);
  if (!key) {
    key = createHash('sha256').update(id).digest();
    derivedKeys.set(id, key);
  }
  return key;
}

/** The key of keyedOtpHash. */
export const linkKeyOf = (secret: string): Buffer => derivedKey('one-time-link', secret);

/** Lowercase hex SHA-256, for keeping refresh tokens and link hashes at rest. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Constant-time string comparison. Unequal lengths return false after comparing `a` with itself, so
 * the time depends on the lengths only, never on where the content differs.
 */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) {
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

export function newUuid(): string {
  return randomUUID();
}

/** RFC 4648 base32, lowercase, no padding. */
function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1; // keep only the unread bits so the shift never overflows
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

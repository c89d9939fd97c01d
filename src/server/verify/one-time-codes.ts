// One-time codes and link tokens (docs/one-time-codes-and-mail.md#codes-and-link-tokens). The code is a random number; the link token is
// HMAC-SHA224(key, address + code) hex, in the shape of the original's unkeyed SHA-224 (optionally
// 'pkce_'-prefixed); the database keeps only the SHA-256 of the link token, so neither a code nor a
// working link can be read back from a dump.
import {
  countFailedAttempt,
  findOneTimeTokenByHash,
  findOneTimeTokensByAddress,
  putOneTimeToken,
  type OneTimeTokenRow,
  type OneTimeTokenType,
} from '../../db/one-time-tokens.js';
import type { Queryable } from '../../db/pool.js';
import type { JsonWebKey } from 'node:crypto';
import { keyedOtpHash, linkKeyOf, newOtp, otpHash, safeEqual, sha256Hex } from '../crypto/tokens.js';
import { childSecretOf } from '../sessions/child-token.js';
import { SmsSendError } from '../delivery/sms/sender.js';

/** The key of the service's link tokens: from JWT_SECRET (or the keys' private parts), as refresh-token children. */
export const linkKeyFor = (jwt: { secret: string; keys: ReadonlyArray<JsonWebKey> }): Buffer => linkKeyOf(childSecretOf(jwt));

export interface IssuedToken {
  otp: string;
  linkToken: string;
}

export async function issueOneTimeToken(
  q: Queryable,
  t: { userId: string; type: OneTimeTokenType; address: string; length: number; pkce?: boolean; otp?: string; linkKey: Buffer },
): Promise<IssuedToken> {
  const otp = t.otp ?? newOtp(t.length);
  const linkToken = (t.pkce ? 'pkce_' : '') + keyedOtpHash(t.linkKey, t.address, otp);
  await putOneTimeToken(q, { userId: t.userId, type: t.type, tokenHash: sha256Hex(linkToken), relatesTo: t.address });
  return { otp, linkToken };
}

/** The live token a link carries, or null. */
export function findTokenByLink(q: Queryable, linkToken: string, types: OneTimeTokenType[]): Promise<OneTimeTokenRow | null> {
  return findOneTimeTokenByHash(q, sha256Hex(linkToken), types);
}

/**
 * The token matching a code typed by the user, or null. A wrong code counts against every live token of
 * those types for that address, and a token is deleted after `maxAttempts` wrong codes: a six-digit code
 * cannot be brute-forced within its lifetime. Call inside a transaction that commits even when the
 * verification fails, or the count is lost.
 */
export async function findTokenByCode(
  q: Queryable,
  linkKey: Buffer,
  address: string,
  code: string,
  types: OneTimeTokenType[],
  maxAttempts: number,
): Promise<OneTimeTokenRow | null> {
  const candidates = await findOneTimeTokensByAddress(q, address, types);
  // A code sent before the link tokens were keyed (by the original, or before an upgrade) is still found.
  const stored = [keyedOtpHash(linkKey, address, code), otpHash(address, code)].flatMap((hash) => [
    sha256Hex(hash),
    sha256Hex('pkce_' + hash),
  ]);
  const match = candidates.find((row) => stored.some((hash) => safeEqual(row.token_hash, hash)));
  if (match) return match;
  for (const row of candidates) await countFailedAttempt(q, row.id, maxAttempts);
  return null;
}

export type GatewayCheck = (to: string, code: string) => Promise<boolean>;

/** What asking the gateway about a code came to. */
export type GatewayVerdict =
  /** the gateway approved the code, within its own lifetime for it (SMS_OTP_EXP does not apply) */
  | { outcome: 'approved'; row: OneTimeTokenRow }
  /** no code of these types is pending for the address (none sent, or spent, voided or out of attempts) */
  | { outcome: 'no_token' }
  /** the gateway said the code is wrong, expired or used up; counted as a wrong code */
  | { outcome: 'refused' }
  /** the gateway could not be asked (error answer, network, timeout); not the user's guess, so not counted */
  | { outcome: 'failed'; error: SmsSendError };

/**
 * For gateways that generate and check codes themselves (Twilio Verify): the stored token only records
 * that a code was sent; the gateway says whether the code is right. Wrong codes still count against the
 * stored token (SECURITY_OTP_MAX_ATTEMPTS), and once it is gone the gateway is no longer asked.
 */
export async function findTokenCheckedByGateway(
  q: Queryable,
  check: GatewayCheck,
  address: string,
  code: string,
  types: OneTimeTokenType[],
  maxAttempts: number,
): Promise<GatewayVerdict> {
  const candidates = await findOneTimeTokensByAddress(q, address, types);
  if (candidates.length === 0) return { outcome: 'no_token' };
  let approved: boolean;
  try {
    approved = await check(address, code);
  } catch (err) {
    if (err instanceof SmsSendError) return { outcome: 'failed', error: err };
    throw err;
  }
  if (approved) return { outcome: 'approved', row: candidates[0] };
  for (const row of candidates) await countFailedAttempt(q, row.id, maxAttempts);
  return { outcome: 'refused' };
}

export const isExpired = (row: OneTimeTokenRow, lifetimeSeconds: number, now = Date.now()) =>
  row.created_at.getTime() + lifetimeSeconds * 1000 < now;

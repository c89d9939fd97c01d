// One-time codes and link tokens (docs/one-time-codes-and-mail.md#codes-and-link-tokens). The code is a random number; the link token is the
// original's SHA-224(address + code) hex (optionally 'pkce_'-prefixed); the database keeps only the
// SHA-256 of the link token, so neither a code nor a working link can be read back from a dump.
import {
  countFailedAttempt,
  findOneTimeTokenByHash,
  findOneTimeTokensByAddress,
  putOneTimeToken,
  type OneTimeTokenRow,
  type OneTimeTokenType,
} from '../../db/one-time-tokens.js';
import type { Queryable } from '../../db/pool.js';
import { newOtp, otpHash, safeEqual, sha256Hex } from '../crypto/tokens.js';

export interface IssuedToken {
  otp: string;
  linkToken: string;
}

export async function issueOneTimeToken(
  q: Queryable,
  t: { userId: string; type: OneTimeTokenType; address: string; length: number; pkce?: boolean; otp?: string },
): Promise<IssuedToken> {
  const otp = t.otp ?? newOtp(t.length);
  const linkToken = (t.pkce ? 'pkce_' : '') + otpHash(t.address, otp);
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
  address: string,
  code: string,
  types: OneTimeTokenType[],
  maxAttempts: number,
): Promise<OneTimeTokenRow | null> {
  const candidates = await findOneTimeTokensByAddress(q, address, types);
  const plain = sha256Hex(otpHash(address, code));
  const pkce = sha256Hex('pkce_' + otpHash(address, code));
  const match = candidates.find((row) => safeEqual(row.token_hash, plain) || safeEqual(row.token_hash, pkce));
  if (match) return match;
  for (const row of candidates) await countFailedAttempt(q, row.id, maxAttempts);
  return null;
}

/**
 * For gateways that generate and check codes themselves (Twilio Verify): the stored token only records
 * that a code was sent and when; the gateway says whether the code is right. Wrong codes still count.
 */
export async function findTokenCheckedByGateway(
  q: Queryable,
  check: (to: string, code: string) => Promise<boolean>,
  address: string,
  code: string,
  types: OneTimeTokenType[],
  maxAttempts: number,
): Promise<OneTimeTokenRow | null> {
  const candidates = await findOneTimeTokensByAddress(q, address, types);
  if (candidates.length === 0) return null;
  if (await check(address, code)) return candidates[0];
  for (const row of candidates) await countFailedAttempt(q, row.id, maxAttempts);
  return null;
}

export const isExpired = (row: OneTimeTokenRow, lifetimeSeconds: number, now = Date.now()) =>
  row.created_at.getTime() + lifetimeSeconds * 1000 < now;

// The original service's second refresh-token format (docs/tokens-and-sessions.md#v2-refresh-tokens):
// base64url, no padding, of
//   0x00 (format version) | session id (16 bytes) | counter (unsigned varint) | signature (16) | checksum (4)
// The signature is HMAC-SHA-256 under the session's own key of everything before it, cut to 16 bytes;
// the checksum is the first 4 bytes of SHA-256 of everything before it, so that random text is turned
// away without a database read. Nothing is stored per token: the session row keeps the key and the
// counter of the one token currently valid. The layout must stay byte-for-byte the original's, so tokens
// minted by either service are read by the other.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';

const SIGNATURE_BYTES = 16;
const CHECKSUM_BYTES = 4;
/** version + session id + a one-byte counter + signature + checksum: the shortest token there is */
const MIN_BYTES = 1 + 16 + 1 + SIGNATURE_BYTES + CHECKSUM_BYTES;
const MAX_COUNTER = (1n << 63n) - 1n;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export interface ParsedV2Token {
  sessionId: string;
  /** a bigint: the column is bigint and the format allows up to 2^63 - 1 */
  counter: bigint;
  /** the bytes the signature covers */
  signed: Buffer;
  signature: Buffer;
}

/** A new session's signing key: 32 random bytes, as the original generates. */
export function newRefreshTokenKey(): Buffer {
  return randomBytes(32);
}

/** The token of `sessionId` at `counter`, signed with the session's key. */
export function encodeV2Token(sessionId: string, counter: bigint, key: Buffer): string {
  const head = Buffer.concat([Buffer.from([0]), uuidBytes(sessionId), uvarint(counter < 0n ? 0n : counter)]);
  const signature = createHmac('sha256', key).update(head).digest().subarray(0, SIGNATURE_BYTES);
  const body = Buffer.concat([head, signature]);
  const checksum = createHash('sha256').update(body).digest().subarray(0, CHECKSUM_BYTES);
  return Buffer.concat([body, checksum]).toString('base64url');
}

/**
 * The token's parts, or null when it is not a well-formed v2 token: not base64url, shorter than the
 * shortest token, another version byte, a checksum that does not match, a varint that does not end (or
 * overflows 64 bits), or anything but exactly 16 signature bytes after it. A counter past 2^63 - 1 reads
 * as 2^63 - 1, as the original clamps it. The signature is not checked here: that needs the session's key.
 */
export function parseV2Token(token: string): ParsedV2Token | null {
  // Buffer.from skips characters outside the alphabet and accepts '='; the original's decoder does not.
  if (!BASE64URL.test(token) || token.length % 4 === 1) return null;
  const bytes = Buffer.from(token, 'base64url');
  if (bytes.length < MIN_BYTES || bytes[0] !== 0) return null;
  const body = bytes.subarray(0, bytes.length - CHECKSUM_BYTES);
  const checksum = createHash('sha256').update(body).digest().subarray(0, CHECKSUM_BYTES);
  if (!timingSafeEqual(checksum, bytes.subarray(bytes.length - CHECKSUM_BYTES))) return null;
  const counter = readUvarint(body, 17);
  if (!counter || body.length - counter.end !== SIGNATURE_BYTES) return null;
  return {
    sessionId: uuidText(body.subarray(1, 17)),
    counter: counter.value > MAX_COUNTER ? MAX_COUNTER : counter.value,
    signed: body.subarray(0, counter.end),
    signature: body.subarray(counter.end),
  };
}

/** Whether the token was signed with `key` (constant time). */
export function v2SignatureMatches(token: ParsedV2Token, key: Buffer): boolean {
  const expected = createHmac('sha256', key).update(token.signed).digest().subarray(0, SIGNATURE_BYTES);
  return timingSafeEqual(expected, token.signature);
}

/**
 * SECURITY_REFRESH_TOKEN_UPGRADE_PERCENTAGE picks sessions, not requests: a session is in the upgraded
 * share when the CRC-32 (IEEE) of its id's 16 bytes falls in the first `percentage` of 100 buckets, so
 * every refresh of one session, on any instance, decides alike. 0 and 100 decide as the original; in
 * between the share is the same but not the same sessions (docs/differences.md).
 */
export function upgradesToV2(sessionId: string, percentage: number): boolean {
  if (percentage <= 0) return false;
  if (percentage >= 100) return true;
  return crc32(uuidBytes(sessionId)) % 100 < percentage;
}

function uuidBytes(id: string): Buffer {
  return Buffer.from(id.replace(/-/g, ''), 'hex');
}

function uuidText(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function uvarint(value: bigint): Buffer {
  const out: number[] = [];
  let rest = value;
  while (rest >= 0x80n) {
    out.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  out.push(Number(rest));
  return Buffer.from(out);
}

/** An unsigned varint at `offset`: at most 10 bytes, the tenth no more than 1 (64 bits); null otherwise. */
function readUvarint(bytes: Buffer, offset: number): { value: bigint; end: number } | null {
  let value = 0n;
  for (let i = 0; i < 10 && offset + i < bytes.length; i++) {
    const byte = bytes[offset + i];
    if (i === 9 && byte > 1) return null;
    value |= BigInt(byte & 0x7f) << BigInt(7 * i);
    if ((byte & 0x80) === 0) return { value, end: offset + i + 1 };
  }
  return null;
}

// A fast path for the common bearer token, HS256 under a secret key: verified with node:crypto directly,
// without jose's layers (a compact-JWS parse into objects, a flattened-JWS verify, async key checks and a
// second JSON decode), which cost ~20 µs of the ~120 µs a minimal GET /user handler needs in all
// (bench/README.md#where-time-goes). It accepts only tokens jose's jwtVerify(token, key,
// { algorithms: ['HS256'] }) accepts too, and answers null for anything else —
// an unusual header, non-canonical base64url, a bad signature, a claim jose would refuse — so jwt.ts then
// asks jose, whose errors (and their golang-jwt texts) stay the only ones a client sees. The claims either
// returns are then read and their exp and nbf checked as the original does (claim-reading.ts).
import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { JWTPayload } from 'jose';

const SEGMENT = /^[A-Za-z0-9_-]+$/;
/** Header members jose accepts without checks of its own when no typ option is given (crit and b64 have rules: jose decides). */
const PLAIN_HEADER = new Set(['alg', 'typ', 'kid']);

/** A JSON object as jose's isObject accepts it (JSON.parse only makes plain objects, arrays aside). */
const isPlainObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** The token's protected header when it is canonical base64url JSON of a plain object, else null. */
export function parseHeader(segment: string): Record<string, unknown> | null {
  if (!SEGMENT.test(segment)) return null;
  try {
    const header: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return isPlainObject(header) ? header : null;
  } catch {
    return null;
  }
}

/**
 * The claims of `token` (whose three segments are given) when jose would accept it: alg HS256 and no
 * header member but alg, typ and kid; the signature (compared as canonical base64url text, in constant
 * time); a JSON object payload; iat, when present, a number; nbf, when present, a number not after now;
 * exp, when present, a number after now (jose's rules with no clock tolerance). Null otherwise.
 */
export function verifyHs256(token: string, header: Record<string, unknown>, key: KeyObject): JWTPayload | null {
  if (header.alg !== 'HS256') return null;
  for (const name in header) if (!PLAIN_HEADER.has(name)) return null;
  const first = token.indexOf('.');
  const last = token.lastIndexOf('.');
  if (first < 0 || last === first || token.indexOf('.', first + 1) !== last) return null;
  const payloadSegment = token.slice(first + 1, last);
  if (!SEGMENT.test(payloadSegment)) return null;
  const expected = Buffer.from(createHmac('sha256', key).update(token.slice(0, last)).digest('base64url'));
  const given = Buffer.from(token.slice(last + 1));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(payloadSegment, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!isPlainObject(payload)) return null;
  const now = Math.floor(Date.now() / 1000);
  const { iat, nbf, exp } = payload;
  if (iat !== undefined && typeof iat !== 'number') return null;
  if (nbf !== undefined && (typeof nbf !== 'number' || nbf > now)) return null;
  if (exp !== undefined && (typeof exp !== 'number' || exp <= now)) return null;
  return payload;
}

/**
 * The compact JWS jose's SignJWT(claims).setProtectedHeader(header).sign(key) makes for HS256, byte for
 * byte (JSON.stringify of the header and the claims, base64url, HMAC-SHA256 of both): signing is on
 * every token response, and jose's layers cost as much again as the HMAC.
 */
export function signHs256(header: Record<string, unknown>, claims: object, key: KeyObject): string {
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

// PKCE (REFERENCE §4.6): the code_challenge parameters an email flow may carry, and the verifier check
// at the code exchange. A flow with a challenge stores a flow_state row and 'pkce_'-prefixed link tokens.
import { createHash } from 'node:crypto';
import { badRequest } from '../errors.js';
import { safeEqual } from '../crypto/tokens.js';

export interface PkceParams { codeChallenge: string; method: 's256' | 'plain' }

/** The body's PKCE parameters, validated; null when the request does not use PKCE. */
export function readPkceParams(body: Record<string, unknown>): PkceParams | null {
  const challenge = typeof body.code_challenge === 'string' ? body.code_challenge : '';
  const method = typeof body.code_challenge_method === 'string' ? body.code_challenge_method : '';
  if (!challenge && !method) return null;
  if (!challenge || !method) throw badRequest('PKCE flow requires code_challenge_method and code_challenge');
  const lower = method.toLowerCase();
  if (lower !== 's256' && lower !== 'plain') throw badRequest(`code challenge method not supported: ${method}`);
  if (challenge.length < 43 || challenge.length > 128) throw badRequest('code challenge has to be between 43 and 128 characters');
  if (!/^[a-zA-Z._~0-9-]+$/.test(challenge)) {
    throw badRequest('code challenge can only contain alphanumeric characters, hyphens, periods, underscores and tildes');
  }
  return { codeChallenge: challenge, method: lower };
}

/** Constant-time check of a code_verifier against the stored challenge. */
export function verifierMatches(challenge: string, method: 's256' | 'plain', verifier: string): boolean {
  const computed = method === 's256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
  return safeEqual(computed, challenge);
}

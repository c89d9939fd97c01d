// PKCE (docs/tokens-and-sessions.md#pkce-flow-state): the code_challenge parameters an email flow may carry, and the verifier check
// at the code exchange. A flow with a challenge stores a flow_state row and 'pkce_'-prefixed link tokens.
import { createHash } from 'node:crypto';
import { apiError } from '../errors.js';
import { safeEqual } from '../crypto/tokens.js';

/** A body's PKCE fields as the schema (PKCE_FIELDS) leaves them. */
export interface PkceBody {
  code_challenge?: string | null;
  code_challenge_method?: string | null;
}

export interface PkceParams {
  codeChallenge: string;
  method: 's256' | 'plain';
}

/**
 * The PKCE fields of a route's body schema. Strings (null read as absent, as auth-js sends them outside a
 * PKCE flow); another type is refused naming the field, where the original cannot decode the body
 * (docs/differences.md), rather than read as no PKCE and the flow silently made implicit.
 */
export const PKCE_FIELDS = { code_challenge: 'string', code_challenge_method: 'string' } as const;

/** The body's PKCE parameters, validated; null when the request does not use PKCE. */
export function readPkceParams(body: PkceBody): PkceParams | null {
  const challenge = body.code_challenge ?? '';
  const method = body.code_challenge_method ?? '';
  if (!challenge && !method) return null;
  if (!challenge || !method) throw apiError('pkce_params_incomplete');
  if (challenge.length < 43 || challenge.length > 128) throw apiError('pkce_challenge_length');
  if (!/^[a-zA-Z._~0-9-]+$/.test(challenge)) {
    throw apiError('pkce_challenge_characters');
  }
  // The method last, as the original reads it when it creates the flow (docs/differences.md: the email routes refuse it here).
  return { codeChallenge: challenge, method: knownMethod(method) };
}

/** A method the flow can store, in any case; anything else refused (docs/differences.md). */
function knownMethod(method: string): PkceParams['method'] {
  const lower = method.toLowerCase();
  if (lower !== 's256' && lower !== 'plain') throw apiError('pkce_method_unsupported');
  return lower;
}

/**
 * PUT /user's PKCE parameters, read as the original reads them there: only for an email change that is
 * mailed, a non-empty challenge meaning PKCE and stored as given (no length or character checks, and a
 * method without a challenge ignored). The method must still be one we know (docs/differences.md).
 */
export function emailChangePkce(body: PkceBody): PkceParams | null {
  const challenge = body.code_challenge ?? '';
  if (!challenge) return null;
  return { codeChallenge: challenge, method: knownMethod(body.code_challenge_method ?? '') };
}

/** Constant-time check of a code_verifier against the stored challenge. */
export function verifierMatches(challenge: string, method: 's256' | 'plain', verifier: string): boolean {
  const computed = method === 's256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
  return safeEqual(computed, challenge);
}

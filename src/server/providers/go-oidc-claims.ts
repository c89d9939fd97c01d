// What the original's verifier (go-oidc's IDTokenVerifier) reads from an id_token's payload before any
// provider's reader runs: its own struct of iss, sub, aud, exp, iat, nbf, nonce and at_hash, decoded by
// Go's encoding/json (go-json-fields.ts). So a claim's name matches ignoring case (`SUB` is the subject,
// `Exp` the expiry, `ISS` the issuer that is checked), and a value its field cannot take fails the
// verification as a whole, before `sub` or `aud` are looked at: `aud` a number, `sub` a number, `exp` a
// boolean or null.
import { fieldValues, isJsonNumberText, underNames } from './go-json-fields.js';

/** The claims as go-oidc decodes them; times in whole seconds since the epoch. */
export interface VerifierClaims {
  iss: string;
  sub: string;
  aud: string[];
  /** absent: Go's zero time, long past */
  exp: number | null;
  /** the last non-null `nbf`, or none (a null one clears the pointer field) */
  nbf: number | null;
  nonce: string;
  atHash: string;
}

export type VerifierReading =
  | { claims: VerifierClaims; payload: Record<string, unknown>; misfit: null }
  | { claims: null; payload: Record<string, unknown>; misfit: string };

const NAMES = ['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'nonce', 'at_hash'];

class Misfit extends Error {}

/**
 * The payload as go-oidc decodes it: its claims, or the first that does not fit (`misfit`); and the
 * payload with each of those claims under its own name (from keys of any case), for the readers after it.
 */
export function readVerifierClaims(payload: Record<string, unknown>): VerifierReading {
  const named = underNames(payload, NAMES);
  try {
    const claims: VerifierClaims = {
      iss: text(payload, 'iss'),
      sub: text(payload, 'sub'),
      aud: audience(payload),
      exp: time(payload, 'exp', false),
      nbf: time(payload, 'nbf', true),
      nonce: text(payload, 'nonce'),
      atHash: text(payload, 'at_hash'),
    };
    time(payload, 'iat', false);
    return { claims, payload: named, misfit: null };
  } catch (err) {
    if (err instanceof Misfit) return { claims: null, payload: named, misfit: err.message };
    throw err;
  }
}

/** Every key filling the field is assigned in turn; the last stays. `decode` maps one value (throws Misfit). */
function assigned<T>(payload: Record<string, unknown>, name: string, initial: T, decode: (value: unknown, now: T) => T): T {
  let field = initial;
  for (const value of fieldValues(payload, name)) field = decode(value, field);
  return field;
}

/** A string field: null leaves it as it was. */
function text(payload: Record<string, unknown>, name: string): string {
  return assigned(payload, name, '', (value, now) => {
    if (value === null) return now;
    if (typeof value !== 'string') throw new Misfit(name);
    return value;
  });
}

/** go-oidc's audience: a string, or a list of strings (a null in it reads as ""); null itself reads as [""]. */
function audience(payload: Record<string, unknown>): string[] {
  return assigned<string[]>(payload, 'aud', [], (value) => {
    if (value === null) return [''];
    if (typeof value === 'string') return [value];
    if (Array.isArray(value) && value.every((a) => a === null || typeof a === 'string')) return value.map((a: string | null) => a ?? '');
    throw new Misfit('aud');
  });
}

/**
 * go-oidc's jsonTime: a number, or a string holding a JSON number (a json.Number takes either), cut to
 * whole seconds; a value past int64's range converts as Go's float conversion does on amd64 (to its
 * least value, long past). A null fails a plain field (exp, iat) and clears a pointer one (nbf).
 */
function time(payload: Record<string, unknown>, name: string, pointer: boolean): number | null {
  return assigned<number | null>(payload, name, null, (value) => {
    if (value === null && pointer) return null;
    const seconds = typeof value === 'number' ? value : typeof value === 'string' && isJsonNumberText(value) ? Number(value) : NaN;
    if (!Number.isFinite(seconds)) throw new Misfit(name);
    return Math.abs(seconds) < 2 ** 63 ? Math.trunc(seconds) : -(2 ** 63);
  });
}

// The WebAuthn relying party this service acts as, from WEBAUTHN_RP_* (docs/passkeys.md#settings). Shared by
// passkeys and WebAuthn MFA factors, as in the original.
import type { Config } from '../config/types.js';
import { apiError } from '../errors.js';
import { rpIdProblem } from './rp-id.js';

export interface RelyingParty {
  /** the domain credentials are scoped to; authenticators sign its SHA-256 (rpIdHash) */
  id: string;
  name: string;
  /** the origins a ceremony may run on (clientDataJSON.origin) */
  origins: string[];
  /** how long a challenge may be answered (not the options' `timeout`: CEREMONY_TIMEOUT_MS) */
  challengeTtlSeconds: number;
}

/**
 * The `timeout` of every ceremony's options: 5 minutes, the original's library's default, whatever
 * WEBAUTHN_CHALLENGE_EXPIRY_DURATION is, as the original sends it (docs/passkeys.md#challenges).
 */
export const CEREMONY_TIMEOUT_MS = 300_000;

/**
 * Throws 500 webauthn_not_configured, as the original fails, when a setting is empty or the relying party
 * id is one the original's library refuses: the service then started with a warning (config/cross-field.ts,
 * config/original-corrections.ts). Each ceremony asks for it before it reads or writes anything. The
 * display name is needed only to offer a new credential (`registering`), as the original's library needs it
 * only there: sign-ins with passkeys already registered go on without it.
 */
export function relyingParty(config: Config, { registering = false } = {}): RelyingParty {
  const { rpId, rpDisplayName, rpOrigins } = config.webauthn;
  if (!rpId || rpOrigins.length === 0 || rpIdProblem(rpId)) throw apiError('webauthn_not_configured');
  if (registering && !rpDisplayName) throw apiError('webauthn_not_configured');
  return {
    id: config.webauthn.rpId,
    name: config.webauthn.rpDisplayName,
    origins: config.webauthn.rpOrigins.map(comparableOrigin),
    challengeTtlSeconds: config.webauthn.challengeExpirySeconds,
  };
}

/**
 * A WEBAUTHN_RP_ORIGINS entry as a browser writes the origin it compares with it: the original's library
 * compares an http(s) origin by scheme and host, case aside, a default port and a path ignored, so
 * `https://App.example.com:443/` there is `https://app.example.com`. Other entries (an Android app's
 * `android:apk-key-hash:…`) are compared as written, there as here.
 */
function comparableOrigin(entry: string): string {
  const url = /^https?:\/\//i.test(entry) && URL.canParse(entry) ? new URL(entry) : null;
  return url ? url.origin : entry;
}

/**
 * The public-key algorithms offered and accepted (COSE ids), those the original's WebAuthn library offers
 * and accepts, in its order of preference: ES256, ES384, ES512, RS256, RS384, RS512, PS256, PS384, PS512,
 * EdDSA. An authenticator picks the first it supports, so a key limited to, say, ES384 registers here as
 * it does there.
 */
export const ALGORITHMS = [-7, -35, -36, -257, -258, -259, -37, -38, -39, -8];

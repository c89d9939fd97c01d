// The authentication ceremony (navigator.credentials.get) through @simplewebauthn/server: options with a
// fresh challenge, and verification of an assertion against that challenge, the relying party, the
// credential's stored public key and its backup-eligibility flag; the signature counter is advisory, as in
// the original (below).
// The library is imported on first use, not with the route table: loading it was a quarter of an HTTP
// thread's start-up, and only the WebAuthn and passkey routes need it (docs/architecture.md#threads).
import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { ChallengeSession } from '../../db/webauthn-challenges.js';
import { CEREMONY_TIMEOUT_MS, type RelyingParty } from './relying-party.js';

/** `allow` empty: a discoverable-credential ceremony, where the authenticator picks the credential and names its user. */
export async function authenticationOptions(
  rp: RelyingParty,
  allow: Array<{ credentialId: Buffer; transports: string[] }> = [],
): Promise<{ options: PublicKeyCredentialRequestOptionsJSON; session: ChallengeSession }> {
  const { generateAuthenticationOptions } = await import('@simplewebauthn/server');
  const options = await generateAuthenticationOptions({
    rpID: rp.id,
    allowCredentials: allow.map((c) => ({ id: c.credentialId.toString('base64url'), transports: c.transports })),
    timeout: CEREMONY_TIMEOUT_MS,
    userVerification: 'preferred',
  });
  return { options, session: { challenge: options.challenge, user_verification: 'preferred' } };
}

export interface StoredCredential {
  credentialId: Buffer;
  publicKey: Buffer;
  signCount: number;
  transports: string[];
  /** the BE flag the credential registered with: an assertion must carry the same (WebAuthn §7.2 step 17) */
  backupEligible: boolean;
}

export type AssertionOutcome = { ok: true; newSignCount: number; backedUp: boolean } | { ok: false; detail: string };

/**
 * Checks the assertion. A signature counter that does not move past the stored one (what a cloned
 * authenticator would send) does not refuse it: the original's library only flags that case and signs the
 * user in, keeping the stored counter. So the library is shown a stored counter of 0, which makes it skip
 * that check, and newSignCount never goes below the stored one. An assertion whose backup-eligible flag is
 * not the one registered is refused, as the original's library refuses it.
 */
export async function verifyAssertion(
  rp: RelyingParty,
  session: ChallengeSession,
  response: AuthenticationResponseJSON,
  stored: StoredCredential,
): Promise<AssertionOutcome> {
  // Outside the try: a library that cannot load is the service's fault (a 500), not a refused assertion.
  const { verifyAuthenticationResponse } = await import('@simplewebauthn/server');
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: session.challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      credential: {
        id: stored.credentialId.toString('base64url'),
        publicKey: new Uint8Array(stored.publicKey),
        counter: 0, // see above: the counter is judged here, not by the library
        transports: stored.transports,
      },
      requireUserVerification: session.user_verification === 'required',
    });
    if (!result.verified) return { ok: false, detail: 'signature not verified' };
    const info = result.authenticationInfo;
    if ((info.credentialDeviceType === 'multiDevice') !== stored.backupEligible)
      return { ok: false, detail: 'backup eligible flag changed' };
    return { ok: true, newSignCount: Math.max(stored.signCount, info.newCounter), backedUp: info.credentialBackedUp };
  } catch (err) {
    return { ok: false, detail: (err as Error).message };
  }
}

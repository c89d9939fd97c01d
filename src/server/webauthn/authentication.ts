// The authentication ceremony (navigator.credentials.get) through @simplewebauthn/server: options with a
// fresh challenge, and verification of an assertion against that challenge, the relying party, the
// credential's stored public key and its signature counter.
// The library is imported on first use, not with the route table: loading it was a quarter of an HTTP
// thread's start-up, and only the WebAuthn and passkey routes need it (docs/architecture.md#threads).
import type { AuthenticationResponseJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';
import type { ChallengeSession } from '../../db/webauthn-challenges.js';
import type { RelyingParty } from './relying-party.js';

/** `allow` empty: a discoverable-credential ceremony, where the authenticator picks the credential and names its user. */
export async function authenticationOptions(
  rp: RelyingParty,
  allow: Array<{ credentialId: Buffer; transports: string[] }> = [],
): Promise<{ options: PublicKeyCredentialRequestOptionsJSON; session: ChallengeSession }> {
  const { generateAuthenticationOptions } = await import('@simplewebauthn/server');
  const options = await generateAuthenticationOptions({
    rpID: rp.id,
    allowCredentials: allow.map((c) => ({ id: c.credentialId.toString('base64url'), transports: c.transports })),
    timeout: rp.challengeTtlSeconds * 1000,
    userVerification: 'preferred',
  });
  return { options, session: { challenge: options.challenge, user_verification: 'preferred' } };
}

export interface StoredCredential {
  credentialId: Buffer;
  publicKey: Buffer;
  signCount: number;
  transports: string[];
}

export type AssertionOutcome = { ok: true; newSignCount: number; backedUp: boolean } | { ok: false; detail: string };

/**
 * Checks the assertion. A signature counter that does not move past the stored one (a replayed or cloned
 * authenticator's assertion) is refused by the library; the caller stores the new counter atomically.
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
        counter: stored.signCount,
        transports: stored.transports,
      },
      requireUserVerification: session.user_verification === 'required',
    });
    if (!result.verified) return { ok: false, detail: 'signature not verified' };
    return { ok: true, newSignCount: result.authenticationInfo.newCounter, backedUp: result.authenticationInfo.credentialBackedUp };
  } catch (err) {
    return { ok: false, detail: (err as Error).message };
  }
}

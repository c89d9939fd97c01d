// The registration ceremony (navigator.credentials.create) through @simplewebauthn/server: options with a
// fresh challenge, and verification of the attestation the authenticator returned against that challenge,
// the relying party id and the allowed origins.
// The library is imported on first use, not with the route table (as in authentication.ts).
import type { PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/server';
import type { ChallengeSession } from '../../db/webauthn-challenges.js';
import { ALGORITHMS, CEREMONY_TIMEOUT_MS, type RelyingParty } from './relying-party.js';
import { asRegistrationResponse } from './response-shape.js';

export interface RegistrationUser {
  /** the user handle: the user id's text, as the original (WebAuthnID = the UUID string's bytes) */
  id: string;
  name: string;
  displayName: string;
}

export async function registrationOptions(
  rp: RelyingParty,
  user: RegistrationUser,
  exclude: Array<{ credentialId: Buffer; transports: string[] }>,
  /**
   * Passkeys must be discoverable ('required'). A second factor is not asked to be ('discouraged', the
   * browser's default, as the original leaves it): a discoverable credential takes one of a security key's
   * few slots and usually its PIN, and the factor's challenges name their credentials anyway.
   */
  residentKey: 'required' | 'discouraged' = 'required',
): Promise<{ options: PublicKeyCredentialCreationOptionsJSON; session: ChallengeSession }> {
  const { generateRegistrationOptions } = await import('@simplewebauthn/server');
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userID: Buffer.from(user.id, 'utf8'),
    userName: user.name,
    userDisplayName: user.displayName,
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: 'none',
    excludeCredentials: exclude.map((c) => ({ id: c.credentialId.toString('base64url'), transports: c.transports })),
    // Passkeys are discoverable credentials: sign-in starts without a user name, the authenticator finds them.
    authenticatorSelection: { residentKey, userVerification: 'preferred' },
    supportedAlgorithmIDs: ALGORITHMS,
  });
  return { options, session: { challenge: options.challenge, user_verification: 'preferred' } };
}

export interface RegisteredCredential {
  credentialId: Buffer;
  publicKey: Buffer;
  signCount: number;
  transports: string[];
  attestationType: string;
  /**
   * The attested AAGUID as the authenticator sent it, the all-zero one included (what "none" attestation
   * usually carries): the original stores that too, so rows and factor JSON read the same.
   */
  aaguid: string;
  backupEligible: boolean;
  backedUp: boolean;
}

export type RegistrationOutcome =
  { ok: true; credential: RegisteredCredential } | { ok: false; reason: 'malformed' | 'rejected'; detail?: string };

export async function verifyRegistration(rp: RelyingParty, session: ChallengeSession, raw: unknown): Promise<RegistrationOutcome> {
  const response = await asRegistrationResponse(raw);
  if (!response) return { ok: false, reason: 'malformed' };
  // Outside the try, as in verifyAssertion: a library that cannot load is not a rejected attestation.
  const { verifyRegistrationResponse } = await import('@simplewebauthn/server');
  try {
    const result = await verifyRegistrationResponse({
      response,
      expectedChallenge: session.challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserPresence: true,
      requireUserVerification: session.user_verification === 'required',
      supportedAlgorithmIDs: ALGORITHMS,
    });
    if (!result.verified) return { ok: false, reason: 'rejected' };
    const info = result.registrationInfo;
    const credentialId = Buffer.from(info.credential.id, 'base64url');
    // The attestation covers the attested ID, which is stored; the ID the client reports (the library has
    // checked id against rawId) must be the same one, or the client named a credential it did not create.
    if (!credentialId.equals(Buffer.from(response.rawId, 'base64url')))
      return { ok: false, reason: 'rejected', detail: 'the reported credential ID is not the attested one' };
    return {
      ok: true,
      credential: {
        credentialId,
        publicKey: Buffer.from(info.credential.publicKey),
        signCount: info.credential.counter,
        transports: response.response.transports ?? [],
        attestationType: info.fmt,
        aaguid: info.aaguid,
        backupEligible: info.credentialDeviceType === 'multiDevice',
        backedUp: info.credentialBackedUp,
      },
    };
  } catch (err) {
    // The library throws on every failed check (challenge, origin, rp id hash, flags, signature, CBOR...).
    return { ok: false, reason: 'rejected', detail: (err as Error).message };
  }
}

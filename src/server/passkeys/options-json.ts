// The WebAuthn options a passkey ceremony answers, in the original's shape (docs/api.md#post-passkeysregistrationoptions):
// the library here also writes `hints: []`, `extensions.credProps`, `requireResidentKey` and empty credential
// lists, which the original leaves out, and transports in `excludeCredentials`, where the original names
// each passkey by id alone. Field order follows the original's too.
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/server';

export function passkeyCreationOptionsJson(options: PublicKeyCredentialCreationOptionsJSON): Record<string, unknown> {
  const out: Record<string, unknown> = {
    rp: options.rp,
    user: options.user,
    challenge: options.challenge,
    pubKeyCredParams: options.pubKeyCredParams,
    timeout: options.timeout,
  };
  const exclude = options.excludeCredentials ?? [];
  if (exclude.length > 0) out.excludeCredentials = exclude.map((c) => ({ type: c.type, id: c.id }));
  const selection = options.authenticatorSelection;
  out.authenticatorSelection = { residentKey: selection?.residentKey, userVerification: selection?.userVerification };
  out.attestation = options.attestation;
  return out;
}

/** A passkey sign-in names no credential (discoverable), so there is never an `allowCredentials`. */
export function passkeyRequestOptionsJson(options: PublicKeyCredentialRequestOptionsJSON): Record<string, unknown> {
  return { challenge: options.challenge, timeout: options.timeout, rpId: options.rpId, userVerification: options.userVerification };
}

// WebAuthn factors (docs/passkeys.md#webauthn-as-a-second-factor): enrolment makes an unverified factor;
// its first challenge answers creation options ("create") and verifying it stores the authenticator's
// credential; later challenges answer request options ("request") for that credential, and verifying an
// assertion raises the session to aal2 with amr "mfa/webauthn". The ceremonies are the passkeys' own
// (src/server/webauthn/), with the same relying party settings.
import { apiError } from '../../errors.js';
import { advanceFactorCounter, saveFactorCredential, verifiedFactorCredentials, type FactorCredential } from '../../../db/mfa-webauthn.js';
import type { ChallengeSession } from '../../../db/webauthn-challenges.js';
import type { JsonObject } from '../../http/types.js';
import { relyingParty } from '../../webauthn/relying-party.js';
import { registrationOptions, verifyRegistration } from '../../webauthn/registration.js';
import { authenticationOptions, verifyAssertion } from '../../webauthn/authentication.js';
import { asAuthenticationResponse, asRegistrationResponse } from '../../webauthn/response-shape.js';
import type { FactorType } from './factor-type.js';

/** mfa_challenges.web_authn_session_data: the ceremony's challenge and which ceremony it is. */
type FactorCeremony = ChallengeSession & { type: 'create' | 'request' };

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

export const webauthn: FactorType = {
  name: 'webauthn',
  amrMethod: 'mfa/webauthn',
  disabled: { enroll: 'mfa_webauthn_enroll_not_enabled', verify: 'mfa_webauthn_verify_not_enabled' },
  failed: 'mfa_webauthn_verification_failed',
  needsCode: false,
  switches: (ctx) => ctx.config.mfa.webauthn,

  // Nothing to hand out yet: the credential is made by the first challenge's "create" ceremony.
  enroll: () => Promise.resolve({ columns: {}, answer: {} }),

  async challenge({ ctx, user, factor, q }) {
    const rp = relyingParty(ctx.config);
    if (factor.status === 'unverified') {
      const existing = await verifiedFactorCredentials(q, user.id);
      const name = user.email || user.phone || '';
      const { options, session } = await registrationOptions(
        rp,
        { id: user.id, name, displayName: name },
        existing.map((c) => ({ credentialId: Buffer.from(c.credential_id, 'base64url'), transports: c.transports })),
        'preferred',
      );
      const ceremony: FactorCeremony = { ...session, type: 'create' };
      return {
        columns: { webAuthnSessionData: ceremony },
        answer: { webauthn: { type: 'create', credential_options: { publicKey: options } } },
      };
    }
    const credential = factor.web_authn_credential as FactorCredential;
    const { options, session } = await authenticationOptions(rp, [
      { credentialId: Buffer.from(credential.credential_id, 'base64url'), transports: credential.transports },
    ]);
    const ceremony: FactorCeremony = { ...session, type: 'request' };
    return {
      columns: { webAuthnSessionData: ceremony },
      answer: { webauthn: { type: 'request', credential_options: { publicKey: options } } },
    };
  },

  checkVerifyBody(ctx, body) {
    const params = body.webauthn;
    if (!isObject(params)) throw apiError('mfa_webauthn_params_required');
    if (params.type !== 'create' && params.type !== 'request') throw apiError('mfa_webauthn_type');
    if (params.credential_response === undefined || params.credential_response === null) throw apiError('mfa_webauthn_response_required');
    relyingParty(ctx.config); // unset relying-party settings refuse here too, before the challenge is judged
  },

  async verify({ ctx, req, factor, challenge, body }) {
    const params = body.webauthn as JsonObject; // checked by checkVerifyBody
    const rp = relyingParty(ctx.config);
    // Parsed as the type it claims before anything is judged: a response that is no credential at all is
    // the request's fault, as the original answers it.
    const parse = params.type === 'create' ? asRegistrationResponse : asAuthenticationResponse;
    if (!parse(params.credential_response)) throw apiError('mfa_webauthn_response_invalid');
    const ceremony = challenge.web_authn_session_data as FactorCeremony | null;
    if (!ceremony || ceremony.type !== params.type) throw apiError('mfa_webauthn_verification_failed');
    const refused = (detail?: string): never => {
      ctx.log.info({ request_id: req.requestId, factor_id: factor.id, detail }, 'webauthn factor verification refused');
      throw apiError('mfa_webauthn_verification_failed');
    };

    if (ceremony.type === 'create') {
      const outcome = await verifyRegistration(rp, ceremony, params.credential_response);
      if (!outcome.ok) return refused(outcome.detail ?? outcome.reason);
      const c = outcome.credential;
      const stored: FactorCredential = {
        credential_id: c.credentialId.toString('base64url'),
        public_key: c.publicKey.toString('base64url'),
        sign_count: c.signCount,
        transports: c.transports,
        attestation_type: c.attestationType,
        backup_eligible: c.backupEligible,
        backed_up: c.backedUp,
      };
      return { commit: (q) => saveFactorCredential(q, factor.id, stored, c.aaguid, { type: 'create', challenge_id: challenge.id }) };
    }

    const stored = factor.web_authn_credential as FactorCredential | null;
    const response = asAuthenticationResponse(params.credential_response)!; // parsed above
    if (!stored) return refused('the factor has no credential');
    if (response.rawId !== stored.credential_id && response.id !== stored.credential_id) return refused("not this factor's credential");
    const outcome = await verifyAssertion(rp, ceremony, response, {
      credentialId: Buffer.from(stored.credential_id, 'base64url'),
      publicKey: Buffer.from(stored.public_key, 'base64url'),
      signCount: stored.sign_count,
      transports: stored.transports,
      backupEligible: stored.backup_eligible,
    });
    if (!outcome.ok) return refused(outcome.detail);
    return {
      commit: (q) =>
        advanceFactorCounter(q, factor.id, stored.sign_count, outcome.newSignCount, { type: 'request', challenge_id: challenge.id }),
    };
  },
};

// WebAuthn factors (docs/passkeys.md#webauthn-as-a-second-factor): enrolment makes an unverified factor;
// its first challenge answers creation options ("create") and verifying it stores the authenticator's
// credential; later challenges answer request options ("request") that allow the credential of any of the
// user's verified WebAuthn factors, as the original's, and an assertion by any of them raises the session
// to aal2 with amr "mfa/webauthn", recorded against the challenged factor. The ceremonies are the
// passkeys' own (src/server/webauthn/), with the same relying party settings.
import { apiError } from '../../errors.js';
import { recordFactorCeremony, saveFactorCredential, verifiedFactorCredentials, type FactorCredential } from '../../../db/mfa-webauthn.js';
import type { ChallengeRow } from '../../../db/mfa-challenges.js';
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

/**
 * mfa_factors.last_webauthn_challenge_data after a successful verification, in the original's shape: the
 * challenge row (its JSON names), the ceremony's type and the credential response. Two parts stay ours:
 * the challenge's session data is our ceremony (above), and the response is kept as the client sent it,
 * where the original keeps its library's parsed form of it.
 */
function lastCeremony(challenge: ChallengeRow, type: FactorCeremony['type'], credentialResponse: unknown): JsonObject {
  return {
    challenge: {
      challenge_id: challenge.id,
      factor_id: challenge.factor_id,
      created_at: challenge.created_at.toJSON(),
      ip_address: challenge.ip_address,
      web_authn_session_data: challenge.web_authn_session_data,
    },
    type,
    credential_response: credentialResponse,
  };
}

export const webauthn: FactorType = {
  name: 'webauthn',
  amrMethod: 'mfa/webauthn',
  disabled: { enroll: 'mfa_webauthn_enroll_not_enabled', verify: 'mfa_webauthn_verify_not_enabled' },
  failed: 'mfa_webauthn_verification_failed',
  needsCode: false,
  spendsChallengeBy: 'deleting',
  readsChallengeBody: true,
  auditsTypeAtEnrolment: true,
  switches: (ctx) => ctx.config.mfa.webauthn,

  // Nothing to hand out yet: the credential is made by the first challenge's "create" ceremony.
  enroll: () => Promise.resolve({ columns: {}, answer: {} }),

  async challenge({ ctx, user, factor, q }) {
    const rp = relyingParty(ctx.config, { registering: factor.status === 'unverified' });
    if (factor.status === 'unverified') {
      const existing = await verifiedFactorCredentials(q, user.id);
      const name = user.email || user.phone || '';
      const { options, session } = await registrationOptions(
        rp,
        { id: user.id, name, displayName: name },
        existing.map((c) => ({ credentialId: Buffer.from(c.credential_id, 'base64url'), transports: c.transports })),
        'discouraged',
      );
      const ceremony: FactorCeremony = { ...session, type: 'create' };
      return {
        columns: { webAuthnSessionData: ceremony },
        answer: { webauthn: { type: 'create', credential_options: { publicKey: options } } },
      };
    }
    // Every verified WebAuthn factor's credential, as the original offers them: the user may answer with any.
    const credentials = await verifiedFactorCredentials(q, user.id);
    const { options, session } = await authenticationOptions(
      rp,
      credentials.map((c) => ({ credentialId: Buffer.from(c.credential_id, 'base64url'), transports: c.transports })),
    );
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

  async verify({ ctx, req, user, factor, challenge, body }) {
    const params = body.webauthn as JsonObject; // checked by checkVerifyBody
    const rp = relyingParty(ctx.config);
    // Parsed as the type it claims before anything is judged: a response that is no credential at all is
    // the request's fault, as the original answers it.
    const parse = params.type === 'create' ? asRegistrationResponse : asAuthenticationResponse;
    if (!(await parse(params.credential_response))) throw apiError('mfa_webauthn_response_invalid');
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
      const last = lastCeremony(challenge, 'create', params.credential_response);
      return { commit: (q) => saveFactorCredential(q, factor.id, stored, c.aaguid, last) };
    }

    const response = (await asAuthenticationResponse(params.credential_response))!; // parsed above
    // Any of the user's verified WebAuthn factors may answer, as the original's check accepts any of them.
    const credentials = await verifiedFactorCredentials(ctx.db, user.id);
    const stored = credentials.find((c) => c.credential_id === response.rawId || c.credential_id === response.id);
    if (!stored) return refused("not a credential of the user's verified factors");
    const outcome = await verifyAssertion(rp, ceremony, response, {
      credentialId: Buffer.from(stored.credential_id, 'base64url'),
      publicKey: Buffer.from(stored.public_key, 'base64url'),
      signCount: stored.sign_count,
      transports: stored.transports,
      backupEligible: stored.backup_eligible,
    });
    if (!outcome.ok) return refused(outcome.detail);
    // The challenged factor is the one verified (its last ceremony, the session's factor_id), whichever
    // factor's credential answered, as in the original.
    const last = lastCeremony(challenge, 'request', params.credential_response);
    return { commit: (q) => recordFactorCeremony(q, factor.id, last) };
  },
};

// POST /passkeys/authentication/options and /verify (docs/passkeys.md#signing-in-with-a-passkey): sign-in
// with a discoverable credential. Options name no user; the assertion's user handle and credential id lead
// to the stored passkey, whose public key checks it (its signature counter is recorded, not enforced).
// Success is a sign-in like any other: a session with amr "passkey" and the usual token response.
import type { AuthenticationResponseJSON } from '@simplewebauthn/server';
import { apiError } from '../errors.js';
import { findUserById, lockLiveUserById } from '../../db/users.js';
import { insertChallenge } from '../../db/webauthn-challenges.js';
import { findCredentialByCredentialId, recordCredentialUse, type WebAuthnCredentialRow } from '../../db/webauthn-credentials.js';
import type { Handler, ApiRequest } from '../http/types.js';
import type { AppContext } from '../context.js';
import { CANONICAL_UUID as UUID } from '../uuid-text.js';
import { issueSession, issuingTx } from '../sessions/issue.js';
import { actorOf } from '../users/actor.js';
import { isBanned } from '../users/user-json.js';
import { relyingParty } from '../webauthn/relying-party.js';
import { authenticationOptions, verifyAssertion } from '../webauthn/authentication.js';
import { asAuthenticationResponse, userHandleOf } from '../webauthn/response-shape.js';
import { takeChallenge, type ChallengeAnswerBody } from '../passkeys/challenge-answer.js';
import { passkeyRequestOptionsJson } from '../passkeys/options-json.js';

export const passkeyAuthenticationOptions: Handler = async (_req, ctx) => {
  const rp = relyingParty(ctx.config);
  const { options, session } = await authenticationOptions(rp);
  const challenge = await insertChallenge(ctx.db, { userId: null, type: 'authentication', session, ttlSeconds: rp.challengeTtlSeconds });
  const expiresAt = Math.floor(challenge.expires_at.getTime() / 1000);
  return { body: { challenge_id: challenge.id, options: passkeyRequestOptionsJson(options), expires_at: expiresAt } };
};

export const passkeyAuthenticationVerify: Handler<ChallengeAnswerBody> = async (req, ctx) => {
  const rp = relyingParty(ctx.config);
  const { challenge, credential } = await takeChallenge(ctx.db, req.body(), 'authentication', null);
  const response = await asAuthenticationResponse(credential);
  if (!response) throw apiError('webauthn_response_invalid');
  const stored = await findPasskey(ctx, response);
  if (!stored) return refused(req, ctx, 'no such passkey for this user handle');
  const outcome = await verifyAssertion(rp, challenge.session_data, response, {
    credentialId: stored.credential_id,
    publicKey: stored.public_key,
    signCount: Number(stored.sign_count),
    transports: stored.transports,
    backupEligible: stored.backup_eligible,
  });
  if (!outcome.ok) return refused(req, ctx, outcome.detail);
  const user = await findUserById(ctx.db, stored.user_id);
  if (!user || user.deleted_at) return refused(req, ctx, 'user gone');
  if (user.email && !user.email_confirmed_at) throw apiError('passkey_email_not_confirmed');
  if (user.phone && !user.phone_confirmed_at) throw apiError('passkey_phone_not_confirmed');
  if (isBanned(user)) throw apiError('user_banned');
  const body = await issuingTx(
    ctx,
    async (c) => {
      // The user's row first, as a deletion takes it before its cascade reaches the passkey: the other way
      // round, a sign-in beside the user's deletion deadlocked (a 500). Gone meanwhile: as gone above.
      if (!(await lockLiveUserById(c, user.id))) return refused(req, ctx, 'user gone');
      // Deleted by its owner since it was read: as if it had never been found.
      if (!(await recordCredentialUse(c, stored.id, outcome.newSignCount))) return refused(req, ctx, 'passkey deleted');
      return issueSession(ctx, c, user, 'passkey', req, {
        // With the client's address, as the original audits a passkey sign-in (not other sign-ins).
        audit: { actor: actorOf(user), action: 'login', traits: { passkey_id: stored.id }, ip: req.ip },
      });
    },
    req.signal,
  );
  return { body };
};

/** The passkey an assertion names: its credential id, registered to the user its user handle names. */
async function findPasskey(ctx: AppContext, response: AuthenticationResponseJSON): Promise<WebAuthnCredentialRow | null> {
  const handle = userHandleOf(response);
  if (!handle || !UUID.test(handle)) return null;
  const row = await findCredentialByCredentialId(ctx.db, Buffer.from(response.rawId, 'base64url'));
  // Compared exactly, as the original's library compares the handle's bytes with the user id's text.
  return row && row.user_id === handle ? row : null;
}

function refused(req: ApiRequest, ctx: AppContext, detail: string): never {
  ctx.log.info({ request_id: req.requestId, detail }, 'passkey sign-in refused');
  throw apiError('webauthn_verification_failed');
}

// POST /passkeys/registration/options and /verify (docs/passkeys.md#registering-a-passkey): a signed-in user
// adds a passkey. Options carry a fresh challenge kept server-side; verify checks the authenticator's
// attestation against it, the relying party id and the allowed origins, then stores the credential.
import { apiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import { lockLiveUserById } from '../../db/users.js';
import { assertSessionStillLive } from '../auth/session-still-live.js';
import { writeAudit } from '../../db/audit-log.js';
import { consumeChallenge, insertChallenge } from '../../db/webauthn-challenges.js';
import { countCredentials, insertCredential, listCredentials } from '../../db/webauthn-credentials.js';
import type { Authenticated } from '../auth/principal.js';
import type { GuardedHandler } from '../http/types.js';
import { actorOf } from '../users/actor.js';
import { relyingParty } from '../webauthn/relying-party.js';
import { registrationOptions, verifyRegistration } from '../webauthn/registration.js';
import { readChallenge, spendChallenge, type ChallengeAnswerBody } from '../passkeys/challenge-answer.js';
import { createdPasskeyJson } from '../passkeys/passkey-json.js';
import { passkeyCreationOptionsJson } from '../passkeys/options-json.js';
import { passkeyFriendlyName } from '../passkeys/friendly-name.js';
import { refuseSsoUser, requireManagementAal } from '../passkeys/management-checks.js';
import { requireNotAnonymous } from '../mfa/factor-access.js';

export const passkeyRegistrationOptions: GuardedHandler<Authenticated> = async (req, ctx, principal) => {
  const rp = relyingParty(ctx.config, { registering: true });
  requireNotAnonymous(principal);
  refuseSsoUser(principal);
  await requireManagementAal(ctx.db, principal);
  const { user } = principal;
  const existing = await listCredentials(ctx.db, user.id);
  if (existing.length >= ctx.config.passkey.maxPerUser) throw apiError('too_many_passkeys');
  const name = user.email || user.phone || '';
  const metaName = user.raw_user_meta_data?.name;
  const { options, session } = await registrationOptions(
    rp,
    { id: user.id, name, displayName: typeof metaName === 'string' && metaName ? metaName : name },
    // The authenticator refuses to make a second credential for this user where one already lives.
    existing.map((c) => ({ credentialId: c.credential_id, transports: c.transports })),
  );
  const challenge = await tx(
    ctx.db,
    async (c) => {
      // A user deleted (or soft-deleted) since the bearer check would fail the challenge's foreign key: gone.
      if (!(await lockLiveUserById(c, user.id))) throw apiError('user_not_found');
      // Ended since the bearer check (another session's new password, a logout): no ceremony started for it.
      await assertSessionStillLive(c, principal.session?.id ?? null);
      return insertChallenge(c, { userId: user.id, type: 'registration', session, ttlSeconds: rp.challengeTtlSeconds });
    },
    req.signal,
  );
  const expiresAt = Math.floor(challenge.expires_at.getTime() / 1000);
  return { body: { challenge_id: challenge.id, options: passkeyCreationOptionsJson(options), expires_at: expiresAt } };
};

export const passkeyRegistrationVerify: GuardedHandler<Authenticated, ChallengeAnswerBody> = async (req, ctx, principal) => {
  const rp = relyingParty(ctx.config);
  requireNotAnonymous(principal);
  refuseSsoUser(principal);
  await requireManagementAal(ctx.db, principal);
  const { user } = principal;
  const { challenge, credential } = await readChallenge(ctx.db, req.body(), 'registration', user.id);
  const outcome = await verifyRegistration(rp, challenge.session_data, credential);
  if (!outcome.ok) {
    ctx.log.info({ request_id: req.requestId, reason: outcome.reason, detail: outcome.detail }, 'passkey registration refused');
    // A refused attestation spends the challenge, as in the original: one attempt per ceremony.
    await consumeChallenge(ctx.db, challenge.id, 'registration', user.id);
    throw apiError(outcome.reason === 'malformed' ? 'webauthn_response_invalid' : 'webauthn_verification_failed');
  }
  // Local work only (a bundled list): nothing waits on the network while the transaction below is open.
  const friendlyName = await passkeyFriendlyName(outcome.credential.aaguid);
  const created = await tx(
    ctx.db,
    async (c) => {
      // The user's row lock serialises concurrent registrations, so the limit holds. A user deleted meanwhile
      // would fail the credential's foreign key, and one soft-deleted would keep a passkey its deletion removed.
      if (!(await lockLiveUserById(c, user.id))) throw apiError('user_not_found');
      // Ended since the bearer check: a session cut off (a stolen one, by the owner's new password) adds no
      // passkey, which would outlive its end as a way back in.
      await assertSessionStillLive(c, principal.session?.id ?? null);
      // Spent with the insert: a refusal from here on rolls it back with everything else. A concurrent answer
      // to the same challenge that committed first has taken it (not found).
      await spendChallenge(c, challenge);
      if ((await countCredentials(c, user.id)) >= ctx.config.passkey.maxPerUser) throw apiError('too_many_passkeys');
      const row = await insertCredential(c, {
        userId: user.id,
        ...outcome.credential,
        friendlyName,
      });
      if (!row) throw apiError('webauthn_credential_exists');
      await writeAudit(c, req, actorOf(user), 'passkey_created', { passkey_id: row.id }, req.ip);
      return row;
    },
    req.signal,
  );
  return { body: createdPasskeyJson(created) };
};

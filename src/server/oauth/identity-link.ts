// An identity added to an existing user (docs/oauth.md#manual-linking): the audited insert every link makes,
// and what a signed-in user's manual link does to an account that has no email yet.
import type pg from 'pg';
import { apiError } from '../errors.js';
import { updateUser, type UserRow } from '../../db/users.js';
import { findIdentitiesByUser, insertIdentity } from '../../db/identities.js';
import { writeAudit } from '../../db/audit-log.js';
import { deleteOneTimeTokens } from '../../db/one-time-tokens.js';
import { actorOf } from '../users/actor.js';
import { isBanned } from '../users/user-json.js';
import type { AppContext } from '../context.js';
import { emailFromIdentities } from '../users/email-from-identities.js';
import { withProvidersOfIdentities } from '../users/providers-of-identities.js';
import { namedEmail, type Linked, type LinkRequest } from './link-request.js';
import { nowTimestamp } from '../micro-clock.js';

/** The identity inserted and audited identity_linked; app_metadata's providers re-derived (and with mergeClaims its claims join user_metadata). */
export async function addIdentity(c: pg.PoolClient, user: UserRow, r: LinkRequest, o: { mergeClaims?: boolean } = {}): Promise<UserRow> {
  const identity = await insertIdentity(c, {
    userId: user.id,
    provider: r.provider,
    providerId: r.profile.subject,
    data: r.profile.claims,
  });
  const traits = { identity_id: identity.id, provider: identity.provider, provider_id: identity.provider_id };
  await writeAudit(c, r.hookRequest, actorOf(user), 'identity_linked', traits, r.hookRequest.ip);
  return updateUser(c, user.id, {
    raw_app_meta_data: await withProvidersOfIdentities(c, user.id, user.raw_app_meta_data),
    ...(o.mergeClaims ? { raw_user_meta_data: { ...user.raw_user_meta_data, ...r.profile.claims } } : {}),
  });
}

/**
 * The identity is added to the signed-in user. One without an email takes it from its identities as the
 * original does (users/email-from-identities.ts; 400 email_exists when every address is held): confirmed
 * when the linked provider verified its address, else mailed for confirmation and refused with 422
 * email_not_confirmed after the commit. An anonymous user becomes a permanent one unless that refusal comes.
 */
export async function linkToSignedInUser(ctx: AppContext, c: pg.PoolClient, linkedTo: UserRow, r: LinkRequest): Promise<Linked> {
  let user = linkedTo;
  if (isBanned(user)) throw apiError('user_banned');
  const result = (u: UserRow, needsConfirmation = false): Linked =>
    needsConfirmation
      ? { user: u, audit: null, needsConfirmation, linked: true, refusal: 'link_email_not_confirmed' }
      : { user: u, audit: null, needsConfirmation, linked: true };
  if (user.email) return result(user);

  const patch = await emailFromIdentities(c, user, await findIdentitiesByUser(c, user.id), ctx.config.mailer.autoconfirm);
  if (!patch) throw apiError('link_email_exists');
  // The provider's claims stay in identity_data: the user's own metadata is not filled from them, as the original leaves it.
  if (!patch.email) return result(user.is_anonymous ? await updateUser(c, user.id, { ...patch, is_anonymous: false }) : user);

  user = await updateUser(c, user.id, patch);
  if (!namedEmail(r.profile)?.verified) return result(user, true);
  await deleteOneTimeTokens(c, user.id);
  return result(
    await updateUser(c, user.id, {
      email_confirmed_at: nowTimestamp(),
      is_anonymous: false,
      raw_user_meta_data: { ...user.raw_user_meta_data, email_verified: true },
    }),
  );
}

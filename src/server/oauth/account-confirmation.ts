// The two ways an external sign-in confirms an account that already exists (docs/oauth.md#linking): the
// provider verified the address of an unconfirmed account, or the invitee followed an invite link to the
// provider. Both run inside the sign-in's one transaction (oauth/linking.ts).
import type pg from 'pg';
import { apiError } from '../errors.js';
import { lockUserById, updateUser, type UserRow } from '../../db/users.js';
import { writeAudit, type AuditRequest } from '../../db/audit-log.js';
import { deleteOneTimeTokens, lockOneTimeToken } from '../../db/one-time-tokens.js';
import { findTokenByLink } from '../verify/one-time-codes.js';
import { actorOf } from '../users/actor.js';
import { deleteUnverifiedIdentities, insertIdentity } from '../../db/identities.js';
import type { ExternalProfile } from '../providers/types.js';
import { nowTimestamp } from '../micro-clock.js';

/**
 * The user's email is unconfirmed and the provider verified that very address (or an invite link's token
 * proved the mailbox): it is confirmed — after removing what an unconfirmed sign-up may have planted
 * (password, phone, unverified identities). An invited user is no exception, as in the original: its email
 * identity, which the invite created unverified, goes too, and the admin's data gives way to the claims.
 */
export async function confirmThroughProvider(
  c: pg.PoolClient,
  user: UserRow,
  provider: string,
  claims: Record<string, unknown>,
): Promise<UserRow> {
  await deleteUnverifiedIdentities(c, user.id, provider);
  // Every pending link or code goes too (the sign-up's confirmation among them), as the original's Confirm clears them.
  await deleteOneTimeTokens(c, user.id);
  return updateUser(c, user.id, {
    email_confirmed_at: nowTimestamp(),
    encrypted_password: null,
    ...(user.phone_confirmed_at ? {} : { phone: null }),
    raw_app_meta_data: onlyProviders(user.raw_app_meta_data, provider),
    // What an unconfirmed sign-up wrote into user_metadata is not trusted either: it becomes the provider's
    // claims, marked verified.
    raw_user_meta_data: { ...claims, email_verified: true },
  });
}

/**
 * The invite link's token proves the invitee reads the invited mailbox, so the provider's address need only
 * equal it (verified or not): the identity is added and the account confirmed as any unconfirmed account
 * the provider confirms (the original's invite acceptance clears the same things), every one-time token
 * spent.
 */
export async function acceptInvite(
  c: pg.PoolClient,
  request: AuditRequest,
  provider: string,
  profile: ExternalProfile,
  inviteToken: string,
): Promise<UserRow> {
  const token = await findTokenByLink(c, inviteToken, ['confirmation_token']);
  const invited = token ? await lockUserById(c, token.user_id) : null;
  // Locked after its user, as /verify does (db/one-time-tokens.ts): a concurrent acceptance spent it already.
  if (!invited?.invited_at || !invited.email || !(await lockOneTimeToken(c, token!))) throw apiError('invite_not_found');
  const email = invited.email.toLowerCase();
  if (!profile.emails.some((e) => e.email.toLowerCase() === email)) throw apiError('invite_email_mismatch');
  await insertIdentity(c, { userId: invited.id, provider: provider, providerId: profile.subject, data: profile.claims });
  const accepted = await confirmThroughProvider(c, invited, provider, profile.claims);
  await writeAudit(c, request, actorOf(accepted), 'invite_accepted', { provider: provider });
  return accepted;
}

/** app_metadata after the unverified identities are gone: this provider is the account's provider. */
function onlyProviders(meta: Record<string, unknown>, provider: string): Record<string, unknown> {
  return { ...meta, provider, providers: [provider] };
}

// Making a new email or phone the user's own once it is verified (docs/one-time-codes-and-mail.md#email-change, docs/users-and-audit.md#anonymous-users):
// the address is set and confirmed, the pending change cleared, the identity created or updated, and an
// anonymous user becomes permanent (is_anonymous false). The provider is listed in app_metadata only when
// asked: the original's /verify lists the user's providers, its PUT /user under autoconfirm does not.
// The callers void the user's pending links and codes, as the original's confirmation does: /verify after
// the change (verify/consume.ts), PUT /user before it sends any of its own (routes/user-update.ts).
import { apiError } from '../errors.js';
import { findPhoneHolder, findUserByEmail, updateUser, type UserRow, type UserWrite } from '../../db/users.js';
import { findIdentitiesByUser, insertIdentity, mergeIdentityData } from '../../db/identities.js';
import type { Queryable } from '../../db/pool.js';
import { identityData, type AddressProvider } from './create.js';
import { withProviders } from './providers-of-identities.js';
import { nowTimestamp } from '../micro-clock.js';

/** 422 when another live user of the audience already has this address. */
export async function assertAddressFree(q: Queryable, user: UserRow, provider: AddressProvider, address: string): Promise<void> {
  const holder = provider === 'email' ? await findUserByEmail(q, address, user.aud) : await findPhoneHolder(q, address, user.aud);
  if (holder && holder.id !== user.id) throw apiError(provider === 'email' ? 'email_exists' : 'phone_exists');
}

export interface AdoptOptions {
  /** re-derive app_metadata's provider and providers from the identities, as the original's /verify does */
  listProvider?: boolean;
}

/** The address made the user's; `identityCreated` tells whether that gave the user a first identity of the provider (a linked sign-in method). */
export async function adoptAddress(
  q: Queryable,
  user: UserRow,
  provider: AddressProvider,
  address: string,
  options: AdoptOptions = {},
): Promise<{ user: UserRow; identityCreated: boolean }> {
  await assertAddressFree(q, user, provider, address);
  const now = nowTimestamp();
  // As the original: a confirmed user keeps its email confirmation time; a new phone is confirmed now.
  const fields: UserWrite =
    provider === 'email'
      ? {
          email: address,
          email_confirmed_at: user.email_confirmed_at ?? now,
          email_change: null,
          email_change_sent_at: null,
          email_change_confirm_status: 0,
        }
      : { phone: address, phone_confirmed_at: now, phone_change: null, phone_change_sent_at: null };
  const flag = provider === 'email' ? 'email_verified' : 'phone_verified';
  const identities = await findIdentitiesByUser(q, user.id);
  const identityCreated = !identities.some((i) => i.provider === provider);
  if (!identityCreated) {
    await mergeIdentityData(q, user.id, provider, { [provider]: address, [flag]: true });
  } else {
    await insertIdentity(q, { userId: user.id, provider, providerId: user.id, data: identityData(provider, user.id, address, true) });
  }
  // The identities read above, with the one just inserted (the newest) at the end.
  const heldNow = identityCreated ? [...identities, { provider }] : identities;
  if (options.listProvider) fields.raw_app_meta_data = withProviders(user.raw_app_meta_data ?? {}, heldNow);
  if (user.is_anonymous) fields.is_anonymous = false;
  const meta = user.raw_user_meta_data ?? {};
  const metaChanges: Record<string, unknown> = {};
  // Ours (docs/differences.md): the copy of the address a sign-up put in user_metadata follows the change.
  if (provider in meta) metaChanges[provider] = address;
  // As the original: an email confirmed for the first time marks user_metadata.email_verified, whether the
  // user had the key or not (a phone or anonymous user); a phone change leaves the flags as they are.
  if (provider === 'email' && !user.email_confirmed_at) metaChanges.email_verified = true;
  if (Object.keys(metaChanges).length > 0) fields.raw_user_meta_data = { ...meta, ...metaChanges };
  try {
    return { user: await updateUser(q, user.id, fields), identityCreated };
  } catch (err) {
    // Another user took the address between the check above and this write (unique index).
    if ((err as { code?: string }).code === '23505') throw apiError(provider === 'email' ? 'email_exists' : 'phone_exists');
    throw err;
  }
}

// EXPERIMENTAL_CREATE_EMAIL_IDENTITY_ON_PASSWORD_SET_ENABLED (docs/users-and-audit.md#email-identity-on-first-password):
// a user who reached their account some other way (an OAuth provider, a phone) and now sets their first
// password gets the `email` identity that an email sign-up would have given them, so the account lists
// email+password among its sign-in methods. Runs inside the transaction that stores the password.
import { findIdentitiesByUser, insertIdentity } from '../../db/identities.js';
import { updateUser, type UserRow } from '../../db/users.js';
import type { Queryable } from '../../db/pool.js';
import type { Config } from '../config/types.js';
import { identityData } from './create.js';

/**
 * Whether a password change is the account's first password: a non-empty password on a user (as locked
 * before the write) without one. Changing an existing password never adds the identity, as in the original.
 */
export function isFirstPassword(before: Pick<UserRow, 'encrypted_password'>, password: string | null | undefined): boolean {
  return !!password && !before.encrypted_password;
}

/**
 * Adds the missing `email` identity of `user` (read after the password was written) and re-derives
 * app_metadata's provider list from the identities; returns the user as it now is. Nothing is added
 * when the setting is off, for SSO and anonymous users (their addresses belong to the IdP, or come with
 * their own identity when they are adopted), without an email, with an email nobody confirmed (an
 * address the user only typed must not become a sign-in method), or when an email identity exists.
 */
export async function addEmailIdentityForFirstPassword(
  config: Pick<Config, 'experimental'>,
  c: Queryable,
  user: UserRow,
): Promise<UserRow> {
  if (!config.experimental.createEmailIdentityOnPasswordSet) return user;
  if (user.is_sso_user || user.is_anonymous || !user.email || !user.email_confirmed_at) return user;
  const identities = await findIdentitiesByUser(c, user.id);
  if (identities.some((i) => i.provider === 'email')) return user;
  await insertIdentity(c, {
    userId: user.id,
    provider: 'email',
    providerId: user.id,
    data: identityData('email', user.id, user.email.toLowerCase(), true),
  });
  // The list the original derives: each provider once, oldest identity first (the new one is the newest),
  // and `provider` the oldest identity's, so an OAuth user keeps their provider there.
  const providers = [...new Set([...identities.map((i) => i.provider), 'email'])];
  return updateUser(c, user.id, { raw_app_meta_data: { ...user.raw_app_meta_data, provider: providers[0], providers } });
}

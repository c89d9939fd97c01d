// Who may add or remove passkeys (docs/passkeys.md#who-may-register): not anonymous users, not SSO users.
import { apiError } from '../errors.js';
import type { Authenticated } from '../auth/principal.js';

export function refuseAnonymous({ user }: Authenticated): void {
  if (user.is_anonymous) throw apiError('passkey_anonymous');
}

export function refuseSsoUser({ user }: Authenticated): void {
  if (user.is_sso_user) throw apiError('passkey_sso_user');
}

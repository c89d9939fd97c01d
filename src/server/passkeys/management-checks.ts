// Who may add or remove passkeys (docs/passkeys.md#who-may-register): not anonymous users (the /factors
// routes' check, mfa/factor-access.ts), not SSO users, and a user with a verified MFA factor only from an
// aal2 session (the original's requirePasskeyManagementAAL: a passkey signs in on its own, so adding one
// must not be easier than the second factor it would bypass).
import { apiError } from '../errors.js';
import { assuranceOf } from '../../db/mfa-factors.js';
import type { Queryable } from '../../db/pool.js';
import type { Authenticated } from '../auth/principal.js';

export function refuseSsoUser({ user }: Authenticated): void {
  if (user.is_sso_user) throw apiError('passkey_sso_user');
}

export async function requireManagementAal(q: Queryable, { user, session }: Authenticated): Promise<void> {
  const { aal, hasVerifiedFactor } = await assuranceOf(q, user.id, session?.id ?? null);
  if (hasVerifiedFactor && aal !== 'aal2' && aal !== 'aal3') throw apiError('passkey_insufficient_aal');
}

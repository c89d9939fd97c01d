// An OAuth or id_token sign-in of a user whose email is still unconfirmed, with an address the provider did
// not verify (REFERENCE §9.4 item 5, docs/oauth.md#linking). As the original: the account is kept, the
// confirmation mail goes out through the ordinary confirmation path (per-user interval, send limit, send
// hook), and unless MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS the sign-in ends with 422
// provider_email_needs_verification — returned, not thrown, so the caller's transaction commits the user and
// the mail's token before the refusal is answered. Runs inside the caller's sendingTx, after every provider
// call is done.
import type pg from 'pg';
import { apiError, type ApiError } from '../errors.js';
import { sendConfirmation } from '../users/confirmation.js';
import type { UserRow } from '../../db/users.js';
import type { HookRequest } from '../hooks/invoke.js';
import type { AppContext } from '../context.js';

export async function mailUnverified(
  ctx: AppContext,
  c: pg.PoolClient,
  user: UserRow,
  provider: string,
  redirectTo: string,
  req: HookRequest,
  refusal: 'provider_email_needs_verification' | 'link_email_not_confirmed' = 'provider_email_needs_verification',
): Promise<ApiError | null> {
  // An account without an address of its own has nothing to confirm by mail: the provider must verify it.
  if (!user.email) {
    if (refusal === 'provider_email_needs_verification' && ctx.config.mailer.allowUnverifiedEmailSignIns) return null;
    return apiError(refusal, `Unverified email with ${provider}. Verify the email with ${provider} in order to sign in`);
  }
  await sendConfirmation(ctx, c, user, {
    provider: 'email',
    address: user.email,
    channel: 'sms',
    redirectTo,
    pkce: null,
    checkInterval: true,
    req,
  });
  // A link by a signed-in user is refused whatever MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS says, as the original.
  if (refusal === 'provider_email_needs_verification' && ctx.config.mailer.allowUnverifiedEmailSignIns) return null;
  return apiError(refusal, `Unverified email with ${provider}. A confirmation email has been sent to your ${provider} email`);
}

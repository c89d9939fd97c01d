// The password verification attempt hook (docs/hooks.md#password-verification-attempt): told of every password
// checked at the password grant, right or wrong, it may refuse the sign-in ("decision": "reject") and end
// all the user's sessions ("should_logout_user": true).
import type { AppContext } from '../context.js';
import { isObject } from './errors.js';
import { hookEnabled, invokeHook, type HookRequest } from './invoke.js';

export interface PasswordAttemptDecision {
  reject: boolean;
  /** the hook's message, or the original's default */
  message: string;
  logoutUser: boolean;
}

export const DEFAULT_PASSWORD_REJECTION = 'Further password verification attempts will be rejected.';

/** null when the hook is off. */
export async function passwordVerificationAttempt(
  ctx: Pick<AppContext, 'config' | 'db' | 'log'>,
  attempt: { userId: string; valid: boolean },
  req: HookRequest,
): Promise<PasswordAttemptDecision | null> {
  if (!hookEnabled(ctx, 'passwordVerificationAttempt')) return null;
  const output = await invokeHook(ctx, 'passwordVerificationAttempt', { user_id: attempt.userId, valid: attempt.valid }, req);
  const answer = isObject(output) ? output : {};
  return {
    reject: answer.decision === 'reject',
    message: typeof answer.message === 'string' && answer.message ? answer.message : DEFAULT_PASSWORD_REJECTION,
    logoutUser: answer.should_logout_user === true,
  };
}

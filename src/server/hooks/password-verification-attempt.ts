// The password verification attempt hook (docs/hooks.md#password-verification-attempt): told of every password
// checked at the password grant, right or wrong, it may refuse the sign-in ("decision": "reject") and end
// all the user's sessions ("should_logout_user": true).
import type { AppContext } from '../context.js';
import { decodeOutput } from './answer.js';
import { hookEnabled, invokeHook, type HookRequest } from './invoke.js';

export interface PasswordAttemptDecision {
  reject: boolean;
  /** the hook's message, or the original's default */
  message: string;
  logoutUser: boolean;
}

export const DEFAULT_PASSWORD_REJECTION = 'Further password verification attempts will be rejected.';

/** The answer's members; one of another type is the original's 500 (answer.ts). */
const OUTPUT = { decision: 'string', message: 'string', should_logout_user: 'boolean' } as const;

/** null when the hook is off. */
export async function passwordVerificationAttempt(
  ctx: Pick<AppContext, 'config' | 'db' | 'log'>,
  attempt: { userId: string; valid: boolean },
  req: HookRequest,
): Promise<PasswordAttemptDecision | null> {
  if (!hookEnabled(ctx, 'passwordVerificationAttempt')) return null;
  const answer = await invokeHook(ctx, 'passwordVerificationAttempt', { user_id: attempt.userId, valid: attempt.valid }, req, (a) =>
    decodeOutput(a, OUTPUT),
  );
  return {
    reject: answer.decision === 'reject',
    message: answer.message || DEFAULT_PASSWORD_REJECTION,
    logoutUser: answer.should_logout_user === true,
  };
}

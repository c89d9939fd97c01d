// The MFA verification attempt hook (docs/hooks.md#mfa-verification-attempt), for the MFA verify endpoint to
// call after checking a factor's code and before acting on it. The payload is the original's:
//   { metadata, user_id, factor_id, factor_type: "totp" | "phone" | "webauthn", valid }
// and the answer { decision: "continue" | "reject", message }. On "reject" all the user's sessions end and
// the attempt is 403 mfa_verification_rejected with the hook's message, as the original:
// enforceMfaVerificationAttempt does all of it; mfaVerificationAttempt only asks.
import { deleteSessions } from '../../db/sessions.js';
import type { AppContext } from '../context.js';
import { apiError } from '../errors.js';
import { decodeOutput } from './answer.js';
import { hookEnabled, invokeHook, type HookRequest } from './invoke.js';

export interface MfaAttemptDecision {
  reject: boolean;
  /** the hook's message, or the original's default */
  message: string;
}

export const DEFAULT_MFA_REJECTION = 'Further MFA verification attempts will be rejected.';

/** The answer's members; one of another type is the original's 500 and no session ends (answer.ts). */
const OUTPUT = { decision: 'string', message: 'string' } as const;

export interface MfaAttempt {
  userId: string;
  factorId: string;
  factorType: string;
  valid: boolean;
}

/** null when the hook is off. Call it holding no connection (outside any transaction). */
export async function mfaVerificationAttempt(
  ctx: Pick<AppContext, 'config' | 'db' | 'log'>,
  attempt: MfaAttempt,
  req: HookRequest,
): Promise<MfaAttemptDecision | null> {
  if (!hookEnabled(ctx, 'mfaVerificationAttempt')) return null;
  const answer = await invokeHook(
    ctx,
    'mfaVerificationAttempt',
    { user_id: attempt.userId, factor_id: attempt.factorId, factor_type: attempt.factorType, valid: attempt.valid },
    req,
    (a) => decodeOutput(a, OUTPUT),
  );
  return { reject: answer.decision === 'reject', message: answer.message || DEFAULT_MFA_REJECTION };
}

/**
 * The whole of the original's handling, for the MFA verify endpoint: ask the hook; on "reject" end every
 * session of the user and throw 403 mfa_verification_rejected with the hook's message. Resolves when the
 * hook is off or lets the attempt continue. Call it holding no connection.
 */
export async function enforceMfaVerificationAttempt(
  ctx: Pick<AppContext, 'config' | 'db' | 'log'>,
  attempt: MfaAttempt,
  req: HookRequest,
): Promise<void> {
  const decision = await mfaVerificationAttempt(ctx, attempt, req);
  if (!decision?.reject) return;
  await deleteSessions(ctx.db, attempt.userId, 'all');
  throw apiError('mfa_verification_rejected', decision.message);
}

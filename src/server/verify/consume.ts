// The transaction at the heart of /verify: find the live token (by link or by code), check it, apply the
// type's effect, spend every one-time token of the user, and sign the user in. A wrong code is counted
// and committed before the refusal is returned, so the attempt limit holds.
import { ApiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import { lockUserById } from '../../db/users.js';
import { deleteOneTimeTokens, type OneTimeTokenRow } from '../../db/one-time-tokens.js';
import { writeAudit } from '../../db/audit-log.js';
import { findTokenByCode, findTokenByLink, findTokenCheckedByGateway, isExpired } from '../one-time-tokens.js';
import { issueSession, type TokenResponse } from '../sessions/issue.js';
import { isBanned } from '../users/user-json.js';
import { actorOf } from '../routes/signup.js';
import type { VerifyType } from './types.js';
import type { AppContext } from '../app.js';
import type { ApiRequest } from '../types.js';

export type Proof = { linkToken: string } | { address: string; code: string };

export type Verified = { kind: 'session'; session: TokenResponse } | { kind: 'message'; message: string };

const linkInvalid = () => new ApiError(403, 'otp_expired', 'Email link is invalid or has expired');
const codeInvalid = () => new ApiError(403, 'otp_expired', 'Token has expired or is invalid');

export async function consumeToken(ctx: AppContext, req: ApiRequest, type: VerifyType, proof: Proof): Promise<Verified> {
  const outcome = await tx(ctx.db, async (c): Promise<Verified | ApiError> => {
    const byLink = 'linkToken' in proof;
    const maxAttempts = ctx.config.security.otpMaxAttempts;
    const gatewayCheck = type.channel === 'sms' ? ctx.sms?.verifyOtp?.bind(ctx.sms) : undefined;
    const row: OneTimeTokenRow | null = byLink ? await findTokenByLink(c, proof.linkToken, type.tokenTypes)
      : gatewayCheck && !ctx.config.sms.testOtp[proof.address]
        ? await findTokenCheckedByGateway(c, gatewayCheck, proof.address, proof.code, type.tokenTypes, maxAttempts)
        : await findTokenByCode(c, proof.address, proof.code, type.tokenTypes, maxAttempts);
    const lifetime = type.channel === 'email' ? ctx.config.mailer.otpExpSeconds : ctx.config.sms.otpExpSeconds;
    if (!row || isExpired(row, lifetime)) return byLink ? linkInvalid() : codeInvalid();
    const user = await lockUserById(c, row.user_id);
    if (!user) return byLink ? linkInvalid() : codeInvalid();
    if (isBanned(user)) return new ApiError(403, 'user_banned', 'User is banned');
    const applied = await type.apply(ctx, c, user, row.token_type);
    if (applied.message) return { kind: 'message', message: applied.message };
    await deleteOneTimeTokens(c, user.id);
    await writeAudit(c, actorOf(applied.user), user.confirmed_at ? 'login' : 'user_signedup', { provider: type.channel === 'email' ? 'email' : 'phone' });
    return { kind: 'session', session: await issueSession(ctx, c, applied.user, type.amr, req) };
  });
  if (outcome instanceof ApiError) throw outcome;
  return outcome;
}

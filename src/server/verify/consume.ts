// The transaction at the heart of /verify: find the live token (by link or by code), check it, apply the
// type's effect, spend every one-time token of the user, and sign the user in — or, for the link of a
// PKCE flow, hand out the flow's auth code instead (docs/tokens-and-sessions.md#pkce-flow-state). A wrong code is counted and
// committed before the refusal is returned, so the attempt limit holds. A test number's fixed code stands for
// a token of its own (verify/test-otp.ts).
import type pg from 'pg';
import { ApiError, apiError } from '../errors.js';
import { lockUserById, updateUser, type UserRow } from '../../db/users.js';
import { deleteOneTimeTokens, lockOneTimeToken, type OneTimeTokenRow, type OneTimeTokenType } from '../../db/one-time-tokens.js';
import { findLatestFlowState, markAuthCodeIssued } from '../../db/flow-state.js';
import { writeAudit } from '../../db/audit-log.js';
import { findTokenByCode, findTokenByLink, findTokenCheckedByGateway, isExpired, linkKeyFor } from './one-time-codes.js';
import { issueSession, issuingTx, type TokenResponse } from '../sessions/issue.js';
import { sendingTx } from '../delivery/sending-tx.js';
import { isBanned } from '../users/user-json.js';
import { actorOf } from '../users/actor.js';
import type { VerifyType } from './types.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { gatewayCodeCheck } from './gateway-check.js';
import { requestAudience } from '../auth/bearer.js';
import { testOtpHolder } from './test-otp.js';
import { storedPasswordHash } from '../users/password-at-rest.js';
import { sendNotifications, type Notification } from '../delivery/notifications.js';

export type Proof = { linkToken: string } | { address: string; code: string };

export type Verified =
  | { kind: 'session'; session: TokenResponse; tokenType: OneTimeTokenType }
  | { kind: 'message'; message: string }
  | { kind: 'code'; authCode: string };

export interface ConsumeOptions {
  /** finish a PKCE flow of this authentication method: record and return its auth code, no session */
  flowMethod?: string;
  /** the hash of a password to give a user who has none (POST /verify signup/invite with `password`) */
  passwordHash?: string;
}

interface Holder {
  user: UserRow;
  tokenType: OneTimeTokenType;
}

const linkInvalid = () => apiError('link_expired');
const codeInvalid = () => apiError('otp_expired');

export async function consumeToken(
  ctx: AppContext,
  req: ApiRequest,
  type: VerifyType,
  proof: Proof,
  options: ConsumeOptions = {},
): Promise<Verified> {
  let notifications: Notification[] = [];
  const outcome = await inTransaction(ctx, req, waitsOnGateway(ctx, type, proof), async (c): Promise<Verified | ApiError> => {
    notifications = [];
    // A test number's fixed code first, as the original checks it before the stored token.
    const tested = 'address' in proof && type.testOtpColumn ? await testOtpHolder(ctx, c, req, type, proof.address, proof.code) : null;
    const holder = tested ?? (await tokenHolder(ctx, c, req, type, proof));
    if (holder instanceof ApiError) return holder;
    const { user, tokenType } = holder;
    if (isBanned(user)) return apiError('user_banned');
    // Looked up before anything changes: without its flow, a PKCE link must leave the token unspent.
    const flow = options.flowMethod ? await findLatestFlowState(c, user.id, options.flowMethod) : null;
    if (options.flowMethod && !flow) return apiError('flow_state_not_found_at_verify');
    const applied = await type.apply(ctx, c, user, tokenType);
    notifications = applied.notifications ?? [];
    if (applied.message) return { kind: 'message', message: applied.message };
    if (options.passwordHash && !applied.user.encrypted_password) {
      applied.user = await updateUser(c, user.id, { encrypted_password: storedPasswordHash(ctx.config, user.id, options.passwordHash) });
    }
    await deleteOneTimeTokens(c, user.id);
    // docs/users-and-audit.md#audit-log: the original's entry for this type, by the user as it was before.
    const audit = { actor: actorOf(applied.user), ...type.audit(user, tokenType) };
    if (flow) {
      await writeAudit(c, req, audit.actor, audit.action, audit.traits);
      await markAuthCodeIssued(c, flow.id);
      return { kind: 'code', authCode: flow.auth_code! };
    }
    return { kind: 'session', session: await issueSession(ctx, c, applied.user, type.amr, req, { audit }), tokenType };
  });
  if (outcome instanceof ApiError) throw outcome;
  // After the commit, never failing the verification (delivery/notifications.ts).
  await sendNotifications(ctx, req, notifications);
  return outcome;
}

/**
 * A sign-up, sign-in or recovery token proves the address it was sent to, which must still be the user's
 * address of the kind the type confirms: an SMS code, presented by link as a mail's type, would otherwise
 * confirm an email address no mail reached (and an email link, as type sms, a phone), and a link sent to
 * an address the user has since left would confirm the new one (docs/differences.md#security). The two
 * tokens of a change prove the new and the current address, and are checked where they are applied.
 */
function provesUsersAddress(type: VerifyType, row: OneTimeTokenRow, user: UserRow): boolean {
  if (row.token_type !== 'confirmation_token' && row.token_type !== 'recovery_token') return true;
  const address = type.channel === 'email' ? user.email : user.phone;
  return !!address && address.toLowerCase() === row.relates_to.toLowerCase();
}

/** What the transaction waits on over the network, if anything, besides the database. */
function waitsOnGateway(ctx: AppContext, type: VerifyType, proof: Proof): boolean {
  // The SMS gateway's check of a phone code (Twilio Verify) waits on the gateway a send waits on.
  return 'address' in proof && type.channel === 'sms' && gatewayCodeCheck(ctx, proof.address) !== undefined;
}

/**
 * A wait on the SMS gateway holds a sending slot (delivery/sending-tx.ts), a wait on the hook or KMS signing
 * the session a sign-in's (issuingTx), so a stalled gateway or hook keeps at most half the pool's connections
 * and the rest of the service answers.
 */
function inTransaction<T>(ctx: AppContext, req: ApiRequest, gateway: boolean, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  return gateway ? sendingTx(ctx, req.signal, fn) : issuingTx(ctx, fn, req.signal);
}

/**
 * The user whose live token the link or code is, locked, with the token's type; or the refusal. A wrong
 * code is counted here (findTokenByCode), committed with the refusal.
 */
async function tokenHolder(ctx: AppContext, c: pg.PoolClient, req: ApiRequest, type: VerifyType, proof: Proof): Promise<Holder | ApiError> {
  const byLink = 'linkToken' in proof;
  const maxAttempts = ctx.config.security.otpMaxAttempts;
  const gatewayCheck = !byLink && type.channel === 'sms' ? gatewayCodeCheck(ctx, proof.address) : undefined;
  let row: OneTimeTokenRow | null;
  if (byLink) row = await findTokenByLink(c, proof.linkToken, type.tokenTypes);
  else if (gatewayCheck) {
    const verdict = await findTokenCheckedByGateway(c, gatewayCheck, proof.address, proof.code, type.tokenTypes, maxAttempts);
    // As the original: whatever went wrong asking the gateway, the code is refused like a wrong one.
    if (verdict.outcome === 'failed') ctx.log.warn({ err: verdict.error }, 'checking a phone code with the gateway failed');
    if (verdict.outcome !== 'approved') return codeInvalid();
    row = verdict.row;
  } else row = await findTokenByCode(c, linkKeyFor(ctx.config.jwt), proof.address, proof.code, type.tokenTypes, maxAttempts);
  if (!row) return byLink ? linkInvalid() : codeInvalid();
  // A code the gateway approved is within the gateway's own lifetime, and approving it used it up there:
  // refusing it now for SMS_OTP_EXP would leave the user with no working code.
  const lifetime = type.channel === 'email' ? ctx.config.mailer.otpExpSeconds : ctx.config.sms.otpExpSeconds;
  if (!gatewayCheck && isExpired(row, lifetime)) return byLink ? linkInvalid() : codeInvalid();
  // The user first, then the token (lockOneTimeToken): a concurrent verification of another of the user's
  // tokens, or a request that replaces or voids them, waits here instead of deadlocking with this one.
  const user = await lockUserById(c, row.user_id);
  if (!user || !(await lockOneTimeToken(c, row))) return byLink ? linkInvalid() : codeInvalid();
  if (!provesUsersAddress(type, row, user)) return byLink ? linkInvalid() : codeInvalid();
  // As the original, a code is the user's of that address in the request's audience (X-JWT-AUD, else
  // JWT_AUD); a link or token_hash names its user whatever the audience.
  if (!byLink && user.aud !== requestAudience(req, ctx)) return codeInvalid();
  return { user, tokenType: row.token_type };
}

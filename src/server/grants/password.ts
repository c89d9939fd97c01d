// grant_type=password: one lookup, one password verification whether or not the user exists or is banned
// (same work, same answer), then the refusals after a correct password. The original checks the ban
// first, which answers a banned account ~30 ms sooner than any other: an enumeration signal.
import { ApiError, apiError } from '../errors.js';
import { findUserByEmail, findUserById, findUserByPhone, type UserRow } from '../../db/users.js';
import { phoneDigits } from '../users/addresses.js';
import { isBanned } from '../users/user-json.js';
import { signInWeakness } from '../users/password-policy.js';
import { issueSession, type TokenResponse } from '../sessions/issue.js';
import { deleteSessions } from '../../db/sessions.js';
import { passwordVerificationAttempt } from '../hooks/password-verification-attempt.js';
import { requestAudience } from '../auth/bearer.js';
import { grantSchema } from '../http/validate.js';
import { actorOf } from '../users/actor.js';
import type { Grant } from './grant.js';
import type { AppContext } from '../context.js';
import type { ApiRequest } from '../http/types.js';
import { needsResealing, passwordHashOf, storedPasswordHash } from '../users/password-at-rest.js';

const schema = grantSchema('email', 'phone', 'password');

export const password: Grant<ReturnType<typeof schema>> = {
  grantType: 'password',
  schema,
  async handle(req, ctx, body) {
    // Any email sent, white space alone too, is an email sign-in, as in the original; only the lookup
    // trims it (docs/differences.md#deliberate-departures), so a blank one names no one.
    const emailText = body.email ?? '';
    const email = emailText.trim();
    const phoneText = body.phone ?? '';
    const password = body.password ?? '';
    if (emailText && phoneText) throw apiError('sign_in_email_and_phone');
    if (!emailText && !phoneText) throw apiError('sign_in_no_address');
    if (emailText && !ctx.config.external.emailEnabled) throw apiError('email_logins_disabled_422');
    if (phoneText && !ctx.config.external.phoneEnabled) throw apiError('phone_logins_disabled_422');

    // A full hashing queue would refuse this login after its lookup: refused before it instead, so a login
    // flood takes no pooled connection from the other routes (same answer, so nothing about the account).
    if (ctx.hasher.busy()) throw apiError('over_capacity');
    const aud = requestAudience(req, ctx);
    // Looked up in the original's form only, so a number it stored that libphonenumber would refuse still signs in.
    const phone = phoneText ? phoneDigits(phoneText) : null;
    const user = email ? await findUserByEmail(ctx.db, email.toLowerCase(), aud) : phone ? await findUserByPhone(ctx.db, phone, aud) : null;
    const stored = user ? passwordHashOf(ctx.config, user) : null;
    const verdict = await ctx.hasher.verify(stored, password, req.signal);
    // docs/hooks.md#password-verification-attempt: told of every checked password of an existing user that
    // has one, as the original, which refuses a user without a password before its hook.
    const decision = user && stored ? await passwordVerificationAttempt(ctx, { userId: user.id, valid: verdict.ok }, req) : null;
    if (user && decision?.reject) {
      if (decision.logoutUser) await deleteSessions(ctx.db, user.id, 'all');
      throw apiError('password_verification_rejected', decision.message);
    }
    if (!user || !verdict.ok) throw apiError('invalid_credentials');
    assertMaySignIn(user, emailText ? 'email' : 'phone');

    // Asked while the session is issued and awaited after it: the sign-in never holds a connection or a
    // transaction waiting on the range API. It never rejects.
    const weakness = signInWeakness(ctx, password, req.requestId);
    const response = await passwordSession(ctx, req, user, password, verdict.needsRehash, emailText ? 'email' : 'phone');
    const weak = await weakness;
    // Always there, null for a strong password, as the original's answer carries it on this grant alone.
    response.weak_password = weak ? { message: weak.message, reasons: weak.reasons } : null;
    return { body: response };
  },
};

/** The refusals of a user whose password is right, in the original's order. */
function assertMaySignIn(user: UserRow, provider: 'email' | 'phone'): void {
  if (isBanned(user)) throw apiError('user_banned_at_sign_in');
  if (provider === 'email' && !user.email_confirmed_at) throw apiError('email_not_confirmed');
  if (provider === 'phone' && !user.phone_confirmed_at) throw apiError('phone_not_confirmed');
}

/**
 * The session of a user whose password was checked against `checked`'s stored one, in one statement, no
 * transaction: the upgraded hash, the audit entry and the session commit together, and only while that
 * password is still the stored one (db/sign-in.ts). One a concurrent change replaced is checked again against
 * the new one, as a request sent after the change would be: an old password starts no session the change
 * ended, nor is its upgraded hash stored over the new password. A concurrent sign-in's upgrade of the same
 * password passes the check again.
 */
async function passwordSession(
  ctx: AppContext,
  req: ApiRequest,
  checked: UserRow,
  password: string,
  needsRehash: boolean,
  provider: 'email' | 'phone',
): Promise<TokenResponse> {
  let user = checked;
  let rehash = needsRehash;
  for (;;) {
    // An imported (bcrypt) or older argon2 hash is upgraded to the current parameters on success, and with
    // SECURITY_DB_ENCRYPTION_ENCRYPT a hash in clear or under an older key is sealed with the current one.
    const upgraded = await upgradedHash(ctx, user, password, rehash, req.signal);
    try {
      return await issueSession(ctx, ctx.db, user, 'password', req, {
        audit: { actor: actorOf(user), action: 'login', traits: { provider } },
        passwordHash: upgraded,
        checkedPassword: user.encrypted_password,
      });
    } catch (err) {
      if (!(err instanceof ApiError && err.errorCode === 'user_not_found')) throw err;
    }
    // Nothing was written. A concurrent deletion (hard or soft) removed the user after the lookup: the answer
    // is that of an unknown user. Otherwise its password changed: checked again.
    const fresh = await findUserById(ctx.db, user.id);
    if (!fresh || fresh.deleted_at || fresh.encrypted_password === user.encrypted_password) throw apiError('invalid_credentials');
    const verdict = await ctx.hasher.verify(passwordHashOf(ctx.config, fresh), password, req.signal);
    if (!verdict.ok) throw apiError('invalid_credentials');
    assertMaySignIn(fresh, provider);
    user = fresh;
    rehash = verdict.needsRehash;
  }
}

/** The hash to store after a successful sign-in, or undefined when the stored one is as it should be. */
async function upgradedHash(
  ctx: AppContext,
  user: UserRow,
  password: string,
  needsRehash: boolean,
  signal: AbortSignal,
): Promise<string | undefined> {
  if (needsRehash) return storedPasswordHash(ctx.config, user.id, await ctx.hasher.hash(password, signal));
  if (!ctx.config.security.dbEncryption.encrypt || !user.encrypted_password) return undefined;
  return needsResealing(ctx.config, user.id, user.encrypted_password)
    ? storedPasswordHash(ctx.config, user.id, passwordHashOf(ctx.config, user)!)
    : undefined;
}

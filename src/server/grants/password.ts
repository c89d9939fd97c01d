// grant_type=password: one lookup, one password verification whether or not the user exists or is banned
// (same work, same answer), then the refusals after a correct password. The original checks the ban
// first, which answers a banned account ~30 ms sooner than any other: an enumeration signal.
import { ApiError, badRequest } from '../errors.js';
import { findUserByEmail, findUserByPhone } from '../../db/users.js';
import { parsePhone } from '../users/addresses.js';
import { isBanned } from '../users/user-json.js';
import { checkPasswordStrength } from '../users/password-policy.js';
import { issueSession } from '../sessions/issue.js';
import { requestAudience } from '../auth/bearer.js';
import { bodySchema, STRING } from '../http/validate.js';
import { actorOf } from '../users/actor.js';
import type { Grant } from './grant.js';

const invalidCredentials = () => new ApiError(400, 'invalid_credentials', 'Invalid login credentials');

export const password: Grant = {
  grantType: 'password',
  schema: bodySchema({ email: STRING, phone: STRING, password: STRING }),
  async handle(req, ctx) {
    const body = req.body();
    const email = (body.email as string | undefined)?.trim() ?? '';
    const phoneText = (body.phone as string | undefined) ?? '';
    const password = (body.password as string | undefined) ?? '';
    if (email && phoneText) throw badRequest('Only an email address or phone number should be provided on login.');
    if (!email && !phoneText) throw badRequest('missing email or phone');
    if (email && !ctx.config.external.emailEnabled) throw new ApiError(422, 'email_provider_disabled', 'Email logins are disabled');
    if (phoneText && !ctx.config.external.phoneEnabled) throw new ApiError(422, 'phone_provider_disabled', 'Phone logins are disabled');

    const aud = requestAudience(req, ctx);
    const phone = phoneText ? parsePhone(phoneText) : null;
    const user = email ? await findUserByEmail(ctx.db, email.toLowerCase(), aud) : phone ? await findUserByPhone(ctx.db, phone, aud) : null;
    const verdict = await ctx.hasher.verify(user?.encrypted_password ?? null, password, req.signal);
    if (!user || !verdict.ok) throw invalidCredentials();
    if (isBanned(user)) throw new ApiError(400, 'user_banned', 'User is banned');
    if (email && !user.email_confirmed_at) throw new ApiError(400, 'email_not_confirmed', 'Email not confirmed');
    if (!email && !user.phone_confirmed_at) throw new ApiError(400, 'phone_not_confirmed', 'Phone not confirmed');

    // An imported (bcrypt) or older argon2 hash is upgraded to the current parameters on success.
    const upgraded = verdict.needsRehash ? await ctx.hasher.hash(password, req.signal) : undefined;
    // One statement, no transaction: the upgraded hash, the audit entry and the session commit together.
    const response = await issueSession(ctx, ctx.db, user, 'password', req, {
      audit: { actor: actorOf(user), action: 'login', traits: { provider: email ? 'email' : 'phone' } },
      passwordHash: upgraded,
    });
    const weak = checkPasswordStrength(password, ctx.config.password);
    if (weak) response.weak_password = { message: weak.message, reasons: weak.reasons };
    return { body: response };
  },
};

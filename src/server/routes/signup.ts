// POST /signup (REFERENCE §2.1): the checks in the original's order, then the sign-up itself
// (users/signup.ts) in one transaction.
import { ApiError, badRequest, unprocessable } from '../errors.js';
import { sendingTx } from '../delivery/sending-tx.js';
import { checkPasswordStrength, isPasswordTooLong } from '../users/password-policy.js';
import { normaliseEmail, normalisePhone, objectField, stringField } from '../users/addresses.js';
import { signUp, type SignupInput } from '../users/signup.js';
import type { AddressProvider } from '../users/create.js';
import { requestAudience } from '../auth/bearer.js';
import { redirectTarget } from '../http/redirect-target.js';
import { signUpAnonymously } from './anonymous.js';
import { parseChannel } from '../delivery/sms/channel-field.js';
import { readPkceParams } from '../verify/pkce-challenge.js';
import type { Handler, ApiRequest } from '../http/types.js';
import type { AppContext } from '../context.js';

export const signup: Handler = async (req, ctx) => {
  const body = req.body();
  const email = stringField(body, 'email');
  const phone = stringField(body, 'phone');
  if (ctx.config.disableSignup) throw unprocessable('signup_disabled', 'Signups not allowed for this instance');
  if (!email && !phone) return signUpAnonymously(req, ctx, objectField(body, 'data'));
  const input = readInput(req, ctx, body, email, phone);
  // Hash before looking anything up: a new, a pending and an existing address cost the same work.
  const passwordHash = await ctx.hasher.hash(input.password, req.signal);
  return sendingTx(ctx, req.signal, (c) => signUp(ctx, c, req, input, passwordHash));
};

function readInput(req: ApiRequest, ctx: AppContext, body: Record<string, unknown>, email: string, phone: string): SignupInput {
  const password = stringField(body, 'password');
  if (!password) throw badRequest('Signup requires a valid password');
  if (isPasswordTooLong(password)) throw badRequest('Password cannot be longer than 72 characters');
  const weak = checkPasswordStrength(password, ctx.config.password);
  if (weak) throw new ApiError(422, 'weak_password', weak.message, { weak_password: { reasons: weak.reasons } });
  if (email && phone) throw badRequest('Only an email address or phone number should be provided on signup.');
  const channel = parseChannel(body);
  if (phone && body.code_challenge) throw badRequest('PKCE not supported for phone signups');
  const pkce = readPkceParams(body);
  const provider: AddressProvider = email ? 'email' : 'phone';
  if (provider === 'email' && !ctx.config.external.emailEnabled) throw new ApiError(400, 'email_provider_disabled', 'Email signups are disabled');
  if (provider === 'phone' && !ctx.config.external.phoneEnabled) throw new ApiError(400, 'phone_provider_disabled', 'Phone signups are disabled');
  const address = provider === 'email' ? normaliseEmail(email) : normalisePhone(phone);
  return { provider, address, password, data: objectField(body, 'data'), channel, aud: requestAudience(req, ctx),
    redirectTo: redirectTarget(req, ctx), pkce };
}


// POST /signup (docs/api.md#post-signup): the checks in the original's order, then the sign-up itself
// (users/signup.ts) in one transaction. The body's types are checked first, as the original decodes it.
import { ApiError, apiError } from '../errors.js';
import { sendingTx } from '../delivery/sending-tx.js';
import { assertStrongPassword, isPasswordTooLong } from '../users/password-policy.js';
import { normaliseEmail, normalisePhone } from '../users/addresses.js';
import { signUp, type SignupInput } from '../users/signup.js';
import type { AddressProvider } from '../users/create.js';
import { requestAudience } from '../auth/bearer.js';
import { redirectTarget } from '../http/redirect-target.js';
import { signUpAnonymously } from './anonymous.js';
import { CHANNEL_FIELD, phoneChannel } from '../delivery/sms/channel-field.js';
import { PKCE_FIELDS, readPkceParams } from '../verify/pkce-challenge.js';
import { bodySchema, type BodyOf } from '../http/validate.js';
import type { Handler, ApiRequest, BucketChoice } from '../http/types.js';
import type { AppContext } from '../context.js';
import { announceSignUp } from '../hooks/after-user-created.js';
import { assertDecodesAsGo } from '../http/go-field-types.js';
import { goParamsType } from '../http/go-param-types.js';

const FIELDS = { email: 'string', phone: 'string', password: 'string', ...CHANNEL_FIELD, ...PKCE_FIELDS, data: 'object' } as const;
export const signupBody = bodySchema(FIELDS);
type SignupBody = BodyOf<typeof FIELDS>;

/**
 * The per-client bucket of a sign-up: one without an address is anonymous and takes from
 * RATE_LIMIT_ANONYMOUS_USERS (per hour), any other from the sign-up bucket, as in the original. With
 * anonymous sign-ins off, an anonymous one takes nothing: the original refuses it before its limiter, so
 * it is answered anonymous_provider_disabled however often it is asked. The body is decoded as the original's
 * type first, as the original decodes it before picking a limiter: a body it cannot decode is 400 and spends
 * nothing, so malformed requests cannot use up a client's allowance.
 */
export const signupBucket: BucketChoice = (req, ctx) => {
  const body = req.json();
  assertDecodesAsGo(body, goParamsType(req));
  const { email, phone } = body;
  if (email || phone) return 'signup';
  return ctx.config.external.anonymousUsersEnabled ? 'anonymous' : null;
};

/** Each sign-up's outcome is counted by method (observability/metrics.ts; free when metrics are off). */
export const signup: Handler<SignupBody> = async (req, ctx) => {
  try {
    const response = await signupUncounted(req, ctx);
    ctx.metrics.signUp(signUpMethod(req), 'success');
    return response;
  } catch (err) {
    ctx.metrics.signUp(signUpMethod(req), err instanceof ApiError ? err.errorCode : 'unexpected_failure');
    throw err;
  }
};

/** email, phone or anonymous, as the body asks; `invalid` when the body is not a JSON object. */
function signUpMethod(req: ApiRequest): string {
  try {
    const body = req.json();
    if (typeof body.email === 'string' && body.email) return 'email';
    if (typeof body.phone === 'string' && body.phone) return 'phone';
    return 'anonymous';
  } catch {
    return 'invalid';
  }
}

const signupUncounted: Handler<SignupBody> = async (req, ctx) => {
  const timing = { kind: 'signup', startedAt: performance.now() };
  const body = req.body();
  const email = body.email ?? '';
  const phone = body.phone ?? '';
  // Anonymous first, as the original: with anonymous sign-ins off that refusal comes before signup_disabled.
  if (!email && !phone) return signUpAnonymously(req, ctx, body.data ?? {});
  if (ctx.config.disableSignup) throw apiError('signup_disabled');
  const input = await readInput(req, ctx, body, email, phone);
  // Hash before looking anything up: a new, a pending and an existing address cost the same work.
  const passwordHash = await ctx.hasher.hash(input.password, req.signal);
  const outcome = await sendingTx(ctx, req.signal, (c) => signUp(ctx, c, req, input, passwordHash), timing);
  if (outcome instanceof ApiError) throw outcome;
  await announceSignUp(req, ctx);
  return outcome;
};

// The leaked-password check's request happens here, before the hash and before the transaction opens.
async function readInput(req: ApiRequest, ctx: AppContext, body: SignupBody, email: string, phone: string): Promise<SignupInput> {
  const password = body.password ?? '';
  if (!password) throw apiError('password_required');
  if (isPasswordTooLong(password)) throw apiError('password_too_long');
  await assertStrongPassword(ctx, password, req.requestId);
  if (email && phone) throw apiError('signup_email_and_phone');
  // Only a phone sign-up reads the channel; an email sign-up ignores it, as the original.
  const channel = phone ? phoneChannel(ctx, body.channel) : 'sms';
  if (phone && body.code_challenge) throw apiError('signup_phone_pkce');
  const pkce = readPkceParams(body);
  const provider: AddressProvider = email ? 'email' : 'phone';
  if (provider === 'email' && !ctx.config.external.emailEnabled) throw apiError('email_signups_disabled');
  if (provider === 'phone' && !ctx.config.external.phoneEnabled) throw apiError('phone_signups_disabled');
  const address = provider === 'email' ? normaliseEmail(email) : normalisePhone(phone);
  return {
    provider,
    address,
    password,
    data: body.data ?? {},
    channel,
    aud: requestAudience(req, ctx),
    redirectTo: redirectTarget(req, ctx),
    pkce,
  };
}

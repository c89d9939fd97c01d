// GET and POST /verify (docs/api.md#verify). POST answers JSON; GET (the link in a mail) answers 303 to the
// validated redirect target, with the session or the error in the URL fragment.
import { ApiError, apiError } from '../errors.js';
import { emailLinkType, VERIFY_TYPES } from '../verify/types.js';
import { consumeToken, type Proof } from '../verify/consume.js';
import { lookupPhone, normaliseEmail } from '../users/addresses.js';
import { bodySchema, type BodyOf } from '../http/validate.js';
import { redirectTarget } from '../http/redirect-target.js';
import { SIGNUP_FLOW_METHOD } from '../users/confirmation.js';
import { redirectWithError, redirectWithSession } from '../verify/redirects.js';
import { assertStrongPassword, isPasswordTooLong } from '../users/password-policy.js';
import type { ApiRequest, Handler } from '../http/types.js';
import type { AppContext } from '../context.js';

const FIELDS = {
  type: 'string',
  token: 'string',
  token_hash: 'string',
  email: 'string',
  phone: 'string',
  redirect_to: 'string',
  password: 'string',
} as const;
export const verifyBody = bodySchema(FIELDS);

export const verifyPost: Handler<BodyOf<typeof FIELDS>> = async (req, ctx) => {
  const body = req.body();
  const typeName = body.type ?? '';
  const token = body.token ?? '';
  const tokenHash = body.token_hash ?? '';
  const email = body.email ?? '';
  const phone = body.phone ?? '';
  if (!typeName) throw apiError('verify_type_required');
  if (!token === !tokenHash) throw apiError('verify_token_or_hash');
  let proof: Proof;
  if (tokenHash) {
    if (email || phone || body.redirect_to) throw apiError('verify_hash_only');
    proof = { linkToken: tokenHash };
  } else {
    if (!email === !phone) throw apiError('verify_email_or_phone');
    // The code as typed, not trimmed: the original hashes it as sent, so ' 123456' is a wrong code there too.
    proof = { address: email ? validEmail(email) : lookupPhone(phone), code: token };
  }
  const type = VERIFY_TYPES.get(typeName);
  if (!type) {
    if (tokenHash) throw apiError('verify_type_invalid');
    throw apiError('otp_expired');
  }
  // A token_hash is a mail link's: with a phone type it is refused as an unknown type is, as the original.
  if (tokenHash && type.channel === 'sms') throw apiError('verify_type_invalid');
  // The type names where its code went: a phone type's code is looked up by the phone, a mail type's by the
  // email, as the original looks the user up. The other address finds no one there: the same 403, so a code
  // sent to one channel never confirms the other.
  if (!tokenHash && (type.channel === 'sms') !== !!phone) throw apiError('otp_expired');
  const passwordHash = await passwordToSet(ctx, typeName, body.password ?? '', req);
  const verified = await consumeToken(ctx, req, type, proof, { passwordHash });
  if (verified.kind === 'message') return { body: { msg: verified.message, code: '200' } };
  if (verified.kind === 'code') throw new TypeError('POST /verify never finishes a flow with an auth code');
  // The spec returns `type` with the session on email verifications (docs/api.md#post-verify).
  return { body: type.channel === 'email' ? { ...verified.session, type: typeName } : verified.session };
};

export const verifyGet: Handler = async (req, ctx) => {
  const typeName = req.query.get('type') ?? '';
  const token = req.query.get('token') ?? '';
  if (!typeName) throw apiError('verify_type_required');
  if (!token) throw apiError('verify_token_required');
  const redirectTo = redirectTarget(req, ctx);
  const type = VERIFY_TYPES.get(typeName);
  // A pkce_ link ends in ?code= for the client to exchange at POST /token?grant_type=pkce (docs/tokens-and-sessions.md#pkce-flow-state).
  const pkce = token.startsWith('pkce_');
  try {
    // Phone codes have no links: refused like an unknown type, with the original's message.
    if (!type || type.channel === 'sms') throw apiError('verify_type_invalid');
    const verified = await consumeToken(ctx, req, type, { linkToken: token }, pkce ? { flowMethod: flowMethodOf(typeName) } : {});
    const named = typeName === 'email' && verified.kind === 'session' ? emailLinkType(verified.tokenType) : typeName;
    return redirectWithSession(redirectTo, named, verified, pkce);
  } catch (err) {
    // Every refusal the service names, 5xx included (a failing hook, say), goes back to the app in the
    // redirect as the original's does (`error=server_error`); the browser following a mail link would
    // otherwise be left on a JSON page. An unnamed failure stays the renderer's 500 with its error_id.
    if (!(err instanceof ApiError)) throw err;
    if (err.status >= 500) ctx.log.warn({ err: err.cause ?? err, requestId: req.requestId }, 'GET /verify failed');
    return redirectWithError(redirectTo, err, pkce);
  }
};

/** The flow_state authentication_method a link type finishes: the original's ParseAuthenticationMethod. */
function flowMethodOf(typeName: string): string {
  return typeName.endsWith('signup') ? SIGNUP_FLOW_METHOD : typeName;
}

/**
 * docs/differences.md#answers: "password is required for signup verification if the user has no password" (the original ignores
 * it; we honour it: docs/differences.md#answers). For signup and invite, a password given here becomes the password
 * of a user who has none (an invited user); it is checked like a sign-up password before the token is
 * touched. Without one, such a user stays password-less, as auth-js's verifyOtp never sends one.
 */
async function passwordToSet(ctx: AppContext, typeName: string, password: string, req: ApiRequest): Promise<string | undefined> {
  if (!password || (typeName !== 'signup' && typeName !== 'invite')) return undefined;
  if (isPasswordTooLong(password)) throw apiError('password_too_long');
  await assertStrongPassword(ctx, password, req.requestId);
  return ctx.hasher.hash(password, req.signal);
}

function validEmail(email: string): string {
  try {
    return normaliseEmail(email);
  } catch {
    throw apiError('email_invalid_at_verify');
  }
}

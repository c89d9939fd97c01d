// POST /signup (REFERENCE §2.1): the checks in the original's order, then one transaction that creates
// the user, or re-sends a pending confirmation, or answers a confirmed duplicate without revealing it.
import { ApiError, badRequest, unprocessable } from '../errors.js';
import { tx } from '../../db/pool.js';
import { findUserByEmail, findUserByPhone, updateUser, type UserRow } from '../../db/users.js';
import { findIdentitiesByUser } from '../../db/identities.js';
import { writeAudit } from '../../db/audit-log.js';
import { checkPasswordStrength, isPasswordTooLong } from '../password-policy.js';
import { normaliseEmail, normalisePhone, objectField, stringField } from '../users/addresses.js';
import { confirmAddress, createUser, isAddressConfirmed, newUserRow, type AddressProvider } from '../users/create.js';
import { userJson } from '../users/user-json.js';
import { actorOf } from '../users/actor.js';
import { issueSession } from '../sessions/issue.js';
import { sendEmailToken, sendSmsToken } from '../deliver.js';
import { assertSendInterval } from '../send-limits.js';
import { requestAudience } from '../authenticate.js';
import { redirectTarget } from '../redirect.js';
import { signUpAnonymously } from './anonymous.js';
import { parseChannel } from './channel.js';
import { readPkceParams, type PkceParams } from '../pkce.js';
import { insertFlowState } from '../../db/flow-state.js';
import { generatePassword } from '../password-policy.js';
import type { Handler, ApiRequest, ApiResponse } from '../types.js';
import type { AppContext } from '../app.js';

interface SignupInput {
  provider: AddressProvider; address: string; password: string; data: Record<string, unknown>;
  channel: 'sms' | 'whatsapp'; aud: string; redirectTo: string;
  /** PKCE parameters: the confirmation link carries a pkce_ token and GET /verify answers ?code= */
  pkce: PkceParams | null;
}

/** The flow_state authentication_method of email sign-ups (REFERENCE §4.6). */
export const SIGNUP_FLOW_METHOD = 'email/signup';

export const signup: Handler = async (req, ctx) => {
  const body = req.body();
  const email = stringField(body, 'email');
  const phone = stringField(body, 'phone');
  if (ctx.config.disableSignup) throw unprocessable('signup_disabled', 'Signups not allowed for this instance');
  if (!email && !phone) return signUpAnonymously(req, ctx, objectField(body, 'data'));
  const input = readInput(req, ctx, body, email, phone);
  // Hash before looking anything up: a new, a pending and an existing address cost the same work.
  const passwordHash = await ctx.hasher.hash(input.password);
  return tx(ctx.db, (c) => signUp(ctx, c, req, input, passwordHash));
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

export interface PasswordlessSignup {
  provider: AddressProvider; address: string; data: Record<string, unknown>;
  channel?: 'sms' | 'whatsapp'; pkce?: PkceParams | null;
}

/**
 * The sign-up that /magiclink and /otp perform for an unknown or unconfirmed address (REFERENCE §2.4,
 * §2.5): the original runs its /signup handler with a generated password (33 characters for email, 64 for
 * phone), so the same rules apply: DISABLE_SIGNUP, the confirmation mail or SMS, its max frequency.
 */
export async function signUpWithoutPassword(req: ApiRequest, ctx: AppContext, s: PasswordlessSignup): Promise<void> {
  if (ctx.config.disableSignup) throw unprocessable('signup_disabled', 'Signups not allowed for this instance');
  const password = generatePassword(ctx.config.password, s.provider === 'email' ? 33 : 64);
  const input: SignupInput = { provider: s.provider, address: s.address, password, data: s.data, channel: s.channel ?? 'sms',
    aud: requestAudience(req, ctx), redirectTo: redirectTarget(req, ctx), pkce: s.pkce ?? null };
  const passwordHash = await ctx.hasher.hash(password);
  await tx(ctx.db, (c) => signUp(ctx, c, req, input, passwordHash));
}

async function signUp(ctx: AppContext, c: Parameters<Parameters<typeof tx>[1]>[0], req: ApiRequest, input: SignupInput, passwordHash: string): Promise<ApiResponse> {
  const autoconfirm = input.provider === 'email' ? ctx.config.mailer.autoconfirm : ctx.config.sms.autoconfirm;
  const find = () => input.provider === 'email' ? findUserByEmail(c, input.address, input.aud) : findUserByPhone(c, input.address, input.aud);
  let user = await find();
  if (!user) {
    const created = await createUser(c, { provider: input.provider, address: input.address, aud: input.aud,
      role: ctx.config.jwt.defaultGroupName, passwordHash, data: input.data, confirmed: false });
    // A concurrent signup of the same address won the insert: answer as that request did, without a second send.
    if (!created) {
      const winner = (await find())!;
      return { body: userJson(winner, await findIdentitiesByUser(c, winner.id)) };
    }
    user = created.user;
    await writeAudit(c, actorOf(user), 'user_signedup', { provider: input.provider });
    if (autoconfirm) return { body: await issueSession(ctx, c, await confirmAddress(c, user, input.provider), 'password', req) };
    return { body: await sendConfirmation(ctx, c, user, input, false) };
  }
  if (isAddressConfirmed(user, input.provider)) {
    await writeAudit(c, actorOf(user), 'user_repeated_signup', { provider: input.provider });
    // The decisions table: 400 "User already registered" when autoconfirm is on; otherwise a fabricated
    // user of the same shape as a real answer, so the response does not reveal that the address exists.
    if (ctx.config.mailer.autoconfirm || ctx.config.sms.autoconfirm) throw new ApiError(400, 'user_already_exists', 'User already registered');
    return { body: fakeUser(ctx, input) };
  }
  return { body: await sendConfirmation(ctx, c, user, input, true) };
}

async function sendConfirmation(ctx: AppContext, c: Parameters<Parameters<typeof tx>[1]>[0], user: UserRow, input: SignupInput, resend: boolean) {
  if (input.provider === 'email') {
    if (resend) assertSendInterval('email', user.confirmation_sent_at, ctx.config.smtp.maxFrequencySeconds);
    if (input.pkce) {
      await insertFlowState(c, { userId: user.id, codeChallenge: input.pkce.codeChallenge, method: input.pkce.method, authenticationMethod: SIGNUP_FLOW_METHOD });
    }
    await sendEmailToken(ctx, c, user, { kind: 'confirmation', tokenType: 'confirmation_token', to: input.address, redirectTo: input.redirectTo, pkce: !!input.pkce });
  } else {
    if (resend) assertSendInterval('sms', user.confirmation_sent_at, ctx.config.sms.maxFrequencySeconds);
    await sendSmsToken(ctx, c, user, { tokenType: 'confirmation_token', to: input.address, channel: input.channel, purpose: 'confirmation' });
  }
  const sent = await updateUser(c, user.id, { confirmation_sent_at: new Date() });
  return userJson(sent, await findIdentitiesByUser(c, user.id));
}

function fakeUser(ctx: AppContext, input: SignupInput): Record<string, unknown> {
  const row = newUserRow({ provider: input.provider, address: input.address, aud: input.aud, role: ctx.config.jwt.defaultGroupName,
    passwordHash: null, data: input.data, confirmed: false });
  row.confirmation_sent_at = row.created_at;
  const identity = { id: crypto.randomUUID(), provider_id: row.id, user_id: row.id, provider: input.provider,
    identity_data: { ...row.raw_user_meta_data }, email: row.email, last_sign_in_at: row.created_at, created_at: row.created_at, updated_at: row.created_at };
  for (const key of Object.keys(input.data)) delete identity.identity_data[key];
  return userJson(row, [identity]);
}

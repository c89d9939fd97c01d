// The sign-up itself (docs/api.md#post-signup), shared by POST /signup and the sign-ups /otp and /magiclink make
// for an unknown address: create the user, or re-send a pending confirmation, or answer a confirmed
// duplicate without revealing it.
import { ApiError, apiError } from '../errors.js';
import type { Queryable } from '../../db/pool.js';
import { sendingTx } from '../delivery/sending-tx.js';
import { checkPretendedSend } from '../delivery/pretended-send.js';
import { findUserByPhone, lockLiveUserById, type UserRow } from '../../db/users.js';
import { findIdentitiesByUser } from '../../db/identities.js';
import { writeAudit } from '../../db/audit-log.js';
import { confirmAddress, isAddressConfirmed, newUserRow, type AddressProvider } from './create.js';
import { createUserAfterHook } from '../hooks/before-user-created.js';
import { sendConfirmation } from './confirmation.js';
import { findEmailHolder } from './duplicate-email.js';
import { userJson } from './user-json.js';
import { actorOf } from './actor.js';
import { issueSession } from '../sessions/issue.js';
import { requestAudience } from '../auth/bearer.js';
import { redirectTarget } from '../http/redirect-target.js';
import type { PkceParams } from '../verify/pkce-challenge.js';
import type { ApiRequest, ApiResponse } from '../http/types.js';
import type { AppContext } from '../context.js';
import { announceSignUp } from '../hooks/after-user-created.js';
import { rememberPretendedSend, type PretendedSendKind } from '../limits/pretended-sends.js';
import { nowTimestamp } from '../micro-clock.js';

export interface SignupInput {
  provider: AddressProvider;
  address: string;
  password: string;
  data: Record<string, unknown>;
  channel: 'sms' | 'whatsapp';
  aud: string;
  redirectTo: string;
  /** PKCE parameters: the confirmation link carries a pkce_ token and GET /verify answers ?code= */
  pkce: PkceParams | null;
  /**
   * /otp and /magiclink: the caller answers {} and sends a link or code, so an autoconfirmed sign-up must
   * not start a session that nobody would ever receive (it would only sit in the sessions table).
   */
  withoutSession?: boolean;
}

export interface PasswordlessSignup {
  provider: AddressProvider;
  address: string;
  data: Record<string, unknown>;
  channel?: 'sms' | 'whatsapp';
  pkce?: PkceParams | null;
}

/**
 * The sign-up that /magiclink and /otp perform for an unknown or unconfirmed address: the rules of /signup
 * apply (DISABLE_SIGNUP, the confirmation mail or SMS, its max frequency), but the user gets no password.
 * The original hashes a generated one, which made an unknown address ~30 ms slower to answer than a known
 * one: an enumeration signal. A user without a password cannot sign in with one, as with a random one.
 */
export async function signUpWithoutPassword(req: ApiRequest, ctx: AppContext, s: PasswordlessSignup): Promise<void> {
  if (ctx.config.disableSignup) throw apiError('signup_disabled');
  // An address held in another audience is answered with a pretended send: it waits out the usual duration
  // of this kind's real ones, or its quick answer would tell that address from an unknown one.
  const timing = { kind: `passwordless-signup:${s.provider}`, startedAt: performance.now() };
  const input: SignupInput = {
    provider: s.provider,
    address: s.address,
    password: '',
    data: s.data,
    channel: s.channel ?? 'sms',
    aud: requestAudience(req, ctx),
    redirectTo: redirectTarget(req, ctx),
    pkce: s.pkce ?? null,
    withoutSession: true,
  };
  const outcome = await sendingTx(ctx, req.signal, (c) => signUp(ctx, c, req, input, null), timing);
  if (outcome instanceof ApiError) throw outcome;
  await announceSignUp(req, ctx);
}

/**
 * The sign-up's writes and its answer. A refusal that must keep what was written (the audit entry of a
 * repeated sign-up, which the original writes before it refuses) is returned, not thrown, so that the
 * transaction commits; the caller throws it.
 */
export async function signUp(
  ctx: AppContext,
  c: Queryable,
  req: ApiRequest,
  input: SignupInput,
  passwordHash: string | null,
): Promise<ApiResponse | ApiError> {
  const autoconfirm = input.provider === 'email' ? ctx.config.mailer.autoconfirm : ctx.config.sms.autoconfirm;
  const find = () =>
    // An email another user holds through an identity counts as theirs, as in the original (duplicate-email.ts).
    input.provider === 'email' ? findEmailHolder(ctx, c, input.address, input.aud, null) : findUserByPhone(c, input.address, input.aud);
  let user = await find();
  if (!user) {
    // The before-user-created hook runs before the insert: its refusal leaves nothing (docs/hooks.md#before-user-created).
    const created = await createUserAfterHook(
      ctx,
      c,
      {
        provider: input.provider,
        address: input.address,
        aud: input.aud,
        role: ctx.config.jwt.defaultGroupName,
        passwordHash,
        data: input.data,
        confirmed: false,
      },
      req,
    );
    if (!created) {
      // A concurrent sign-up of the same address won the insert, and has committed (the insert waited for it):
      // answered as a repeat sent after it is, with its audit entry and its send or refusal, never with the
      // winner's user. The hook this request already asked is not asked again: the winner is found now.
      const winner = await find();
      if (winner) return signUpAgain(ctx, c, req, input, passwordHash, winner);
      // Nobody in this audience has it: a user of another audience (X-JWT-AUD) does, since the unique indexes
      // on email and phone span audiences. Answered as a confirmed duplicate, minus the audit entry, which
      // would name a user the request cannot see; /otp and /magiclink then find no user and send nothing.
      // An unknown address would have been sent a confirmation, or under autoconfirm /magiclink's link.
      const answer = input.withoutSession ? { body: {} } : confirmedDuplicate(ctx, input);
      const link = input.withoutSession && input.provider === 'email' && ctx.config.mailer.autoconfirm;
      return pretendSend(ctx, c, input, link ? 'recovery' : 'confirmation', answer);
    }
    user = created.user;
    // The original's entries (docs/users-and-audit.md#audit-log): an autoconfirmed sign-up is a
    // user_signedup (by SMS or WhatsApp, with its channel) and then a login; one left to confirm is a
    // user_confirmation_requested, and its user_signedup comes from /verify.
    const actor = actorOf(user);
    if (!autoconfirm) {
      await writeAudit(c, req, actor, 'user_confirmation_requested', { provider: input.provider });
      return { body: await confirmationAnswer(ctx, c, user, input, false, req) };
    }
    await writeAudit(c, req, actor, 'user_signedup', {
      provider: input.provider,
      ...(input.provider === 'phone' ? { channel: input.channel } : {}),
    });
    const confirmed = await confirmAddress(c, user, input.provider);
    if (input.withoutSession) return { body: userJson(confirmed, []) };
    const login = { actor, action: 'login', traits: { provider: input.provider } } as const;
    return { body: await issueSession(ctx, c, confirmed, 'password', req, { audit: login }) };
  }
  return signUpAgain(ctx, c, req, input, passwordHash, user);
}

/** A sign-up of an address `user` holds in the request's audience: a repeat, confirmed or still pending. */
async function signUpAgain(
  ctx: AppContext,
  c: Queryable,
  req: ApiRequest,
  input: SignupInput,
  passwordHash: string | null,
  found: UserRow,
): Promise<ApiResponse | ApiError> {
  // Locked and re-read before its confirmation token is replaced: the order of /verify and every other writer of
  // one-time tokens (user, then token: db/one-time-tokens.ts), and repeats pass the frequency check one at a time.
  const user = await lockLiveUserById(c, found.id);
  // Deleted, or soft-deleted, by a concurrent request while this one waited for the row: the address is free
  // now, and the sign-up goes on as it would have after the deletion (the lock's wait ended with its commit).
  if (!user) return signUp(ctx, c, req, input, passwordHash);
  if (isAddressConfirmed(user, input.provider)) {
    await writeAudit(c, req, actorOf(user), 'user_repeated_signup', { provider: input.provider });
    // A pending address's repeat is sent a confirmation; /otp and /magiclink send a confirmed one a link.
    const link = input.withoutSession && input.provider === 'email';
    return pretendSend(ctx, c, input, link ? 'recovery' : 'confirmation', confirmedDuplicate(ctx, input));
  }
  await writeAudit(c, req, actorOf(user), 'user_confirmation_requested', { provider: input.provider });
  // Found through an identity's email, the user is sent its own address's confirmation, as the original does.
  const resend = input.provider === 'email' && user.email ? { ...input, address: user.email } : input;
  return { body: await confirmationAnswer(ctx, c, user, resend, true, req) };
}

/**
 * A sign-up answered without a send, as if one was made: remembered (limits/pretended-sends.ts), so a repeat
 * within the interval is refused with the 429 a pending address's repeat gets, or two sign-ups in a row
 * would tell a confirmed address from a pending or unknown one. Recorded on the transaction's client, as a
 * real send's confirmation_sent_at is: a refusal rolls back the audit entry with it, and of concurrent
 * repeats one commits and the others, waiting on its row, are refused. A refusal answer sends nothing to
 * pretend.
 */
async function pretendSend(
  ctx: AppContext,
  c: Queryable,
  input: SignupInput,
  kind: PretendedSendKind,
  answer: ApiResponse | ApiError,
): Promise<ApiResponse | ApiError> {
  if (answer instanceof ApiError) return answer;
  const channel = input.provider === 'email' ? 'email' : 'sms';
  await rememberPretendedSend(ctx, c, { kind, channel, address: input.address });
  // Refused where the real send would be, and counted against the global send limit (delivery/pretended-send.ts).
  await checkPretendedSend(ctx, c, channel, input.address);
  return answer;
}

/**
 * 400 "User already registered" when autoconfirm is on (docs/api.md#post-signup), returned for the caller
 * to throw after the commit; otherwise a fabricated user of a real answer's shape with no identities, as
 * the original (test/signup.test.ts).
 */
function confirmedDuplicate(ctx: AppContext, input: SignupInput): ApiResponse | ApiError {
  if (ctx.config.mailer.autoconfirm || ctx.config.sms.autoconfirm) return apiError('user_already_exists');
  return { body: fakeUser(ctx, input) };
}

async function confirmationAnswer(ctx: AppContext, c: Queryable, user: UserRow, input: SignupInput, resend: boolean, req: ApiRequest) {
  const sent = await sendConfirmation(ctx, c, user, { ...input, checkInterval: resend, req });
  // Whoever signs up with an invited address learns nothing of what the admin attached to the invitation.
  if (sent.user.invited_at) return userJson({ ...sent.user, raw_user_meta_data: {} }, []);
  // Nor, signing up again with an address still unconfirmed, of the account's other sign-in methods: only the
  // identity of the provider signed up with is shown, as the original shows it. An account without one (made
  // by an OAuth sign-in whose provider did not verify the address) shows none, and none of the provider's
  // claims its user_metadata holds.
  const own = (await findIdentitiesByUser(c, user.id)).filter((identity) => identity.provider === input.provider);
  return own.length > 0 ? userJson(sent.user, own) : userJson({ ...sent.user, raw_user_meta_data: {} }, []);
}

function fakeUser(ctx: AppContext, input: SignupInput): Record<string, unknown> {
  // A real answer's times come from the database, with microseconds, all three the transaction's time
  // (markConfirmationSent): a fabricated one with milliseconds only, or with times apart, would give
  // itself away. The clock's own microseconds, as every time the service sets (micro-clock.ts).
  const now = nowTimestamp();
  const row = newUserRow(
    {
      provider: input.provider,
      address: input.address,
      aud: input.aud,
      role: ctx.config.jwt.defaultGroupName,
      passwordHash: null,
      data: input.data,
      confirmed: false,
    },
    now,
  );
  row.confirmation_sent_at = row.created_at;
  // identities: [] as the original answers: auth-js's documentation tells apps to read it as "already registered".
  return userJson(row, []);
}

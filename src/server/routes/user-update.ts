// PUT /user (docs/api.md#put-user): the refusals in the original's order, the password checks (which hash
// outside any transaction), then one transaction that writes every change and sends every message, so
// a failed send leaves the user as it was. Who may change what is judged again on the row the transaction
// locks; a password a concurrent change replaced before that transaction is checked again, against the new
// one, before the transaction runs again.
import { ApiError, apiError } from '../errors.js';
import type { Queryable } from '../../db/pool.js';
import { sendingTx } from '../delivery/sending-tx.js';
import { findUserById, lockLiveUserById, updateUser, type UserRow } from '../../db/users.js';
import { deleteOneTimeTokens } from '../../db/one-time-tokens.js';
import { deleteSessions } from '../../db/sessions.js';
import { assertSessionStillLive } from '../auth/session-still-live.js';
import { assuranceOf, findFactorsByUser } from '../../db/mfa-factors.js';
import { findIdentitiesByUser } from '../../db/identities.js';
import { writeAudit } from '../../db/audit-log.js';
import type { Authenticated } from '../auth/bearer.js';
import { normaliseEmail, normalisePhone } from '../users/addresses.js';
import { bodySchema, type BodyOf } from '../http/validate.js';
import { adoptAddress, assertAddressFree } from '../users/change-address.js';
import type { AddressProvider } from '../users/create.js';
import { addressChangeNotices, notice, sendNotifications, type Notification } from '../delivery/notifications.js';
import { sendEmailChange } from '../users/email-change.js';
import { assertEmailFreeFor } from '../users/duplicate-email.js';
import { sendPhoneChange } from '../users/phone-change.js';
import { assertPasswordAcceptable, checkAgainstStored, checkNewPassword, newPasswordWrite } from '../users/password-change.js';
import { addEmailIdentityForFirstPassword, isFirstPassword } from '../users/first-password-identity.js';
import { userJson } from '../users/user-json.js';
import { mergeMetadata as merged } from '../users/merge-metadata.js';
import { PKCE_FIELDS, emailChangePkce, type PkceParams } from '../verify/pkce-challenge.js';
import { redirectTarget } from '../http/redirect-target.js';
import { CHANNEL_FIELD, phoneChannel } from '../delivery/sms/channel-field.js';
import { actorOf } from '../users/actor.js';
import { prepareSmsSend } from '../delivery/send-token.js';
import type { AppContext } from '../context.js';
import type { ApiRequest, GuardedHandler } from '../http/types.js';

interface UserUpdate {
  email: string | null;
  phone: string | null;
  password: string | null;
  nonce: string;
  data: Record<string, unknown> | null;
  appMetadata: Record<string, unknown> | null;
  channel: 'sms' | 'whatsapp';
  pkce: PkceParams | null;
  redirectTo: string;
}

/** The transaction's answer when the password changed since it was checked (putUser checks it again). */
const PASSWORD_REPLACED = Symbol('password replaced');

const FIELDS = {
  email: 'string',
  phone: 'string',
  password: 'string',
  current_password: 'string',
  app_metadata: 'object',
  nonce: 'string',
  data: 'object',
  ...CHANNEL_FIELD,
  ...PKCE_FIELDS,
} as const;
export const putUserBody = bodySchema(FIELDS);
type UserUpdateBody = BodyOf<typeof FIELDS>;

export const putUser: GuardedHandler<Authenticated, UserUpdateBody> = async (req, ctx, { user, session }) => {
  const body = req.body();
  // The refusals in the original's order (docs/api.md#put-user): the body's formats and the password's
  // policy, then who may change what, then whether the addresses are free, then the password's proofs.
  const update = readUpdate(ctx, user, body, redirectTarget(req, ctx));
  if (update.password !== null) await assertPasswordAcceptable(ctx, update.password, req);
  const sessionId = session?.id ?? null; // null: the token names no session (docs/api.md#who-may-call)
  await assertMayChange(ctx, ctx.db, user, sessionId, update, body);
  if (update.email) await assertEmailFreeFor(ctx, ctx.db, user, update.email);
  if (update.phone) await assertAddressFree(ctx.db, user, 'phone', update.phone);
  const proofs = { password: body.current_password ?? null, sessionId };
  const passwordHash = update.password === null ? null : await checkNewPassword(ctx, user, update.password, update.nonce, proofs, req);
  // Collected by the attempt that commits (sendingTx may run the function again) and sent after it.
  let notifications: Notification[] = [];
  // `checked`: the row the password checks ran against, read before the lock.
  const write = (checked: UserRow, passwordHash: string | null) =>
    sendingTx(ctx, req.signal, async (c): Promise<UserRow | ApiError | typeof PASSWORD_REPLACED> => {
      notifications = [];
      // Locked and re-read: concurrent updates of one user merge metadata and pass send limits one at a time.
      let current = await lockLiveUserById(c, user.id);
      // Deleted, or soft-deleted (its addresses obfuscated), by a concurrent request since the bearer check.
      if (!current) return apiError('user_not_found');
      // Ended since the bearer check by a change that held the lock first (another session's new password
      // ends this one): refused as a request sent after it, or a stolen session's change raced past its end.
      await assertSessionStillLive(c, sessionId);
      const change = stillChanges(ctx, update, current, body);
      // Judged again on the row as locked: a change that went first (a factor unenrolled, downgrading this
      // session; the admin role taken away) refuses this one as it would refuse a request sent after it.
      await assertMayChange(ctx, c, current, sessionId, change, body);
      // A concurrent change replaced the password the checks ran against (the current password named, the
      // same-password check): checked again against the new one below, as a request sent after it would be,
      // so two changes naming one current password cannot both succeed.
      if (passwordHash && current.encrypted_password !== checked.encrypted_password) return PASSWORD_REPLACED;
      if (passwordHash) {
        const firstPassword = isFirstPassword(current, update.password);
        current = await changePassword(c, req, current, passwordHash, sessionId);
        // Before the metadata merge, as the original: an admin-group user's own app_metadata has the last word.
        if (firstPassword) current = await addEmailIdentityForFirstPassword(ctx.config, c, current);
        // To the address the user had when the password changed, as the original (an anonymous user has none).
        notifications.push(...notice(ctx, { kind: 'passwordChanged', user: current }));
      }
      current = await mergeMetadata(c, current, change);
      const emailAtOnce = !!change.email && current.is_anonymous && ctx.config.mailer.autoconfirm;
      const phoneAtOnce = !!change.phone && ctx.config.sms.autoconfirm;
      // An address taken at once voids the user's earlier links and codes, as a confirmed change does in
      // /verify and as the original. Voided before this request sends any, so an email-change link sent
      // along with an autoconfirmed phone still works (the original voids it too: docs/differences.md).
      if (emailAtOnce || phoneAtOnce) await deleteOneTimeTokens(c, user.id);
      // The phone code's needs before the email change's mails go out, so no attempt mails and then starts over.
      if (change.phone && !phoneAtOnce) prepareSmsSend(ctx, c, change.phone);
      if (emailAtOnce) current = await takeAddress(ctx, c, req, current, 'email', change.email!, notifications);
      else if (change.email) {
        const { redirectTo, pkce } = change;
        current = await sendEmailChange(ctx, c, current, { newEmail: change.email, redirectTo, pkce, req });
      }
      if (phoneAtOnce) {
        current = await takeAddress(ctx, c, req, current, 'phone', change.phone!, notifications);
      } else if (change.phone) {
        current = (await sendPhoneChange(ctx, c, current, change.phone, change.channel, req)).user;
      }
      await writeAudit(c, req, actorOf(current), 'user_modified');
      return current;
    });
  let outcome = await write(user, passwordHash);
  while (outcome === PASSWORD_REPLACED) {
    // The nonce, if one was needed, was spent above: it proved the request, whatever password it replaces.
    const fresh = await findUserById(ctx.db, user.id);
    if (!fresh) throw apiError('user_not_found');
    outcome = await write(fresh, await checkAgainstStored(ctx, fresh, update.password!, proofs, req));
  }
  if (outcome instanceof ApiError) throw outcome;
  await sendNotifications(ctx, req, notifications);
  const [identities, factors] = await Promise.all([findIdentitiesByUser(ctx.db, outcome.id), findFactorsByUser(ctx.db, outcome.id)]);
  return { body: userJson(outcome, identities, factors) };
};

/** The body read and its formats checked (email, phone, channel, PKCE); an address the user already has is no change. */
function readUpdate(ctx: AppContext, user: UserRow, body: UserUpdateBody, redirectTo: string): UserUpdate {
  const emailText = body.email ?? '';
  const phoneText = body.phone ?? '';
  const email = emailText ? normaliseEmail(emailText) : null;
  const phone = phoneText ? normalisePhone(phoneText) : null;
  // Read only with a phone, even the user's current one, as the original; without, it is ignored.
  const channel = phone ? phoneChannel(ctx, body.channel) : 'sms';
  const newEmail = email && email !== user.email ? email : null;
  return {
    email: newEmail,
    phone: phone && phone !== user.phone ? phone : null,
    password: body.password ?? null,
    nonce: body.nonce ?? '',
    data: body.data ?? null,
    appMetadata: body.app_metadata ?? null,
    channel,
    // Only a mailed email change carries a flow, so only it reads the PKCE fields, as the original: an
    // anonymous user's address taken at once (MAILER_AUTOCONFIRM) ignores them.
    pkce: newEmail && !(user.is_anonymous && ctx.config.mailer.autoconfirm) ? emailChangePkce(body) : null,
    redirectTo,
  };
}

/**
 * The update's addresses against the row as locked: the bearer check's read may be stale, and an address a
 * concurrent request took since is no change, as it is for a request sent after that one (no second take, no
 * change mail to the address the user holds). The PKCE fields are read here when the stale read had the user
 * anonymous under MAILER_AUTOCONFIRM (its address taken at once, so none read) but it is permanent now, and
 * its change is mailed. An address that became a change only since is left no change: the checks a change
 * needs (aal2, a free address) ran before the lock for what the request could then change.
 */
function stillChanges(ctx: AppContext, update: UserUpdate, locked: UserRow, body: UserUpdateBody): UserUpdate {
  const email = update.email !== locked.email ? update.email : null;
  const phone = update.phone !== locked.phone ? update.phone : null;
  const mailed = !!email && !(locked.is_anonymous && ctx.config.mailer.autoconfirm);
  return { ...update, email, phone, pkce: mailed ? (update.pkce ?? emailChangePkce(body)) : null };
}

/**
 * Who may change what, in the original's order (docs/api.md#put-user): checked before the password's proofs
 * on the row the bearer check read, and again inside the transaction on the row as locked.
 */
async function assertMayChange(
  ctx: AppContext,
  q: Queryable,
  user: UserRow,
  sessionId: string | null,
  update: UserUpdate,
  body: UserUpdateBody,
): Promise<void> {
  if (update.appMetadata && !(user.aud === ctx.config.jwt.aud && user.role === ctx.config.jwt.adminGroupName)) {
    throw apiError('app_metadata_not_admin');
  }
  await requireAal2ForSensitiveChange(q, user.id, sessionId, update);
  assertAllowedFor(user, update, body);
}

/**
 * An anonymous user sets a password only with the address that makes it permanent; an SSO user's addresses
 * and password belong to the IdP (docs/sso-saml.md#users). Its own address, in any case, is no change.
 */
function assertAllowedFor(user: UserRow, update: UserUpdate, body: UserUpdateBody): void {
  if (user.is_anonymous && update.password && !body.email && !body.phone) throw apiError('anonymous_password_only');
  if (user.is_sso_user && (!!update.password || !!update.email || !!update.phone || !!update.nonce)) {
    throw apiError('user_sso_managed');
  }
}

/** With a verified MFA factor, a new password, email or phone needs an aal2 session (docs/mfa.md#assurance-levels). */
async function requireAal2ForSensitiveChange(q: Queryable, userId: string, sessionId: string | null, update: UserUpdate): Promise<void> {
  if (!update.password && !update.email && !update.phone) return;
  const { aal, hasVerifiedFactor } = await assuranceOf(q, userId, sessionId);
  if (hasVerifiedFactor && aal !== 'aal2' && aal !== 'aal3') throw apiError('insufficient_aal_user_update');
}

/**
 * A new password ends every other session (every session, for a token that names none) and voids pending
 * one-time tokens (docs/api.md#put-user).
 */
async function changePassword(
  c: Queryable,
  req: ApiRequest,
  user: UserRow,
  passwordHash: string,
  sessionId: string | null,
): Promise<UserRow> {
  const updated = await updateUser(c, user.id, newPasswordWrite(passwordHash));
  await deleteSessions(c, user.id, sessionId ? 'others' : 'all', sessionId ?? undefined);
  await deleteOneTimeTokens(c, user.id);
  await writeAudit(c, req, actorOf(updated), 'user_updated_password');
  return updated;
}

/** `data` merges into user_metadata and `app_metadata` into app_metadata, one level deep; a null value deletes its key. */
async function mergeMetadata(c: Queryable, user: UserRow, update: UserUpdate): Promise<UserRow> {
  if (!update.data && !update.appMetadata) return user;
  return updateUser(c, user.id, {
    raw_user_meta_data: update.data ? merged(user.raw_user_meta_data, update.data) : undefined,
    raw_app_meta_data: update.appMetadata ? merged(user.raw_app_meta_data, update.appMetadata) : undefined,
  });
}

/**
 * An address taken without confirmation (an anonymous user's email under MAILER_AUTOCONFIRM, any phone under
 * SMS_AUTOCONFIRM), with the user_modified entry the original's confirmation writes besides the request's
 * own, by the user as it was. app_metadata is left as it is, as in the original.
 */
async function takeAddress(
  ctx: AppContext,
  c: Queryable,
  req: ApiRequest,
  user: UserRow,
  provider: AddressProvider,
  address: string,
  notifications: Notification[],
): Promise<UserRow> {
  await writeAudit(c, req, actorOf(user), 'user_modified');
  const adopted = await adoptAddress(c, user, provider, address);
  notifications.push(...addressChangeNotices(ctx, user, adopted.user, provider, adopted.identityCreated));
  return adopted.user;
}

// PUT /admin/users/{user_id} (docs/api.md#put-adminusersuser_id): updates only the fields the body names (role, password,
// email and phone with their identities, metadata, ban, then the confirmations), and
// audits user_modified. A new password ends the user's sessions. A new address taken by another user is a 422, not a database error.
import { apiError } from '../errors.js';
import { tx, type Queryable } from '../../db/pool.js';
import { isEmailTaken, isPhoneTaken, lockUserById, updateUser, type UserRow, type UserWrite } from '../../db/users.js';
import { findIdentitiesByUser, insertIdentity, mergeIdentityData } from '../../db/identities.js';
import { findFactorsByUser } from '../../db/mfa-factors.js';
import { deleteOneTimeTokens } from '../../db/one-time-tokens.js';
import { deleteSessions } from '../../db/sessions.js';
import { writeAudit } from '../../db/audit-log.js';
import { normaliseEmail, normalisePhone } from '../users/addresses.js';
import { confirmAddress, identityData, type AddressProvider } from '../users/create.js';
import { userJson } from '../users/user-json.js';
import { addEmailIdentityForFirstPassword, isFirstPassword } from '../users/first-password-identity.js';
import type { Admin } from '../auth/admin.js';
import { loadUser } from '../admin/load-user.js';
import { storedPassword } from '../admin/password.js';
import { readAdminUserParams, type AdminUserBody, type AdminUserParams } from '../admin/user-params.js';
import { mergeMetadata } from '../users/merge-metadata.js';
import type { GuardedHandler } from '../http/types.js';
import type { Config } from '../config/types.js';
import { storedPasswordHash } from '../users/password-at-rest.js';
import { newPasswordWrite } from '../users/password-change.js';

export const adminUpdateUser: GuardedHandler<Admin, AdminUserBody> = async (req, ctx, admin) => {
  const found = await loadUser(ctx.db, req);
  const params = readAdminUserParams(req.body());
  const email = params.email ? normaliseEmail(params.email) : undefined;
  const phone = params.phone ? normalisePhone(params.phone) : undefined;
  // An SSO user may share an address with an account of another kind, as the unique index allows and the
  // original lets the admin API give it one.
  if (email && !found.is_sso_user && (await isEmailTaken(ctx.db, email, found.id))) throw apiError('email_exists');
  if (phone && (await isPhoneTaken(ctx.db, phone, found.id))) throw apiError('phone_exists_admin');
  const passwordHash = await storedPassword(ctx, params, true, req);
  const body = await tx(
    ctx.db,
    async (c) => {
      const locked = await lockUserById(c, found.id);
      // Deleted by a concurrent request since loadUser found it.
      if (!locked) throw apiError('admin_user_not_found');
      if (email) await setAddress(c, locked, 'email', email, params.emailConfirm);
      if (phone) await setAddress(c, locked, 'phone', phone, params.phoneConfirm);
      // A changed address makes links already sent to the old one untrustworthy.
      if (email || phone) await deleteOneTimeTokens(c, locked.id);
      let user = await updateUser(
        c,
        locked.id,
        changes(locked, params, email, phone, passwordHash && storedPasswordHash(ctx.config, locked.id, passwordHash)),
      );
      // As the original: a password set by an admin ends every session and voids every pending link and code,
      // which is how an operator takes a compromised account back.
      if (passwordHash) {
        await deleteSessions(c, locked.id, 'all');
        await deleteOneTimeTokens(c, locked.id);
      }
      // Confirming after the address is set, so a user given a first address gets it confirmed too.
      if (params.emailConfirm && user.email) user = await confirmAddress(c, user, 'email');
      if (params.phoneConfirm && user.phone) user = await confirmAddress(c, user, 'phone');
      // The request's user_metadata has the last word over the confirmation's email_verified / phone_verified,
      // as the original merges it after confirming.
      if ((params.emailConfirm || params.phoneConfirm) && params.userMetadata) {
        user = await updateUser(c, user.id, { raw_user_meta_data: mergeMetadata(user.raw_user_meta_data, params.userMetadata) });
      }
      // As the original's confirmation: an admin's voids every pending link and code (the sign-up's
      // confirmation mail among them), as an operator confirms by hand when the mail sent is not trusted.
      if (params.emailConfirm || params.phoneConfirm) await deleteOneTimeTokens(c, locked.id);
      // After the address and its confirmation, so an admin who sets both gets the identity they describe.
      if (isFirstPassword(locked, params.password)) user = await firstPasswordIdentity(ctx.config, c, user, params);
      await writeAudit(c, req, admin.actor, 'user_modified', {
        user_id: user.id,
        user_email: user.email ?? '',
        user_phone: user.phone ?? '',
      });
      // With its factors, as the original loads the user whole (and as GET /admin/users/{user_id} answers).
      return userJson(user, await findIdentitiesByUser(c, user.id), await findFactorsByUser(c, user.id));
    },
    req.signal,
  ).catch((err: unknown) => rethrowTakenAddress(ctx.db, err, found.id, email, phone));
  return { body };
};

/**
 * A concurrent request gave the new email or phone to another user between the checks above and this write,
 * and the unique index refused it: the same 422 as the check, not a database error.
 */
async function rethrowTakenAddress(q: Queryable, err: unknown, userId: string, email?: string, phone?: string): Promise<never> {
  if ((err as { code?: string }).code === '23505') {
    if (email && (await isEmailTaken(q, email, userId))) throw apiError('email_exists');
    if (phone && (await isPhoneTaken(q, phone, userId))) throw apiError('phone_exists_admin');
  }
  throw err;
}

function changes(user: UserRow, p: AdminUserParams, email?: string, phone?: string, passwordHash?: string): UserWrite {
  const write: UserWrite = { role: p.role, email, phone, ...(passwordHash ? newPasswordWrite(passwordHash) : {}) };
  if (p.appMetadata) write.raw_app_meta_data = mergeMetadata(user.raw_app_meta_data, p.appMetadata);
  if (p.userMetadata) write.raw_user_meta_data = mergeMetadata(user.raw_user_meta_data, p.userMetadata);
  if (p.bannedUntil !== undefined) write.banned_until = p.bannedUntil;
  // An anonymous user given a confirmed address becomes a permanent one (docs/users-and-audit.md#anonymous-users).
  if (user.is_anonymous && ((email && p.emailConfirm) || (phone && p.phoneConfirm))) write.is_anonymous = false;
  return write;
}

/**
 * The email identity of a first password (docs/users-and-audit.md#email-identity-on-first-password). The
 * original merges the request's app_metadata after re-deriving the provider list, so a `provider` or
 * `providers` the admin sends wins over the derived one; merged again here for that order.
 */
async function firstPasswordIdentity(config: Config, c: Queryable, user: UserRow, p: AdminUserParams): Promise<UserRow> {
  const after = await addEmailIdentityForFirstPassword(config, c, user);
  if (after === user || !p.appMetadata) return after;
  return updateUser(c, user.id, { raw_app_meta_data: mergeMetadata(after.raw_app_meta_data, p.appMetadata) });
}

/** Creates the address's identity, or updates the one the user has (docs/api.md#put-adminusersuser_id). */
async function setAddress(c: Queryable, user: UserRow, provider: AddressProvider, address: string, verified: boolean): Promise<void> {
  const identities = await findIdentitiesByUser(c, user.id);
  const flag = provider === 'email' ? 'email_verified' : 'phone_verified';
  if (identities.some((i) => i.provider === provider)) {
    await mergeIdentityData(c, user.id, provider, { [provider]: address, [flag]: verified });
  } else {
    await insertIdentity(c, { userId: user.id, provider, providerId: user.id, data: identityData(provider, user.id, address, verified) });
  }
}

// POST /admin/users and POST /admin/users/{user_id} (docs/api.md#post-adminusers, docs/differences.md#admin-api; both are kept, the
// second creating the user with the id of its path). The checks run in the original's order, then one
// transaction writes the user, its email/phone identities, the admin's settings and the audit row.
import { randomUUID } from 'node:crypto';
import { apiError, type ApiError } from '../errors.js';
import { tx, type Queryable } from '../../db/pool.js';
import { findUserById, isEmailTaken, isPhoneTaken, type UserRow } from '../../db/users.js';
import { findEmailHolder } from '../users/duplicate-email.js';
import { insertNewUser } from '../users/insert-new-user.js';
import { findIdentitiesByUser, insertIdentity } from '../../db/identities.js';
import { writeAudit } from '../../db/audit-log.js';
import { normaliseEmail, normalisePhone } from '../users/addresses.js';
import { confirmAddress, identityData, type AddressProvider } from '../users/create.js';
import { userJson } from '../users/user-json.js';
import { adminAudience, type Admin } from '../auth/admin.js';
import { NIL_UUID, readUuid } from '../uuid-text.js';
import { storedPassword } from '../admin/password.js';
import { readAdminUserParams, type AdminUserBody, type AdminUserParams } from '../admin/user-params.js';
import { mergeMetadata } from '../users/merge-metadata.js';
import type { AppContext } from '../context.js';
import type { ApiRequest, GuardedHandler } from '../http/types.js';
import { storedPasswordHash } from '../users/password-at-rest.js';

interface NewAdminUser {
  id: string;
  aud: string;
  email?: string;
  phone?: string;
  passwordHash?: string;
}

export const adminCreateUser: GuardedHandler<Admin, AdminUserBody> = async (req, ctx, admin) => {
  const params = readAdminUserParams(req.body());
  const aud = params.aud ?? adminAudience(req, ctx);
  if (!params.email && !params.phone) throw apiError('admin_user_no_address');
  const email = params.email ? normaliseEmail(params.email) : undefined;
  // Held as a users.email in any audience (the unique index spans them), or as another user's identity email
  // in this audience, as the original's duplicate check counts it (users/duplicate-email.ts).
  if (email && ((await isEmailTaken(ctx.db, email)) || (await findEmailHolder(ctx, ctx.db, email, aud, null)))) {
    throw apiError('email_exists');
  }
  const phone = params.phone ? normalisePhone(params.phone) : undefined;
  if (phone && (await isPhoneTaken(ctx.db, phone))) throw apiError('phone_exists_admin');
  // Chosen here when not given, so that a sealed password hash (password-at-rest.ts) is bound to it.
  const id = checkedId(req.params.user_id ?? params.id) ?? randomUUID();
  const passwordHash = await storedPassword(ctx, params, false, req);
  const user = await tx(ctx.db, (c) => create(ctx, c, req, admin, params, { id, aud, email, phone, passwordHash }), req.signal);
  return { body: user };
};

function checkedId(id: string | undefined): string | undefined {
  if (id === undefined) return undefined;
  // Any spelling the original's UUID reading takes; the user is stored under the canonical form.
  const read = readUuid(id);
  if ('error' in read) throw apiError('admin_id_format');
  if (read.uuid === NIL_UUID) throw apiError('admin_id_nil');
  return read.uuid;
}

async function create(ctx: AppContext, c: Queryable, req: ApiRequest, admin: Admin, params: AdminUserParams, u: NewAdminUser) {
  const providers: AddressProvider[] = [...(u.email ? ['email' as const] : []), ...(u.phone ? ['phone' as const] : [])];
  const inserted = await insertNewUser(
    c,
    {
      id: u.id,
      aud: u.aud,
      role: params.role ?? ctx.config.jwt.defaultGroupName,
      email: u.email ?? null,
      phone: u.phone ?? null,
      encrypted_password: u.passwordHash ? storedPasswordHash(ctx.config, u.id, u.passwordHash) : null,
      raw_user_meta_data: params.userMetadata ?? {},
      // The original names the providers first, then merges the admin's app_metadata over them.
      raw_app_meta_data: mergeMetadata({ provider: providers[0], providers }, params.appMetadata ?? {}),
      banned_until: params.bannedUntil ?? null,
    },
    'database_error_creating_user',
  );
  if (!inserted) throw await conflictOf(c, u);
  for (const provider of providers) {
    const address = provider === 'email' ? u.email! : u.phone!;
    await insertIdentity(c, {
      userId: inserted.id,
      provider,
      providerId: inserted.id,
      data: identityData(provider, inserted.id, address, false),
    });
  }
  let user: UserRow = inserted;
  if (params.emailConfirm && u.email) user = await confirmAddress(c, user, 'email');
  if (params.phoneConfirm && u.phone) user = await confirmAddress(c, user, 'phone');
  await writeAudit(c, req, admin.actor, 'user_signedup', {
    user_id: user.id,
    user_email: user.email ?? '',
    user_phone: user.phone ?? '',
    provider: providers[0],
  });
  return userJson(user, await findIdentitiesByUser(c, user.id));
}

// The insert found its email, phone or id taken: a concurrent request won, or the path's id exists.
async function conflictOf(c: Queryable, u: NewAdminUser): Promise<ApiError> {
  if (u.id && (await findUserById(c, u.id))) return apiError('user_id_exists');
  if (u.email && (await isEmailTaken(c, u.email))) return apiError('email_exists');
  return apiError('phone_exists_admin');
}

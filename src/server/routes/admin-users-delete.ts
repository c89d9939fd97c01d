// DELETE /admin/users/{user_id} (docs/users-and-audit.md#deletion): hard by default, which ends every session and
// refresh token of the user in the same transaction (foreign-key cascade); `should_soft_delete: true`
// anonymises the row instead. An already soft-deleted user is a no-op 200. The answer is `{}`.
import { apiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import { writeAudit } from '../../db/audit-log.js';
import { lockUserById } from '../../db/users.js';
import { hardDeleteUser, softDeleteUser } from '../../db/user-deletion.js';
import type { Admin } from '../auth/admin.js';
import { loadUser } from '../admin/load-user.js';
import type { GuardedHandler } from '../http/types.js';
import { bodySchema, type BodyOf } from '../http/validate.js';

const FIELDS = { should_soft_delete: 'boolean' } as const;
export const deleteUserBody = bodySchema(FIELDS);

export const adminDeleteUser: GuardedHandler<Admin, BodyOf<typeof FIELDS>> = async (req, ctx, admin) => {
  const found = await loadUser(ctx.db, req);
  const soft = req.body().should_soft_delete ?? false;
  await tx(
    ctx.db,
    async (c) => {
      // Locked and read again: of concurrent deletions only the first finds the user as loadUser did; the
      // others answer as a repeat made after it (404, or the no-op of an already soft-deleted user).
      const user = await lockUserById(c, found.id);
      if (!user) throw apiError('admin_user_not_found');
      // Audited before the deletion, and also for the no-op, as the original does.
      await writeAudit(c, req, admin.actor, 'user_deleted', {
        user_id: user.id,
        user_email: user.email ?? '',
        user_phone: user.phone ?? '',
      });
      if (!soft) return hardDeleteUser(c, user.id);
      if (!user.deleted_at) await softDeleteUser(c, user);
    },
    req.signal,
  );
  return { body: {} };
};

// GET /admin/users/{user_id}/passkeys and DELETE /admin/users/{user_id}/passkeys/{passkey_id}
// (docs/passkeys.md#admin): an operator lists or removes a user's passkeys, audited as the admin.
import { apiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import { writeAudit } from '../../db/audit-log.js';
import { deleteCredential, listCredentials } from '../../db/webauthn-credentials.js';
import type { Admin } from '../auth/principal.js';
import type { GuardedHandler } from '../http/types.js';
import { loadUser } from '../admin/load-user.js';
import { passkeyJson } from '../passkeys/passkey-json.js';
import { passkeyIdParam } from './passkeys-manage.js';

export const adminListPasskeys: GuardedHandler<Admin> = async (req, ctx) => {
  const user = await loadUser(ctx.db, req);
  return { body: (await listCredentials(ctx.db, user.id)).map(passkeyJson) };
};

export const adminDeletePasskey: GuardedHandler<Admin> = async (req, ctx, admin) => {
  const user = await loadUser(ctx.db, req);
  const id = passkeyIdParam(req);
  await tx(
    ctx.db,
    async (c) => {
      // One statement: of concurrent deletions only the one that removed the row answers 204.
      if (!(await deleteCredential(c, id, user.id))) throw apiError('passkey_not_found');
      await writeAudit(c, req, admin.actor, 'passkey_deleted', { user_id: user.id, passkey_id: id }, req.ip);
    },
    req.signal,
  );
  return { status: 204 };
};

// GET /passkeys, PATCH and DELETE /passkeys/{passkey_id} (docs/passkeys.md#managing-passkeys): a user's own
// passkeys. An id that is malformed or not the caller's is the same 404. A rename or deletion takes the
// user's row before the passkey's, as the user's deletion (whose cascade reaches the passkey) and a passkey
// sign-in do: the other way round they could deadlock. Under that lock the session is checked again.
import { apiError } from '../errors.js';
import { tx, type Queryable } from '../../db/pool.js';
import { lockLiveUserById } from '../../db/users.js';
import { assertSessionStillLive } from '../auth/session-still-live.js';
import { writeAudit } from '../../db/audit-log.js';
import { deleteCredential, listCredentials, renameCredential } from '../../db/webauthn-credentials.js';
import type { Authenticated } from '../auth/principal.js';
import type { ApiRequest, GuardedHandler } from '../http/types.js';
import { bodySchema, type BodyOf } from '../http/validate.js';
import { canonicalUuid } from '../uuid-text.js';
import { actorOf } from '../users/actor.js';
import { passkeyJson } from '../passkeys/passkey-json.js';
import { requireManagementAal } from '../passkeys/management-checks.js';

export const listPasskeys: GuardedHandler<Authenticated> = async (_req, ctx, { user }) => {
  const rows = await listCredentials(ctx.db, user.id);
  return { body: rows.map(passkeyJson) };
};

const FIELDS = { friendly_name: 'string' } as const;
export const renamePasskeyBody = bodySchema(FIELDS);

/** The original counts bytes (Go's len), so 120 bytes of UTF-8. */
const MAX_NAME_BYTES = 120;

export const renamePasskey: GuardedHandler<Authenticated, BodyOf<typeof FIELDS>> = async (req, ctx, principal) => {
  const { user } = principal;
  const id = passkeyIdParam(req);
  const name = req.body().friendly_name ?? '';
  if (!name) throw apiError('passkey_name_required');
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) throw apiError('passkey_name_too_long');
  const renamed = await tx(
    ctx.db,
    async (c) => {
      await lockUserForSession(c, principal);
      // Not the caller's, or deleted since: the update finds no row, and nothing is audited.
      const row = await renameCredential(c, id, user.id, name);
      if (!row) throw apiError('passkey_not_found');
      await writeAudit(c, req, actorOf(user), 'passkey_updated', { passkey_id: id }, req.ip);
      return row;
    },
    req.signal,
  );
  return { body: passkeyJson(renamed) };
};

export const deletePasskey: GuardedHandler<Authenticated> = async (req, ctx, principal) => {
  await requireManagementAal(ctx.db, principal);
  const { user } = principal;
  const id = passkeyIdParam(req);
  await tx(
    ctx.db,
    async (c) => {
      await lockUserForSession(c, principal);
      // Of concurrent deletions only the one whose statement removed the row answers 204; the others, a 404.
      if (!(await deleteCredential(c, id, user.id))) throw apiError('passkey_not_found');
      await writeAudit(c, req, actorOf(user), 'passkey_deleted', { passkey_id: id }, req.ip);
    },
    req.signal,
  );
  return { status: 204 };
};

/**
 * Locks the caller's row, before any passkey's. A user deleted (or soft-deleted) since the bearer check is
 * 403 user_not_found, as at registration; a session ended since (another session's new password, a
 * logout) is 403 session_not_found: neither renames or deletes a passkey.
 */
async function lockUserForSession(c: Queryable, { user, session }: Authenticated): Promise<void> {
  if (!(await lockLiveUserById(c, user.id))) throw apiError('user_not_found');
  await assertSessionStillLive(c, session?.id ?? null);
}

/** The {passkey_id} of the path in canonical form (any spelling the original's UUID reading takes); a malformed one is the 404 of an unknown one. */
export function passkeyIdParam(req: ApiRequest): string {
  const id = canonicalUuid(req.params.passkey_id);
  if (!id) throw apiError('passkey_not_found');
  return id;
}

// POST /logout?scope=global|local|others (docs/api.md#post-logout; global, the default, is the
// spec's "all refresh tokens of the user"). Deleting sessions cascades to their refresh tokens; access
// tokens stay valid JWTs but fail authenticate() with 403 session_not_found from then on.
import { apiError } from '../errors.js';
import { deleteSessions } from '../../db/sessions.js';
import { keyShareUserRow } from '../../db/users.js';
import { assertSessionStillLive } from '../auth/session-still-live.js';
import { writeAudit } from '../../db/audit-log.js';
import { tx } from '../../db/pool.js';
import type { Authenticated } from '../auth/bearer.js';
import { actorOf } from '../users/actor.js';
import type { GuardedHandler } from '../http/types.js';
import { goQuotedBytes } from '../go-quoted.js';
import { goQueryValueBytes } from '../http/go-query.js';

const SCOPES = { global: 'all', local: 'only', others: 'others' } as const;

// The guard authenticates before the scope is read, as the original does.
export const logout: GuardedHandler<Authenticated> = async (req, ctx, { user, session }) => {
  // Read as the original's Go query parser reads it, so the message quotes the very bytes sent (%FF as \xff).
  const scope = goQueryValueBytes(req.rawQuery, 'scope');
  const scopeName = scope.toString('utf8') || 'global';
  if (!Object.hasOwn(SCOPES, scopeName)) throw apiError('logout_scope', `Unsupported logout scope ${goQuotedBytes(scope)}`);
  // One transaction, the audit entry first, as the original: a failure leaves every session as it was.
  await tx(
    ctx.db,
    async (c) => {
      // The user's row before any session's, as the other writers of the user's sessions take them (an MFA
      // verification upgrades its own session, then ends the others): sessions taken in the other order
      // deadlock with them. A key share waits for those writers (lockUserById) but not for a sign-in's
      // write of last_sign_in_at. After it, a session one of them ended while this waited (another
      // session's new password) is seen gone: refused as a logout sent after that, it ends no session,
      // or a session the owner's new password cut off would sign the owner out everywhere.
      await keyShareUserRow(c, user.id);
      await assertSessionStillLive(c, session?.id ?? null);
      await writeAudit(c, req, actorOf(user), 'logout');
      // A token that names no session signs the user out everywhere, whatever the scope, as the original.
      await deleteSessions(c, user.id, session ? SCOPES[scopeName as keyof typeof SCOPES] : 'all', session?.id);
    },
    req.signal,
  );
  return { status: 204 };
};

// GET and DELETE /user/oauth/grants (docs/oauth-server.md#grants): the apps the signed-in user has
// authorized, and revoking one, which in the same transaction discards the codes approved for that app and
// not yet exchanged and ends every session issued to it for the user (their refresh tokens with them), an
// exchange in progress included. auth-js: supabase.auth.oauth.listGrants() / revokeGrant().
import { apiError } from '../errors.js';
import { tx } from '../../db/pool.js';
import { listActiveGrants, revokeGrant } from '../../db/oauth-consents.js';
import { keyShareUserRow } from '../../db/users.js';
import { assertSessionStillLive } from '../auth/session-still-live.js';
import { writeAudit } from '../../db/audit-log.js';
import { rfc3339Nano } from '../../db/timestamps.js';
import { canonicalUuid } from '../uuid-text.js';
import type { Authenticated } from '../auth/principal.js';
import type { GuardedHandler } from '../http/types.js';
import { actorOf } from '../users/actor.js';
import { clientSummary } from '../oauth-server/client-json.js';
import { parseScopes } from '../oauth-server/scopes.js';

export const listGrants: GuardedHandler<Authenticated> = async (_req, ctx, { user }) => {
  const grants = await listActiveGrants(ctx.db, user.id);
  return {
    body: grants.map((g) => ({
      client: clientSummary({ id: g.client_id, client_name: g.client_name, client_uri: g.client_uri, logo_uri: g.logo_uri }),
      scopes: parseScopes(g.scopes),
      granted_at: rfc3339Nano(g.granted_at),
    })),
  };
};

export const revokeGrantOfClient: GuardedHandler<Authenticated> = async (req, ctx, { user, session }) => {
  const text = req.query.get('client_id') ?? '';
  if (!text) throw apiError('oauth_grant_client_id_required');
  // any spelling the original's UUID reading takes; the canonical form is looked up and audited
  const clientId = canonicalUuid(text);
  if (!clientId) throw apiError('oauth_client_id_format');
  await tx(
    ctx.db,
    async (c) => {
      // After any writer holding the user's row (another session's new password, a deletion): a session that
      // one ended while this waited is seen gone and revokes nothing. A key share, not lockUserById: the
      // codes' delete below waits for an exchange that holds one and then writes the user's row (its sign-in),
      // which a lock held here would keep waiting, a deadlock.
      await keyShareUserRow(c, user.id);
      await assertSessionStillLive(c, session?.id ?? null);
      if (!(await revokeGrant(c, user.id, clientId))) throw apiError('oauth_consent_not_found');
      await writeAudit(c, req, actorOf(user), 'token_revoked', { oauth_client_id: clientId, action: 'revoke_oauth_grant' }, req.ip);
    },
    req.signal,
  );
  return { status: 204 };
};

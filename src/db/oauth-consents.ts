// oauth_consents (sql/00012_oauth_server.sql): what a user agreed to share with a client. One row per
// (user, client); revoking sets revoked_at, approving again clears it.
import type { Queryable } from './pool.js';
import type { OAuthClientRow } from './oauth-clients.js';

export interface ConsentRow {
  client_id: string;
  scopes: string;
  granted_at: Date;
}

/**
 * The user's active consent for a client, share-locked to the end of the caller's transaction: a code approved
 * on its strength commits before a concurrent revoke goes on (which then discards the code), or the revoke
 * commits first and there is no consent to approve with (revokeGrant).
 */
export async function lockActiveConsent(q: Queryable, userId: string, clientId: string): Promise<ConsentRow | null> {
  const { rows } = await q.query<ConsentRow>(
    `select client_id, scopes, granted_at from oauth_consents where user_id = $1::uuid and client_id = $2::uuid and revoked_at is null
        for share`,
    [userId, clientId],
  );
  return rows[0] ?? null;
}

export async function upsertConsent(q: Queryable, userId: string, clientId: string, scopes: string): Promise<void> {
  await q.query(
    `insert into oauth_consents (user_id, client_id, scopes) values ($1::uuid, $2::uuid, $3)
     on conflict (user_id, client_id) do update set scopes = excluded.scopes, granted_at = now(), revoked_at = null`,
    [userId, clientId, scopes],
  );
}

export type GrantRow = ConsentRow & Pick<OAuthClientRow, 'client_name' | 'client_uri' | 'logo_uri'>;

/** The user's active consents with their (live) clients, newest first. */
export async function listActiveGrants(q: Queryable, userId: string): Promise<GrantRow[]> {
  const { rows } = await q.query<GrantRow>(
    `select c.client_id, c.scopes, c.granted_at, cl.client_name, cl.client_uri, cl.logo_uri
     from oauth_consents c join oauth_clients cl on cl.id = c.client_id and cl.deleted_at is null
     where c.user_id = $1::uuid and c.revoked_at is null order by c.granted_at desc`,
    [userId],
  );
  return rows;
}

/**
 * Revokes the user's active consent for a client, then ends what was granted under it: the codes approved and
 * not yet exchanged, and the sessions issued to that client (their refresh tokens go with them). False when
 * there was no active consent. A statement each, in the caller's transaction: the codes' delete waits for an
 * exchange that holds one (lockApprovedCode), which is then refused (the code is gone) or has committed its
 * session, which the sessions' delete, with a snapshot taken after that wait, sees and ends.
 */
export async function revokeGrant(q: Queryable, userId: string, clientId: string): Promise<boolean> {
  const { rowCount } = await q.query(
    `update oauth_consents set revoked_at = greatest(now(), granted_at)
      where user_id = $1::uuid and client_id = $2::uuid and revoked_at is null`,
    [userId, clientId],
  );
  if (!rowCount) return false;
  await q.query(`delete from oauth_authorizations where user_id = $1::uuid and client_id = $2::uuid and status = 'approved'`, [
    userId,
    clientId,
  ]);
  await q.query(`delete from sessions where user_id = $1::uuid and oauth_client_id = $2::uuid`, [userId, clientId]);
  return true;
}

/** The scopes of a session issued to an OAuth client; null for any other session (GET /oauth/userinfo). */
export async function findSessionScopes(q: Queryable, sessionId: string): Promise<string | null> {
  const { rows } = await q.query<{ scopes: string | null }>(
    `select scopes from sessions where id = $1::uuid and oauth_client_id is not null`,
    [sessionId],
  );
  return rows[0]?.scopes ?? null;
}

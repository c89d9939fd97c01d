// oauth_clients (sql/00012_oauth_server.sql): the third-party apps of the OAuth 2.1 server. A deleted
// client keeps its row with deleted_at set and is never found again, as in the original.
import { inTransaction, type Queryable } from './pool.js';

export interface OAuthClientRow {
  id: string;
  client_secret_hash: string | null;
  registration_type: 'dynamic' | 'manual';
  client_type: 'public' | 'confidential';
  token_endpoint_auth_method: 'client_secret_basic' | 'client_secret_post' | 'none';
  /** comma-joined, as the original stores them */
  redirect_uris: string;
  grant_types: string;
  client_name: string | null;
  client_uri: string | null;
  logo_uri: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, client_secret_hash, registration_type, client_type, token_endpoint_auth_method, redirect_uris, grant_types,
                 client_name, client_uri, logo_uri, created_at, updated_at`;

export async function findOAuthClient(q: Queryable, id: string): Promise<OAuthClientRow | null> {
  const { rows } = await q.query<OAuthClientRow>({
    name: 'oauth_client_by_id',
    text: `select ${COLUMNS} from oauth_clients where id = $1::uuid and deleted_at is null`,
    values: [id],
  });
  return rows[0] ?? null;
}

/**
 * Whether the client is still live, read under a share lock by the transaction that issues it a session
 * (src/server/oauth-server/code-grant.ts). The lock conflicts with the delete's row lock (deleteOAuthClient):
 * a delete that comes later waits for that transaction and then ends the session it committed; one that
 * came first leaves nothing to find here (READ COMMITTED re-reads the row once its lock is granted).
 */
export async function lockLiveOAuthClient(q: Queryable, id: string): Promise<boolean> {
  const { rows } = await q.query({
    name: 'oauth_client_lock_live',
    text: `select 1 from oauth_clients where id = $1::uuid and deleted_at is null for share`,
    values: [id],
  });
  return rows.length > 0;
}

/** Every live client, newest first (the original's list has no pagination). */
export async function listOAuthClients(q: Queryable): Promise<OAuthClientRow[]> {
  const { rows } = await q.query<OAuthClientRow>(
    `select ${COLUMNS} from oauth_clients where deleted_at is null order by created_at desc, id`,
  );
  return rows;
}

export type NewOAuthClient = Omit<OAuthClientRow, 'created_at' | 'updated_at'>;

export async function insertOAuthClient(q: Queryable, c: NewOAuthClient): Promise<OAuthClientRow> {
  const { rows } = await q.query<OAuthClientRow>(
    `insert into oauth_clients (id, client_secret_hash, registration_type, client_type, token_endpoint_auth_method,
                                redirect_uris, grant_types, client_name, client_uri, logo_uri)
     values ($1::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10) returning ${COLUMNS}`,
    [
      c.id,
      c.client_secret_hash,
      c.registration_type,
      c.client_type,
      c.token_endpoint_auth_method,
      c.redirect_uris,
      c.grant_types,
      c.client_name,
      c.client_uri,
      c.logo_uri,
    ],
  );
  return rows[0];
}

export type OAuthClientChanges = Partial<
  Pick<OAuthClientRow, 'redirect_uris' | 'grant_types' | 'client_name' | 'client_uri' | 'logo_uri' | 'token_endpoint_auth_method'>
>;

/** Changes the fields given (an absent one keeps its value); null when the client is gone. */
export async function updateOAuthClient(q: Queryable, id: string, ch: OAuthClientChanges): Promise<OAuthClientRow | null> {
  const { rows } = await q.query<OAuthClientRow>(
    `update oauth_clients set redirect_uris = coalesce($2, redirect_uris), grant_types = coalesce($3, grant_types),
                              client_name = case when $4::boolean then $5 else client_name end,
                              client_uri = case when $6::boolean then $7 else client_uri end,
                              logo_uri = case when $8::boolean then $9 else logo_uri end,
                              token_endpoint_auth_method = coalesce($10, token_endpoint_auth_method), updated_at = now()
     where id = $1::uuid and deleted_at is null returning ${COLUMNS}`,
    [
      id,
      ch.redirect_uris ?? null,
      ch.grant_types ?? null,
      'client_name' in ch,
      ch.client_name ?? null,
      'client_uri' in ch,
      ch.client_uri ?? null,
      'logo_uri' in ch,
      ch.logo_uri ?? null,
      ch.token_endpoint_auth_method ?? null,
    ],
  );
  return rows[0] ?? null;
}

export async function setOAuthClientSecretHash(q: Queryable, id: string, hash: string): Promise<OAuthClientRow | null> {
  const { rows } = await q.query<OAuthClientRow>(
    `update oauth_clients set client_secret_hash = $2, updated_at = now() where id = $1::uuid and deleted_at is null returning ${COLUMNS}`,
    [id, hash],
  );
  return rows[0] ?? null;
}

/**
 * Soft delete; the client's sessions end with it (ours: docs/oauth-server.md#departures), so the tokens it
 * holds stop working at once. False when there was no such live client. The update takes the client's row
 * lock first, waiting for a code exchange that holds the row (lockLiveOAuthClient); the sessions are then
 * deleted by a statement of their own, whose fresh snapshot sees the session that exchange committed.
 */
export function deleteOAuthClient(q: Queryable, id: string): Promise<boolean> {
  return inTransaction(q, async (c) => {
    const { rowCount } = await c.query(
      `update oauth_clients set deleted_at = now(), updated_at = now() where id = $1::uuid and deleted_at is null`,
      [id],
    );
    if (!rowCount) return false;
    await c.query(`delete from sessions where oauth_client_id = $1::uuid`, [id]);
    return true;
  });
}

// oauth_authorizations (sql/00012_oauth_server.sql): one row per GET /oauth/authorize, pending until the
// user decides. The code is stored as its SHA-256 hex and the row deleted when the code is exchanged.
import type { Queryable } from './pool.js';

export interface AuthorizationRow {
  id: string;
  authorization_id: string;
  client_id: string;
  user_id: string | null;
  redirect_uri: string;
  scope: string;
  state: string | null;
  resource: string | null;
  code_challenge: string | null;
  code_challenge_method: 's256' | 'plain' | null;
  nonce: string | null;
  status: 'pending' | 'approved' | 'denied' | 'expired';
  /** true once expires_at has passed, by the database's clock */
  expired: boolean;
}

const COLUMNS = `id, authorization_id, client_id, user_id, redirect_uri, scope, state, resource, code_challenge, code_challenge_method,
                 nonce, status, expires_at <= now() as expired`;

export interface NewAuthorization {
  authorizationId: string;
  clientId: string;
  redirectUri: string;
  scope: string;
  state: string | null;
  resource: string | null;
  codeChallenge: string;
  codeChallengeMethod: 's256' | 'plain';
  nonce: string | null;
  ttlSeconds: number;
}

export async function insertAuthorization(q: Queryable, a: NewAuthorization): Promise<void> {
  await q.query(
    `insert into oauth_authorizations (authorization_id, client_id, redirect_uri, scope, state, resource, code_challenge,
                                       code_challenge_method, nonce, expires_at)
     values ($1, $2::uuid, $3, $4, $5, $6, $7, $8, $9, now() + make_interval(secs => $10))`,
    [
      a.authorizationId,
      a.clientId,
      a.redirectUri,
      a.scope,
      a.state,
      a.resource,
      a.codeChallenge,
      a.codeChallengeMethod,
      a.nonce,
      a.ttlSeconds,
    ],
  );
}

/**
 * The request under a row lock. A decision skips a row another request holds (as the original does), so two
 * concurrent decisions on one request cannot both issue a code: the second finds nothing. With `wait` (the
 * GET that shows it) the lock is waited for instead, and the row read as the holder committed it: a consent
 * page that fetches twice at once finds the request both times, and a request decided, claimed or expired
 * meanwhile is seen so, as by a GET after it.
 */
export async function lockAuthorization(q: Queryable, authorizationId: string, wait = false): Promise<AuthorizationRow | null> {
  if (!wait) {
    const { rows } = await q.query<AuthorizationRow>(
      `select ${COLUMNS} from oauth_authorizations where authorization_id = $1 for update skip locked`,
      [authorizationId],
    );
    return rows[0] ?? null;
  }
  // Only a pending request is waited for. The caller holds the user's row, and a code's exchange holds its
  // approved request and then writes the user's row (the sign-in): waiting on that one would deadlock. A
  // request that is not (or no longer, once the wait is over) pending is read as committed, unlocked:
  // nothing is written to it then.
  const { rows } = await q.query<AuthorizationRow>(
    `select ${COLUMNS} from oauth_authorizations where authorization_id = $1 and status = 'pending' for update`,
    [authorizationId],
  );
  if (rows[0]) return rows[0];
  const read = await q.query<AuthorizationRow>(`select ${COLUMNS} from oauth_authorizations where authorization_id = $1`, [
    authorizationId,
  ]);
  return read.rows[0] ?? null;
}

export async function setAuthorizationUser(q: Queryable, id: string, userId: string): Promise<void> {
  await q.query(`update oauth_authorizations set user_id = $2::uuid where id = $1::uuid`, [id, userId]);
}

export async function approveAuthorization(q: Queryable, id: string, codeHash: string): Promise<void> {
  await q.query(`update oauth_authorizations set status = 'approved', approved_at = now(), authorization_code = $2 where id = $1::uuid`, [
    id,
    codeHash,
  ]);
}

export async function setAuthorizationStatus(q: Queryable, id: string, status: 'denied' | 'expired'): Promise<void> {
  await q.query(`update oauth_authorizations set status = $2 where id = $1::uuid`, [id, status]);
}

/** An approved code's request under a row lock: the exchange checks it and deletes it in that transaction. */
export async function lockApprovedCode(q: Queryable, codeHash: string): Promise<AuthorizationRow | null> {
  const { rows } = await q.query<AuthorizationRow>(
    `select ${COLUMNS} from oauth_authorizations where authorization_code = $1 and status = 'approved' for update`,
    [codeHash],
  );
  return rows[0] ?? null;
}

/** A code is single-use: its request is deleted when it is exchanged. */
export async function deleteAuthorization(q: Queryable, id: string): Promise<void> {
  await q.query(`delete from oauth_authorizations where id = $1::uuid`, [id]);
}

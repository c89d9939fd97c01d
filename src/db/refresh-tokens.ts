// refresh_tokens: only the SHA-256 of a token is stored; parent_id chains a session's rotations.
import type { Queryable } from './pool.js';

export interface RefreshTokenRow {
  id: string; token_hash: string; user_id: string; session_id: string; parent_id: string | null;
  revoked: boolean; created_at: Date; updated_at: Date;
}

export async function insertRefreshToken(q: Queryable, t: { tokenHash: string; userId: string; sessionId: string; parentId?: string | null }): Promise<RefreshTokenRow> {
  const { rows } = await q.query<RefreshTokenRow>({
    name: 'refresh_tokens_insert',
    text: 'insert into refresh_tokens (token_hash, user_id, session_id, parent_id) values ($1, $2, $3, $4) returning *',
    values: [t.tokenHash, t.userId, t.sessionId, t.parentId ?? null],
  });
  return rows[0];
}

export async function findRefreshTokenByHash(q: Queryable, tokenHash: string): Promise<RefreshTokenRow | null> {
  const { rows } = await q.query<RefreshTokenRow>({
    name: 'refresh_tokens_by_hash', text: 'select * from refresh_tokens where token_hash = $1', values: [tokenHash],
  });
  return rows[0] ?? null;
}

// one_time_tokens: at most one live token per (user, type), stored as a hash of the link token.
import type { Queryable } from './pool.js';

export type OneTimeTokenType =
  | 'confirmation_token'
  | 'reauthentication_token'
  | 'recovery_token'
  | 'email_change_token_new'
  | 'email_change_token_current'
  | 'phone_change_token';

export interface OneTimeTokenRow {
  id: string;
  user_id: string;
  token_type: OneTimeTokenType;
  token_hash: string;
  relates_to: string;
  attempts: number;
  created_at: Date;
  updated_at: Date;
}

/** Issues (or replaces) the user's token of this type. */
export async function putOneTimeToken(
  q: Queryable,
  t: { userId: string; type: OneTimeTokenType; tokenHash: string; relatesTo: string },
): Promise<void> {
  await q.query({
    name: 'ott_upsert',
    text: `insert into one_time_tokens (user_id, token_type, token_hash, relates_to) values ($1, $2, $3, $4)
           on conflict (user_id, token_type) do update
           set token_hash = excluded.token_hash, relates_to = excluded.relates_to, attempts = 0, created_at = now(), updated_at = now()`,
    values: [t.userId, t.type, t.tokenHash, t.relatesTo],
  });
}

// The lookups below lock nothing: a token is locked (lockOneTimeToken) only once its user is, the order every
// other writer of one_time_tokens takes (user row, then token), so two requests for one user cannot deadlock.

export async function findOneTimeTokenByHash(q: Queryable, tokenHash: string, types: OneTimeTokenType[]): Promise<OneTimeTokenRow | null> {
  const { rows } = await q.query<OneTimeTokenRow>({
    name: 'ott_by_hash',
    text: 'select * from one_time_tokens where token_hash = $1 and token_type = any($2)',
    values: [tokenHash, types],
  });
  return rows[0] ?? null;
}

/** The live tokens of these types sent to an address (lower-case email or phone digits), newest first. */
export async function findOneTimeTokensByAddress(q: Queryable, relatesTo: string, types: OneTimeTokenType[]): Promise<OneTimeTokenRow[]> {
  const { rows } = await q.query<OneTimeTokenRow>({
    name: 'ott_by_address',
    text: 'select * from one_time_tokens where relates_to = $1 and token_type = any($2) order by created_at desc',
    values: [relatesTo, types],
  });
  return rows;
}

/**
 * Locks a token found by a lookup above, once its user is locked: null when it was spent, voided or replaced
 * (a new token of its type reuses the row with another hash) in the meantime.
 */
export async function lockOneTimeToken(q: Queryable, row: OneTimeTokenRow): Promise<OneTimeTokenRow | null> {
  const { rows } = await q.query<OneTimeTokenRow>('select * from one_time_tokens where id = $1 and token_hash = $2 for update', [
    row.id,
    row.token_hash,
  ]);
  return rows[0] ?? null;
}

/** Counts a wrong code; deletes the token once `max` wrong codes have been tried. */
export async function countFailedAttempt(q: Queryable, id: string, max: number): Promise<void> {
  await q.query('update one_time_tokens set attempts = attempts + 1, updated_at = now() where id = $1', [id]);
  await q.query('delete from one_time_tokens where id = $1 and attempts >= $2', [id, max]);
}

export async function deleteOneTimeTokens(q: Queryable, userId: string, types?: OneTimeTokenType[]): Promise<void> {
  if (types) await q.query('delete from one_time_tokens where user_id = $1 and token_type = any($2)', [userId, types]);
  else await q.query({ name: 'ott_delete_all', text: 'delete from one_time_tokens where user_id = $1', values: [userId] });
}

export async function hasOneTimeToken(q: Queryable, userId: string, type: OneTimeTokenType): Promise<boolean> {
  const { rowCount } = await q.query('select 1 from one_time_tokens where user_id = $1 and token_type = $2', [userId, type]);
  return (rowCount ?? 0) > 0;
}

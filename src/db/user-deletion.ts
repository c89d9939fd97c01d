// Deleting users (docs/users-and-audit.md#deletion). Hard deletion removes the row; the foreign keys cascade to identities,
// sessions (and through them refresh tokens and AMR claims), one-time tokens and flow state, so every
// session ends in the same statement. Soft deletion keeps the row for its id but makes it unusable and
// anonymous: addresses become one-way hashes, secrets and metadata are emptied, sessions, MFA factors and
// passkeys are deleted.
import { createHash } from 'node:crypto';
import type { Queryable } from './pool.js';
import type { UserRow } from './users.js';

export async function hardDeleteUser(q: Queryable, userId: string): Promise<void> {
  await q.query('delete from users where id = $1', [userId]);
  // refresh_tokens.user_id has no foreign key; the sessions cascade removed them, this only makes sure.
  await q.query('delete from refresh_tokens where user_id = $1', [userId]);
}

/** base64url(SHA-256(user_id + value)), the original's obfuscation, so the value cannot be read back. */
export function obfuscate(userId: string, value: string): string {
  return createHash('sha256')
    .update(userId + value)
    .digest('base64url');
}

export async function softDeleteUser(q: Queryable, user: UserRow): Promise<void> {
  const hide = (value: string | null, max?: number) => (value ? obfuscate(user.id, value).slice(0, max) : null);
  await q.query(
    `update users set email = $2, phone = $3, email_change = $4, phone_change = $5, encrypted_password = null,
       raw_app_meta_data = '{}', raw_user_meta_data = '{}', deleted_at = now(), updated_at = now()
     where id = $1`,
    [user.id, hide(user.email), hide(user.phone, 15), hide(user.email_change), hide(user.phone_change, 15)],
  );
  const { rows } = await q.query<{ id: string; provider: string; provider_id: string }>(
    'select id, provider, provider_id from identities where user_id = $1',
    [user.id],
  );
  for (const identity of rows) {
    await q.query(`update identities set identity_data = '{}', provider_id = $2, updated_at = now() where id = $1`, [
      identity.id,
      obfuscate(user.id, `${identity.provider}:${identity.provider_id}`),
    ]);
  }
  await q.query('delete from one_time_tokens where user_id = $1', [user.id]);
  // Its MFA factors hold a phone number or a TOTP secret: deleted with their challenges, as the original does.
  await q.query('delete from mfa_factors where user_id = $1', [user.id]);
  await q.query('delete from webauthn_credentials where user_id = $1', [user.id]);
  await q.query('delete from sessions where user_id = $1', [user.id]);
  await q.query('delete from refresh_tokens where user_id = $1', [user.id]);
}

// identities: one row per (provider, subject); email/phone identities use the user id as provider_id.
import type { Queryable } from './pool.js';

export interface IdentityRow {
  id: string; provider_id: string; user_id: string; identity_data: Record<string, unknown>; provider: string;
  email: string | null; last_sign_in_at: Date | null; created_at: Date; updated_at: Date;
}

export async function insertIdentity(q: Queryable, identity: { userId: string; provider: string; providerId: string; data: Record<string, unknown> }): Promise<IdentityRow> {
  const { rows } = await q.query<IdentityRow>(
    `insert into identities (provider_id, user_id, identity_data, provider, last_sign_in_at)
     values ($1, $2, $3, $4, now()) returning *`,
    [identity.providerId, identity.userId, identity.data, identity.provider]);
  return rows[0];
}

export async function findIdentitiesByUser(q: Queryable, userId: string): Promise<IdentityRow[]> {
  const { rows } = await q.query<IdentityRow>({
    name: 'identities_by_user',
    text: 'select * from identities where user_id = $1 order by created_at',
    values: [userId],
  });
  return rows;
}

/** Merges `patch` into identity_data of the user's identity for `provider`. */
export async function mergeIdentityData(q: Queryable, userId: string, provider: string, patch: Record<string, unknown>): Promise<void> {
  await q.query(
    `update identities set identity_data = identity_data || $3::jsonb, updated_at = now()
     where user_id = $1 and provider = $2`, [userId, provider, patch]);
}

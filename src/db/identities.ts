// identities: one row per (provider, subject); email/phone identities use the user id as provider_id.
import pg from 'pg';
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

// Identities travel as a json aggregate whose timestamps are text in the session's own output format, and
// are parsed by pg's timestamptz parser: the same Dates a plain `select * from identities` gives, so the
// token response is byte-identical (to_json's ISO format would go through another parser). For the
// statements that read a user's identities alongside other rows (sign-in.ts, user-session.ts,
// refresh-rotation.ts); the keys are the table's columns in order (test/user-session.test.ts compares
// them with findIdentitiesByUser).
/** The user's identities as a json array, oldest first; `userId` is an SQL expression (a parameter or a column). */
export const identitiesOf = (userId: string) => `(
  select coalesce(json_agg(json_build_object('id', i.id, 'provider_id', i.provider_id, 'user_id', i.user_id,
           'identity_data', i.identity_data, 'provider', i.provider, 'email', i.email,
           'last_sign_in_at', i.last_sign_in_at::text, 'created_at', i.created_at::text, 'updated_at', i.updated_at::text)
         order by i.created_at), '[]')
  from identities i where i.user_id = ${userId})`;

const parseTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (text: string) => Date;

export interface IdentityJsonRow extends Omit<IdentityRow, 'last_sign_in_at' | 'created_at' | 'updated_at'> {
  last_sign_in_at: string | null; created_at: string; updated_at: string;
}

/** identitiesOf's rows as the IdentityRows a plain select gives (timestamps parsed by pg's own parser). */
export function identityRows(rows: IdentityJsonRow[]): IdentityRow[] {
  return rows.map((r) => ({ ...r, last_sign_in_at: r.last_sign_in_at === null ? null : parseTimestamptz(r.last_sign_in_at),
    created_at: parseTimestamptz(r.created_at), updated_at: parseTimestamptz(r.updated_at) }));
}


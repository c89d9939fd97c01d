// identities: one row per (provider, subject); email/phone identities use the user id as provider_id.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Queryable } from './pool.js';
import { parseTimestamptz } from './timestamps.js';

export interface IdentityRow {
  id: string;
  provider_id: string;
  user_id: string;
  identity_data: Record<string, unknown>;
  provider: string;
  email: string | null;
  last_sign_in_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export async function insertIdentity(
  q: Queryable,
  identity: { userId: string; provider: string; providerId: string; data: Record<string, unknown> },
): Promise<IdentityRow> {
  const { rows } = await q.query<IdentityRow>(
    `insert into identities (provider_id, user_id, identity_data, provider, last_sign_in_at)
     values ($1, $2, $3, $4, now()) returning *`,
    [identity.providerId, identity.userId, identity.data, identity.provider],
  );
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
     where user_id = $1 and provider = $2`,
    [userId, provider, patch],
  );
}

/** The user's email identity, and every other identity carrying `email` (the generated, lower-cased column), marked verified. */
export async function markEmailVerifiedEverywhere(q: Queryable, userId: string, email: string): Promise<void> {
  await q.query(
    `update identities set identity_data = identity_data || '{"email_verified": true}'::jsonb, updated_at = now()
     where user_id = $1 and (provider = 'email' or email = lower($2))`,
    [userId, email],
  );
}

// The statements that read a user's identities alongside other rows (sign-in.ts, user-session.ts,
// refresh-rotation.ts) aggregate them as json with the timestamps as text in the session's own output
// format, keys in the table's column order, oldest first. identityRows parses that text with the pool's
// timestamptz parser (timestamps.ts), so the rows are the Dates a plain `select * from identities` gives
// and the token response is byte-identical (to_json's ISO format would go through another parser;
// test/user-session.test.ts and test/sign-in.test.ts compare with findIdentitiesByUser).

export interface IdentityJsonRow extends Omit<IdentityRow, 'last_sign_in_at' | 'created_at' | 'updated_at'> {
  last_sign_in_at: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * The SQL of a user's identities as one json array, oldest first, for statements that return the user with
 * them (GET /user, token responses); read back with identityRows. `userIdSql` is the expression of the
 * user's id in that statement.
 */
export function identitiesJsonSql(userIdSql: string): string {
  return `(select coalesce(json_agg(json_build_object('id', i.id, 'provider_id', i.provider_id, 'user_id', i.user_id,
                                                   'identity_data', i.identity_data, 'provider', i.provider, 'email', i.email,
                                                   'last_sign_in_at', i.last_sign_in_at::text,
                                                   'created_at', i.created_at::text, 'updated_at', i.updated_at::text)
                                 order by i.created_at), '[]')
           from identities i where i.user_id = ${userIdSql})`;
}

/** The json-aggregated rows as the IdentityRows a plain select gives (timestamps parsed as the pool parses them). */
export function identityRows(rows: IdentityJsonRow[]): IdentityRow[] {
  return rows.map((r) => ({
    ...r,
    last_sign_in_at: r.last_sign_in_at === null ? null : parseTimestamptz(r.last_sign_in_at),
    created_at: parseTimestamptz(r.created_at),
    updated_at: parseTimestamptz(r.updated_at),
  }));
}

/**
 * The identity of (provider, subject), locked: a concurrent sign-in of the same person waits, until this
 * transaction ends, whether or not the identity exists yet. `for update` alone locks nothing when there is no
 * row: concurrent first sign-ins would each find none, each create an account, and all but one would then
 * fail on the unique index. An existing identity's user row is locked too, before it. A pooled client, as tx
 * hands them out only inside a transaction: the lock is that transaction's and ends with it.
 */
export async function lockIdentity(q: pg.PoolClient, provider: string, providerId: string): Promise<IdentityRow | null> {
  // A statement of its own: a statement's snapshot predates the lock it waits for, so a select in the same
  // statement would miss the identity the transaction it waited on has just committed. Every caller takes
  // it before the sign-in locks any identity or user row, so a transaction waiting here holds none of them:
  // no deadlock with the user-row locks taken later in the flow.
  await q.query('select pg_advisory_xact_lock($1::bigint)', [identityLockKey(provider, providerId)]);
  // The owner's row before the identity's, the order a user's deletion takes them in (it locks the user's row,
  // then its delete or anonymisation reaches the identities): the other way round, a returning sign-in beside
  // an admin's deletion of its user deadlocked (a 500 for one of the two). Read again below under the lock,
  // the identity is gone when the deletion went first, and the sign-in is a first one, as after it.
  await q.query('select 1 from users where id = (select user_id from identities where provider = $1 and provider_id = $2) for update', [
    provider,
    providerId,
  ]);
  const { rows } = await q.query<IdentityRow>('select * from identities where provider = $1 and provider_id = $2 for update', [
    provider,
    providerId,
  ]);
  return rows[0] ?? null;
}

/**
 * A 64-bit advisory lock id per (provider, subject), as migrate.ts derives its own. Two keys that share one
 * (or share it with another namespace's) only take turns: the lock decides no outcome, the lookup after it does.
 */
function identityLockKey(provider: string, providerId: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify(['portcullis:identity', provider, providerId]))
    .digest();
  return digest.readBigInt64BE(0).toString();
}

/**
 * SSO providers are each their own linking domain (docs/sso-saml.md#users): identities of this provider
 * with this address (another subject of the same IdP) are the only ones an SSO sign-in links to.
 */
export async function findProviderIdentitiesByEmail(q: Queryable, provider: string, email: string): Promise<IdentityRow[]> {
  const { rows } = await q.query<IdentityRow>('select * from identities where provider = $1 and email = lower($2)', [provider, email]);
  return rows;
}

/**
 * Identities whose email is one of `emails` (lower-case) and was verified (SSO identities aside: their
 * providers are linking domains of their own) by their provider: an address a
 * provider reported unverified proves nothing, so it must neither attract nor block a link.
 * Verified means the JSON boolean `true`, as the original reads it: imported rows may hold `"true"`,
 * `"maybe"` or a number, which a cast to boolean would trust or fail on.
 */
export async function findVerifiedIdentitiesByEmails(q: Queryable, emails: string[]): Promise<IdentityRow[]> {
  const { rows } = await q.query<IdentityRow>(
    `select * from identities where email = any($1::text[]) and identity_data -> 'email_verified' = to_jsonb(true)
        and provider not like 'sso:%'`,
    [emails],
  );
  return rows;
}

/** Replaces identity_data and stamps the sign-in (a returning user's fresh profile). */
export async function refreshIdentity(q: Queryable, id: string, data: Record<string, unknown>): Promise<IdentityRow> {
  const { rows } = await q.query<IdentityRow>(
    'update identities set identity_data = $2, last_sign_in_at = now(), updated_at = now() where id = $1 returning *',
    [id, data],
  );
  return rows[0];
}

export async function deleteIdentity(q: Queryable, id: string): Promise<void> {
  await q.query('delete from identities where id = $1', [id]);
}

/**
 * Removes the user's identities other than `keepProvider` whose address was never verified (takeover
 * defence). Only the JSON boolean `true` counts as verified, as in findVerifiedIdentitiesByEmails.
 */
export async function deleteUnverifiedIdentities(q: Queryable, userId: string, keepProvider: string): Promise<void> {
  await q.query(
    `delete from identities where user_id = $1 and provider <> $2
       and (identity_data -> 'email_verified') is distinct from to_jsonb(true)
       and (identity_data -> 'phone_verified') is distinct from to_jsonb(true)`,
    [userId, keepProvider],
  );
}

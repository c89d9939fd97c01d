// Writes imported users in batches (docs/adopting-gotrue.md#importing-users): one statement for the users
// of a batch and one for their identities, in one transaction. Idempotent by user id: a user already
// present is skipped, never overwritten, so a run that stopped half way is resumed by running it again.
import type pg from 'pg';
import type { ImportedUser } from '../server/import/records.js';

export interface BatchOutcome {
  imported: number;
  /** users whose id is already present (imported earlier) */
  present: number;
  /** users refused because another user already has their email or phone */
  conflicts: Array<{ id: string; reason: string }>;
}

const USER_COLUMNS = `id uuid, aud text, role text, email text, phone text, encrypted_password text, email_confirmed_at timestamptz,
  phone_confirmed_at timestamptz, invited_at timestamptz, last_sign_in_at timestamptz, raw_app_meta_data jsonb,
  raw_user_meta_data jsonb, banned_until timestamptz, deleted_at timestamptz, is_anonymous boolean, is_sso_user boolean,
  created_at timestamptz, updated_at timestamptz`;

export async function writeBatch(pool: pg.Pool, batch: ImportedUser[]): Promise<BatchOutcome> {
  // A user listed twice in one batch counts as present the second time, as it would in a later batch.
  const users = [...new Map(batch.map((u) => [u.id, u])).values()];
  const repeated = batch.length - users.length;
  const client = await pool.connect();
  try {
    await client.query('begin');
    const ids = users.map((u) => u.id);
    const { rows: existing } = await client.query<{ id: string }>('select id from users where id = any($1::uuid[])', [ids]);
    const present = new Set(existing.map((r) => r.id));
    const fresh = users.filter((u) => !present.has(u.id));
    const { conflicts, accepted } = await findConflicts(client, fresh);
    const records = accepted.map(({ identities: _identities, ...user }) => user);
    // No ON CONFLICT: every clash was found above under no concurrent writer worth racing (an import is
    // an operator's one-off), and a clash missed would fail the batch rather than drop a user silently.
    await client.query(
      `insert into users (id, aud, role, email, phone, encrypted_password, email_confirmed_at, phone_confirmed_at, invited_at,
                          last_sign_in_at, raw_app_meta_data, raw_user_meta_data, banned_until, deleted_at, is_anonymous,
                          is_sso_user, created_at, updated_at)
       select id, aud, role, email, phone, encrypted_password, email_confirmed_at, phone_confirmed_at, invited_at, last_sign_in_at,
              raw_app_meta_data, raw_user_meta_data, banned_until, deleted_at, is_anonymous, is_sso_user, created_at, updated_at
       from jsonb_to_recordset($1::jsonb) as r(${USER_COLUMNS})`,
      [JSON.stringify(records)],
    );
    const identities = accepted.flatMap((u) => u.identities.map((i) => ({ ...i, user_id: u.id })));
    await client.query(
      `insert into identities (id, provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
       select coalesce(id, gen_random_uuid()), provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at
       from jsonb_to_recordset($1::jsonb) as r(id uuid, provider_id text, user_id uuid, identity_data jsonb, provider text,
                                               last_sign_in_at timestamptz, created_at timestamptz, updated_at timestamptz)
       on conflict (provider_id, provider) do nothing`,
      [JSON.stringify(identities)],
    );
    await client.query('commit');
    return { imported: accepted.length, present: present.size + repeated, conflicts };
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** Users whose email or phone another live user (or an earlier user of this batch) already holds. */
async function findConflicts(
  client: pg.PoolClient,
  users: ImportedUser[],
): Promise<{ conflicts: BatchOutcome['conflicts']; accepted: ImportedUser[] }> {
  const live = users.filter((u) => u.deleted_at === null);
  const { rows } = await client.query<{ email: string | null; phone: string | null }>(
    `select lower(email) as email, phone from users where deleted_at is null
       and (lower(email) = any($1::text[]) and not is_sso_user or phone = any($2::text[]))`,
    [live.filter((u) => !u.is_sso_user && u.email).map((u) => u.email), live.filter((u) => u.phone).map((u) => u.phone)],
  );
  const emails = new Set(rows.map((r) => r.email).filter(Boolean));
  const phones = new Set(rows.map((r) => r.phone).filter(Boolean));
  const conflicts: BatchOutcome['conflicts'] = [];
  const accepted: ImportedUser[] = [];
  for (const u of users) {
    const live = u.deleted_at === null;
    const email = live && !u.is_sso_user ? u.email : null;
    const phone = live ? u.phone : null;
    if (email && emails.has(email)) conflicts.push({ id: u.id, reason: `email ${email} belongs to another user` });
    else if (phone && phones.has(phone)) conflicts.push({ id: u.id, reason: `phone ${phone} belongs to another user` });
    else {
      if (email) emails.add(email);
      if (phone) phones.add(phone);
      accepted.push(u);
    }
  }
  return { conflicts, accepted };
}

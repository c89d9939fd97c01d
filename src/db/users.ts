// users: finders take a Queryable first (pool or transaction). Emails are stored lower-case and phones
// as digits, so lookups are plain equality on the unique indexes' expressions.
import type { Queryable } from './pool.js';
import { rfc3339Nano, timestampParam } from './timestamps.js';

export interface UserRow {
  id: string;
  aud: string;
  role: string;
  email: string | null;
  phone: string | null;
  encrypted_password: string | null;
  email_confirmed_at: Date | null;
  phone_confirmed_at: Date | null;
  confirmed_at: Date | null;
  invited_at: Date | null;
  confirmation_sent_at: Date | null;
  recovery_sent_at: Date | null;
  email_change: string | null;
  email_change_sent_at: Date | null;
  email_change_confirm_status: number;
  phone_change: string | null;
  phone_change_sent_at: Date | null;
  reauthentication_sent_at: Date | null;
  last_sign_in_at: Date | null;
  raw_app_meta_data: Record<string, unknown>;
  raw_user_meta_data: Record<string, unknown>;
  banned_until: Date | null;
  deleted_at: Date | null;
  is_anonymous: boolean;
  is_sso_user: boolean;
  created_at: Date;
  updated_at: Date;
}

/**
 * The columns of a UserRow, named rather than `*`: the table also holds the original's columns that seed
 * scripts name and nothing reads (sql/00015), and an adopted table may hold columns of its own; neither
 * should be read, sent and parsed on every request (bench/README.md, eleventh check).
 */
export const USER_COLUMNS =
  'id, aud, role, email, phone, encrypted_password, email_confirmed_at, phone_confirmed_at, confirmed_at, invited_at, ' +
  'confirmation_sent_at, recovery_sent_at, email_change, email_change_sent_at, email_change_confirm_status, phone_change, ' +
  'phone_change_sent_at, reauthentication_sent_at, last_sign_in_at, raw_app_meta_data, raw_user_meta_data, banned_until, ' +
  'deleted_at, is_anonymous, is_sso_user, created_at, updated_at';
/** The same columns of the users table under the alias `u`. */
export const USER_COLUMNS_U = USER_COLUMNS.split(', ')
  .map((column) => `u.${column}`)
  .join(', ');

/** Columns a caller may write; generated and bookkeeping columns are left to the database. */
export type UserWrite = Partial<Omit<UserRow, 'confirmed_at' | 'created_at' | 'updated_at'>>;

const WRITABLE = new Set<string>([
  'id',
  'aud',
  'role',
  'email',
  'phone',
  'encrypted_password',
  'email_confirmed_at',
  'phone_confirmed_at',
  'invited_at',
  'confirmation_sent_at',
  'recovery_sent_at',
  'email_change',
  'email_change_sent_at',
  'email_change_confirm_status',
  'phone_change',
  'phone_change_sent_at',
  'reauthentication_sent_at',
  'last_sign_in_at',
  'raw_app_meta_data',
  'raw_user_meta_data',
  'banned_until',
  'deleted_at',
  'is_anonymous',
  'is_sso_user',
]);

function columnsOf(fields: UserWrite): string[] {
  const names = Object.keys(fields).filter((k) => (fields as Record<string, unknown>)[k] !== undefined);
  for (const name of names) if (!WRITABLE.has(name)) throw new TypeError(`users: ${name} is not a writable column`);
  return names;
}

export async function findUserById(q: Queryable, id: string): Promise<UserRow | null> {
  const { rows } = await q.query<UserRow>({ name: 'users_by_id', text: `select ${USER_COLUMNS} from users where id = $1`, values: [id] });
  return rows[0] ?? null;
}

/** Same as findUserById, but locks the row until the transaction ends. */
export async function lockUserById(q: Queryable, id: string): Promise<UserRow | null> {
  const { rows } = await q.query<UserRow>(`select ${USER_COLUMNS} from users where id = $1 for update`, [id]);
  return rows[0] ?? null;
}

/** The user of the PKCE flow holding this auth code, locked (null: no such flow, or its user deleted). */
export async function lockUserOfAuthCode(q: Queryable, authCode: string): Promise<UserRow | null> {
  const { rows } = await q.query<UserRow>(
    `select ${USER_COLUMNS} from users where id = (select user_id from flow_state where auth_code = $1) for update`,
    [authCode],
  );
  return rows[0] ?? null;
}

/**
 * The user's row under a key-share lock: waits for a writer that holds it (lockUserById), and until the
 * transaction ends keeps it from being deleted or taken by lockUserById, yet lets updates of its columns
 * through (a sign-in's last_sign_in_at). For a caller that may then wait on a transaction about to write the row.
 */
export async function keyShareUserRow(q: Queryable, id: string): Promise<void> {
  await q.query('select 1 from users where id = $1 for key share', [id]);
}

/**
 * lockUserById for a request that found the user earlier: null when a concurrent request has deleted or
 * soft-deleted it since. A lock that waited for the deletion re-checks deleted_at on the row it committed.
 */
export async function lockLiveUserById(q: Queryable, id: string): Promise<UserRow | null> {
  const { rows } = await q.query<UserRow>(`select ${USER_COLUMNS} from users where id = $1 and deleted_at is null for update`, [id]);
  return rows[0] ?? null;
}

/** lockLiveUserAt's answer for a user that no longer holds the address it was found by. */
export const MOVED = Symbol('address moved');

/** A user found by `email`, as lockLiveUserById locks it; MOVED when a concurrent request has given it another address since. */
export async function lockLiveUserAt(q: Queryable, id: string, email: string): Promise<UserRow | null | typeof MOVED> {
  const user = await lockLiveUserById(q, id);
  return user && user.email?.toLowerCase() !== email.toLowerCase() ? MOVED : user;
}

export async function findUserByEmail(q: Queryable, email: string, aud: string): Promise<UserRow | null> {
  const { rows } = await q.query<UserRow>({
    name: 'users_by_email',
    text: `select ${USER_COLUMNS} from users where lower(email) = lower($1) and aud = $2 and deleted_at is null and not is_sso_user`,
    values: [email, aud],
  });
  return rows[0] ?? null;
}

/**
 * Live users of the audience, other than `exceptId`, with an identity (of any provider) carrying this email,
 * each with that identity's provider so the caller can keep those of the linking domain it cares about.
 * Oldest identity first.
 */
export async function findUsersByIdentityEmail(
  q: Queryable,
  email: string,
  aud: string,
  exceptId: string | null,
): Promise<Array<{ user: UserRow; provider: string }>> {
  const { rows } = await q.query<UserRow & { identity_provider: string }>(
    `select ${USER_COLUMNS_U}, i.provider as identity_provider from identities i join users u on u.id = i.user_id
     where i.email = lower($1) and u.aud = $2 and u.deleted_at is null and ($3::uuid is null or u.id <> $3::uuid)
     order by i.created_at`,
    [email, aud, exceptId],
  );
  return rows.map(({ identity_provider, ...user }) => ({ user, provider: identity_provider }));
}

/**
 * The user who signs in with this phone: an SSO user is not one (its sign-ins are the IdP's), as the
 * original's look-up leaves them out, like findUserByEmail.
 */
export async function findUserByPhone(q: Queryable, phone: string, aud: string): Promise<UserRow | null> {
  const { rows } = await q.query<UserRow>({
    name: 'users_by_phone',
    text: `select ${USER_COLUMNS} from users where phone = $1 and aud = $2 and deleted_at is null and not is_sso_user`,
    values: [phone, aud],
  });
  return rows[0] ?? null;
}

/**
 * Whoever holds this phone in the audience, an SSO user included: the unique index on phone counts every
 * user, so a number an SSO user holds cannot become another's (users/change-address.ts).
 */
export async function findPhoneHolder(q: Queryable, phone: string, aud: string): Promise<UserRow | null> {
  const { rows } = await q.query<UserRow>(`select ${USER_COLUMNS} from users where phone = $1 and aud = $2 and deleted_at is null`, [
    phone,
    aud,
  ]);
  return rows[0] ?? null;
}

/** The user with a pending change to this phone number (a test number's code at /verify phone_change). */
export async function findUserByPhoneChange(q: Queryable, phone: string, aud: string): Promise<UserRow | null> {
  const { rows } = await q.query<UserRow>(
    `select ${USER_COLUMNS} from users where phone_change = $1 and aud = $2 and deleted_at is null limit 1`,
    [phone, aud],
  );
  return rows[0] ?? null;
}

/** Inserts a user; resolves null when the email or phone is already taken (a concurrent signup won). */
export async function insertUser(q: Queryable, fields: UserWrite): Promise<UserRow | null> {
  const names = columnsOf(fields);
  const values = names.map((n) => timestampParam((fields as Record<string, unknown>)[n]));
  const { rows } = await q.query<UserRow>(
    `insert into users (${names.join(', ')}) values (${names.map((_, i) => `$${i + 1}`).join(', ')})
     on conflict do nothing returning ${USER_COLUMNS}`,
    values,
  );
  return rows[0] ?? null;
}

export async function updateUser(q: Queryable, id: string, fields: UserWrite): Promise<UserRow> {
  const names = columnsOf(fields);
  const values = names.map((n) => timestampParam((fields as Record<string, unknown>)[n]));
  const set = names
    .map((n, i) => `${n} = $${i + 2}`)
    .concat('updated_at = now()')
    .join(', ');
  const { rows } = await q.query<UserRow>(`update users set ${set} where id = $1 returning ${USER_COLUMNS}`, [id, ...values]);
  if (!rows[0]) throw new Error(`users: no user ${id} to update`);
  return rows[0];
}

/**
 * Records that a confirmation went out, at the transaction's own time: a sign-up's answer then carries
 * one time in created_at, updated_at and confirmation_sent_at, as the fabricated answer to a confirmed
 * duplicate does (server/users/signup.ts), so the two cannot be told apart by their times.
 */
export async function markConfirmationSent(q: Queryable, id: string): Promise<UserRow> {
  const { rows } = await q.query<UserRow>(
    `update users set confirmation_sent_at = now(), updated_at = now() where id = $1 returning ${USER_COLUMNS}`,
    [id],
  );
  if (!rows[0]) throw new Error(`users: no user ${id} to mark`);
  return rows[0];
}

export interface UserPage {
  users: UserRow[];
  total: number;
}

/**
 * One page of the users of an audience, ordered by created_at (id breaks ties so pages never overlap),
 * optionally filtered by a substring of the email or of user_metadata.full_name (docs/api.md#get-adminusers).
 * The filter is a LIKE pattern as in the original, so '%' and '_' in it act as wildcards.
 */
export async function listUsers(
  q: Queryable,
  p: { aud: string; page: number; perPage: number; filter: string; ascending: boolean },
): Promise<UserPage> {
  const values: unknown[] = [p.aud];
  let where = 'aud = $1';
  if (p.filter) {
    values.push(`%${p.filter}%`);
    where += ` and (email like $2 or raw_user_meta_data ->> 'full_name' ilike $2)`;
  }
  const dir = p.ascending ? 'asc' : 'desc';
  const n = values.length;
  const [page, count] = await Promise.all([
    q.query<UserRow>(
      `select ${USER_COLUMNS} from users where ${where} order by created_at ${dir}, id ${dir} limit $${n + 1} offset $${n + 2}`,
      [...values, p.perPage, (p.page - 1) * p.perPage],
    ),
    q.query<{ total: string }>(`select count(*) as total from users where ${where}`, values),
  ]);
  return { users: page.rows, total: Number(count.rows[0].total) };
}

/**
 * Where a user sits in the list order: created_at as RFC 3339 UTC text with all the digits of microseconds
 * PostgreSQL keeps (a plain Date would drop three and so skip or repeat rows within one millisecond; the
 * pool's DbTimestamp keeps them, timestamps.ts), and id.
 */
export interface UserKey {
  createdAt: string;
  id: string;
}

export interface UserKeysetPage {
  users: UserRow[];
  /** the key of the last user returned when more follow; null on the last page */
  next: UserKey | null;
}

/**
 * Cursor pagination of the same list as listUsers: at most `limit` users of the audience strictly after
 * `after` in (created_at, id) order, without a count or an offset, so a page deep in a large table costs
 * what the first one does. One row more than asked says whether another page follows. The row-value
 * comparison lets users_aud_created_at_id_idx (sql/00014) seek straight to the key; an equivalent
 * `a < x or (a = x and b < y)` would not.
 */
export async function listUsersAfter(
  q: Queryable,
  p: { aud: string; filter: string; ascending: boolean; limit: number; after: UserKey | null },
): Promise<UserKeysetPage> {
  const values: unknown[] = [p.aud];
  let where = 'aud = $1';
  if (p.filter) {
    values.push(`%${p.filter}%`);
    where += ` and (email like $${values.length} or raw_user_meta_data ->> 'full_name' ilike $${values.length})`;
  }
  if (p.after) {
    values.push(p.after.createdAt, p.after.id);
    const n = values.length;
    where += ` and (created_at, id) ${p.ascending ? '>' : '<'} ($${n - 1}::timestamptz, $${n}::uuid)`;
  }
  const dir = p.ascending ? 'asc' : 'desc';
  values.push(p.limit + 1);
  const { rows } = await q.query<UserRow>(
    `select ${USER_COLUMNS} from users where ${where} order by created_at ${dir}, id ${dir} limit $${values.length}`,
    values,
  );
  const more = rows.length > p.limit;
  const users = rows.slice(0, p.limit);
  const last = rows[p.limit - 1];
  return { users, next: more ? { createdAt: rfc3339Nano(last.created_at), id: last.id } : null };
}

/** Whether a live, non-SSO user other than `exceptId` holds this email (any audience: the unique index spans them). */
export async function isEmailTaken(q: Queryable, email: string, exceptId?: string): Promise<boolean> {
  const { rows } = await q.query(
    `select 1 from users where lower(email) = lower($1) and deleted_at is null and not is_sso_user
     and ($2::uuid is null or id <> $2::uuid) limit 1`,
    [email, exceptId ?? null],
  );
  return rows.length > 0;
}

export async function isPhoneTaken(q: Queryable, phone: string, exceptId?: string): Promise<boolean> {
  const { rows } = await q.query(
    'select 1 from users where phone = $1 and deleted_at is null and ($2::uuid is null or id <> $2::uuid) limit 1',
    [phone, exceptId ?? null],
  );
  return rows.length > 0;
}

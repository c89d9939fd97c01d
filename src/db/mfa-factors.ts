// mfa_factors: the factors users enrolled (docs/mfa.md). Rows are read whole; `secret` stays an envelope
// here and is opened only by the factor type that needs it (src/server/mfa/encryption.ts).
import type { Queryable } from './pool.js';
import { lockLiveUserById } from './users.js';
import { parseTimestamptz } from './timestamps.js';

export type FactorStatus = 'unverified' | 'verified';

export interface FactorRow {
  id: string;
  user_id: string;
  friendly_name: string | null;
  factor_type: string;
  status: FactorStatus;
  created_at: Date;
  updated_at: Date;
  secret: string | null;
  phone: string | null;
  last_challenged_at: Date | null;
  web_authn_credential: unknown;
  web_authn_aaguid: string | null;
  last_webauthn_challenge_data: unknown;
  last_totp_step: string | null;
}

/** A factor as other statements return it inside json (text timestamps), before factorRows parses it. */
export type FactorJsonRow = Omit<FactorRow, 'created_at' | 'updated_at' | 'last_challenged_at'> & {
  created_at: string;
  updated_at: string;
  last_challenged_at: string | null;
};

/**
 * The SQL of a user's factors as one json array, oldest first, for statements that return the user with
 * them (GET /user, token responses): `userIdSql` is the expression of the user's id in that statement.
 */
export function factorsJsonSql(userIdSql: string): string {
  return `(select coalesce(json_agg(json_build_object('id', f.id, 'user_id', f.user_id, 'friendly_name', f.friendly_name,
                                                   'factor_type', f.factor_type, 'status', f.status, 'phone', f.phone,
                                                   'web_authn_aaguid', f.web_authn_aaguid,
                                                   'last_webauthn_challenge_data', f.last_webauthn_challenge_data,
                                                   'created_at', f.created_at::text, 'updated_at', f.updated_at::text,
                                                   'last_challenged_at', f.last_challenged_at::text)
                                 order by f.created_at), '[]')
           from mfa_factors f where f.user_id = ${userIdSql})`;
}

/** Rows of factorsJsonSql with their timestamps parsed as the pool parses them (secrets are never part of them). */
export function factorRows(rows: FactorJsonRow[] | null | undefined): FactorRow[] {
  return (rows ?? []).map((r) => ({
    ...r,
    secret: null,
    web_authn_credential: null,
    last_totp_step: null,
    created_at: parseTimestamptz(r.created_at),
    updated_at: parseTimestamptz(r.updated_at),
    last_challenged_at: r.last_challenged_at ? parseTimestamptz(r.last_challenged_at) : null,
  }));
}

export async function findFactorsByUser(q: Queryable, userId: string): Promise<FactorRow[]> {
  const { rows } = await q.query<FactorRow>('select * from mfa_factors where user_id = $1 order by created_at', [userId]);
  return rows;
}

/** The user's factor `id` (null when it is not the user's), locked when `lock` until the transaction ends. */
export async function findOwnedFactor(q: Queryable, userId: string, id: string, lock = false): Promise<FactorRow | null> {
  const { rows } = await q.query<FactorRow>(`select * from mfa_factors where id = $1 and user_id = $2${lock ? ' for update' : ''}`, [
    id,
    userId,
  ]);
  return rows[0] ?? null;
}

/**
 * The user's factors (locked, so that concurrent enrolments of one user count each other) after deleting
 * every user's unverified factors that never had a challenge and are older than `expirySeconds`, as the
 * original does at each enrolment. Null when the user is gone: deleted, or soft-deleted, by a concurrent request.
 */
export async function lockFactorsForEnrolment(q: Queryable, userId: string, expirySeconds: number): Promise<FactorRow[] | null> {
  await q.query(
    `delete from mfa_factors f where f.status <> 'verified' and f.created_at < now() - make_interval(secs => $1)
       and not exists (select 1 from mfa_challenges c where c.factor_id = f.id)`,
    [expirySeconds],
  );
  // The user row is the lock: factors that do not exist yet cannot be locked.
  return (await lockLiveUserById(q, userId)) ? findFactorsByUser(q, userId) : null;
}

export interface NewFactor {
  id: string;
  userId: string;
  friendlyName: string;
  factorType: string;
  secret?: string | null;
  phone?: string | null;
}

export async function insertFactor(q: Queryable, f: NewFactor): Promise<FactorRow> {
  const { rows } = await q.query<FactorRow>(
    `insert into mfa_factors (id, user_id, friendly_name, factor_type, status, secret, phone)
     values ($1, $2, $3, $4, 'unverified', $5, $6) returning *`,
    [f.id, f.userId, f.friendlyName, f.factorType, f.secret ?? null, f.phone ?? null],
  );
  return rows[0];
}

/**
 * Which of the user's unique factor indexes a write ran into (23505), else null: a writer that does not take
 * the user's row first (as ours all do) committed the same name or number between a check and the write.
 */
export function takenFactorIndex(err: unknown): 'friendly_name' | 'phone' | null {
  const e = err as { code?: string; constraint?: string } | null;
  if (e?.code !== '23505') return null;
  if (e.constraint === 'mfa_factors_user_friendly_name_unique') return 'friendly_name';
  return e.constraint === 'unique_phone_factor_per_user' ? 'phone' : null;
}

export async function deleteFactors(q: Queryable, ids: string[]): Promise<void> {
  if (ids.length) await q.query('delete from mfa_factors where id = any($1::uuid[])', [ids]);
}

/** Updates a factor's columns (only those given) and its updated_at; returns the row. */
export async function updateFactor(
  q: Queryable,
  id: string,
  fields: Partial<Pick<FactorRow, 'friendly_name' | 'phone' | 'secret' | 'status' | 'last_challenged_at'>>,
): Promise<FactorRow> {
  const names = Object.keys(fields).filter((k) => fields[k as keyof typeof fields] !== undefined);
  const sets = names.map((name, i) => `${name} = $${i + 2}`);
  const { rows } = await q.query<FactorRow>(
    `update mfa_factors set ${[...sets, 'updated_at = now()'].join(', ')} where id = $1 returning *`,
    [id, ...names.map((n) => fields[n as keyof typeof fields])],
  );
  return rows[0];
}

/**
 * Records TOTP time step `step` as used, unless that step or a later one already was: false means the
 * code was already spent (or an older one is being replayed).
 */
export async function spendTotpStep(q: Queryable, factorId: string, step: number): Promise<boolean> {
  const { rowCount } = await q.query(
    'update mfa_factors set last_totp_step = $2 where id = $1 and (last_totp_step is null or last_totp_step < $2)',
    [factorId, step],
  );
  return rowCount === 1;
}

/**
 * Deletes a factor and takes back what it gave (the original's DowngradeSessionsToAAL1): sessions upgraded
 * with it lose its AMR method and fall back to aal1.
 */
export async function deleteFactorAndDowngrade(q: Queryable, factor: Pick<FactorRow, 'id' | 'user_id'>, amrMethod: string): Promise<void> {
  await q.query(
    `with gone as (delete from mfa_factors where id = $1),
          claims as (delete from mfa_amr_claims where authentication_method = $3
                       and session_id in (select id from sessions where user_id = $2 and factor_id = $1))
     update sessions set aal = 'aal1', factor_id = null, updated_at = now() where user_id = $2 and factor_id = $1`,
    [factor.id, factor.user_id, amrMethod],
  );
}

/** The session's assurance level (aal1 without a session) and whether the user has a verified factor, in one read. */
export async function assuranceOf(
  q: Queryable,
  userId: string,
  sessionId: string | null,
): Promise<{ aal: string; hasVerifiedFactor: boolean }> {
  const { rows } = await q.query<{ aal: string | null; verified: boolean }>(
    `select (select aal from sessions where id = $2) as aal,
            exists (select 1 from mfa_factors where user_id = $1 and status = 'verified') as verified`,
    [userId, sessionId],
  );
  return { aal: rows[0].aal ?? 'aal1', hasVerifiedFactor: rows[0].verified };
}

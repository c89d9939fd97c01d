// A database as the original service leaves it (test/fixtures/gotrue-schema.sql) plus what applications
// build on it: a profiles table with a foreign key to auth.users filled by a trigger on auth.users, and
// a notes table whose row-level-security policy calls auth.uid(). Used by the adoption tests.
import { createCipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import bcrypt from 'bcryptjs';
import pg from 'pg';
import { migrate } from '../../dist/db/migrate.js';
import { createTestDatabase, type TestDatabase } from './db.js';

const FIXTURE = readFileSync(new URL('../fixtures/gotrue-schema.sql', import.meta.url), 'utf8');

export const ALICE = {
  id: '11111111-1111-4111-8111-111111111111',
  email: 'alice@example.com',
  password: 'alice-password',
  sessionId: '22222222-2222-4222-8222-222222222222',
  /** revoked, the parent of the active one */
  oldToken: 'aaaaaaaaaaa1',
  /** the token Alice's client holds */
  activeToken: 'bbbbbbbbbbb2',
  /** the code in the recovery mail sent before the move; the link carries sha224(email + code) */
  recoveryCode: '246810',
};
export const BOB = { id: '33333333-3333-4333-8333-333333333333', phone: '15550001111' };
/** signed up, not confirmed yet; her pending token lives only in users.confirmation_token, as before 2024 */
export const DANA = { id: '44444444-4444-4444-8444-444444444444', email: 'dana@example.com', confirmationCode: '135790' };

/**
 * The original's MFA rows: Alice's verified TOTP factor with its secret in clear (the original without
 * SECURITY_DB_ENCRYPTION), an aal2 session she reached with it, a webauthn factor in go-webauthn's JSON
 * and a passkey; Bob's phone factor with a challenge in flight; Dana's unverified TOTP factor whose
 * secret the original sealed with its SECURITY_DB_ENCRYPTION key (ORIGINAL_KEY).
 */
export const MFA = {
  totpFactorId: '55555555-5555-4555-8555-555555555555',
  totpSecret: 'JBSWY3DPEHPK3PXP',
  aal2SessionId: '66666666-6666-4666-8666-666666666666',
  aal2Token: 'ccccccccccc3',
  webauthnFactorId: '77777777-7777-4777-8777-777777777777',
  credentialId: Buffer.from('alice-security-key-credential'),
  publicKey: Buffer.from('a5010203262001215820', 'hex'),
  passkeyId: '88888888-8888-4888-8888-888888888888',
  phoneFactorId: '99999999-9999-4999-8999-999999999999',
  phoneChallengeId: 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa',
  phoneCode: '424242',
  sealedFactorId: 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb',
  sealedSecret: 'KRSXG5CTMVRXEZLU',
};
export const ORIGINAL_KEY = { id: 'gotrue-key-1', key: randomBytes(32).toString('base64url') };

/** A value sealed as the original's SECURITY_DB_ENCRYPTION does: AES-256-GCM under HKDF-SHA256(key, info = row id). */
export function sealLikeOriginal(rowId: string, value: string, key = ORIGINAL_KEY): string {
  const rowKey = Buffer.from(hkdfSync('sha256', Buffer.from(key.key, 'base64url'), Buffer.alloc(0), Buffer.from(rowId), 32));
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', rowKey, nonce);
  const data = Buffer.concat([cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return JSON.stringify({ key_id: key.id, alg: 'aes-gcm-hkdf', data: data.toString('base64'), nonce: nonce.toString('base64') });
}

async function insertOriginalMfa(c: pg.Client): Promise<void> {
  await c.query(
    `insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, status, created_at, updated_at, secret, phone,
                                   web_authn_credential, web_authn_aaguid) values
     ($1, $2, 'phone app', 'totp', 'verified', now() - interval '3 days', now() - interval '3 days', $3, null, null, null),
     ($4, $2, 'security key', 'webauthn', 'verified', now() - interval '2 days', now() - interval '2 days', null, null, $5, null),
     ($6, $7, '', 'phone', 'verified', now() - interval '2 days', now() - interval '2 days', null, $8, null, null),
     ($9, $10, '', 'totp', 'unverified', now(), now(), $11, null, null, null)`,
    [
      MFA.totpFactorId,
      ALICE.id,
      MFA.totpSecret,
      MFA.webauthnFactorId,
      {
        id: MFA.credentialId.toString('base64'),
        publicKey: MFA.publicKey.toString('base64'),
        attestationType: 'none',
        transport: ['usb'],
        flags: { userPresent: true, userVerified: true, backupEligible: false, backupState: false },
        authenticator: { AAGUID: Buffer.alloc(16).toString('base64'), signCount: 7, cloneWarning: false, attachment: 'cross-platform' },
      },
      MFA.phoneFactorId,
      BOB.id,
      BOB.phone,
      MFA.sealedFactorId,
      DANA.id,
      sealLikeOriginal(MFA.sealedFactorId, MFA.sealedSecret),
    ],
  );
  await c.query(
    `insert into auth.mfa_challenges (id, factor_id, created_at, ip_address, otp_code, web_authn_session_data) values
     ($1, $2, now() - interval '1 minute', '203.0.113.9', $3, null),
     (gen_random_uuid(), $4, now() - interval '1 minute', '203.0.113.9', null, '{"challenge":"abc","user_id":"x"}')`,
    [MFA.phoneChallengeId, MFA.phoneFactorId, MFA.phoneCode, MFA.webauthnFactorId],
  );
  await c.query(
    `insert into auth.webauthn_credentials (id, user_id, credential_id, public_key, attestation_type, sign_count, transports, friendly_name)
     values ($1, $2, $3, $4, 'none', 3, '["internal"]', 'laptop')`,
    [MFA.passkeyId, ALICE.id, Buffer.from('alice-passkey-credential'), MFA.publicKey],
  );
  await c.query(
    `insert into auth.webauthn_challenges (user_id, challenge_type, session_data, expires_at)
     values ($1, 'authentication', '{"challenge":"xyz"}', now() + interval '5 minutes')`,
    [ALICE.id],
  );
  // The session Alice raised to aal2 with her TOTP factor, and the refresh token her client holds for it.
  await c.query(
    `insert into auth.sessions (id, user_id, created_at, updated_at, factor_id, aal, refreshed_at, user_agent, ip)
     values ($1, $2, now() - interval '1 hour', now(), $3, 'aal2', now() at time zone 'UTC', 'phone', '203.0.113.9')`,
    [MFA.aal2SessionId, ALICE.id, MFA.totpFactorId],
  );
  await c.query(
    `insert into auth.mfa_amr_claims (id, session_id, created_at, updated_at, authentication_method) values
     (gen_random_uuid(), $1, now() - interval '1 hour', now() - interval '1 hour', 'password'),
     (gen_random_uuid(), $1, now() - interval '59 minutes', now() - interval '59 minutes', 'totp')`,
    [MFA.aal2SessionId],
  );
  await c.query(
    `insert into auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, parent, session_id)
     values ('00000000-0000-0000-0000-000000000000', $1, $2, false, now() - interval '1 hour', now() - interval '1 hour', null, $3)`,
    [MFA.aal2Token, ALICE.id, MFA.aal2SessionId],
  );
}

export const sha224 = (text: string) => createHash('sha224').update(text).digest('hex');

export interface OriginalDatabase extends TestDatabase {
  /** a role of this cluster that PostgREST would switch to, with access to public.notes */
  apiRole: string;
  query(text: string, values?: unknown[]): Promise<pg.QueryResult>;
}

export async function createOriginalDatabase(extra?: (c: pg.Client) => Promise<unknown>): Promise<OriginalDatabase> {
  const db = await createTestDatabase();
  const apiRole = `api_${randomBytes(4).toString('hex')}`;
  await withClient(db.url, async (c) => {
    await c.query(FIXTURE);
    await c.query(`
      create table public.profiles (id uuid primary key references auth.users (id) on delete cascade, email text);
      create function public.handle_new_user() returns trigger language plpgsql as $$
        begin insert into public.profiles (id, email) values (new.id, new.email); return new; end $$;
      create trigger on_auth_user_created after insert on auth.users for each row execute function public.handle_new_user();
      create table public.notes (id serial primary key, owner uuid not null references auth.users (id), body text);
      alter table public.notes enable row level security;
      create policy own_notes on public.notes using (owner = auth.uid());
      create role ${apiRole} nologin;
      grant usage on schema auth, public to ${apiRole};
      grant select on public.notes to ${apiRole};`);
    const hash = bcrypt.hashSync(ALICE.password, 10);
    await c.query(
      `insert into auth.users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at, confirmation_token,
                               recovery_token, recovery_sent_at, email_change_token_new, email_change, last_sign_in_at,
                               raw_app_meta_data, raw_user_meta_data, is_super_admin, created_at, updated_at)
       values ('00000000-0000-0000-0000-000000000000', $1, 'authenticated', 'authenticated', $2, $3, now() - interval '10 days', '',
               $4, now() - interval '5 minutes', '', '', now() - interval '1 day',
               '{"provider":"email","providers":["email"]}', '{"name":"Alice"}', null, now() - interval '10 days', now())`,
      [ALICE.id, ALICE.email, hash, sha224(ALICE.email + ALICE.recoveryCode)],
    );
    await c.query(
      `insert into auth.one_time_tokens (id, user_id, token_type, token_hash, relates_to, created_at)
       values (gen_random_uuid(), $1, 'recovery_token', $2, $3, now() at time zone 'UTC' - interval '5 minutes')`,
      [ALICE.id, sha224(ALICE.email + ALICE.recoveryCode), ALICE.email],
    );
    // An older row: absent values stored as '' rather than NULL.
    await c.query(
      `insert into auth.users (instance_id, id, aud, role, email, phone, encrypted_password, phone_confirmed_at, confirmation_token,
                               recovery_token, email_change, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
       values ('00000000-0000-0000-0000-000000000000', $1, 'authenticated', 'authenticated', '', $2, '', now(), '', '', '',
               '{"provider":"phone","providers":["phone"]}', '{}', now(), now())`,
      [BOB.id, BOB.phone],
    );
    await c.query(
      `insert into auth.users (instance_id, id, aud, role, email, encrypted_password, confirmation_token, confirmation_sent_at,
                               recovery_token, email_change, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
       values ('00000000-0000-0000-0000-000000000000', $1, 'authenticated', 'authenticated', $2, $3, $4, now() - interval '2 minutes',
               '', '', '{"provider":"email","providers":["email"]}', '{}', now(), now())`,
      [DANA.id, DANA.email, bcrypt.hashSync('dana-password', 4), sha224(DANA.email + DANA.confirmationCode)],
    );
    await c.query(
      `insert into auth.identities (provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
       values ($1::text, $1::uuid, $2, 'email', now(), now(), now())`,
      [ALICE.id, { sub: ALICE.id, email: ALICE.email, email_verified: true }],
    );
    await c.query(
      `insert into auth.sessions (id, user_id, created_at, updated_at, aal, refreshed_at, user_agent, ip)
       values ($1, $2, now() - interval '1 day', now(), 'aal1', now() at time zone 'UTC', 'old-browser', '203.0.113.9')`,
      [ALICE.sessionId, ALICE.id],
    );
    await c.query(
      `insert into auth.mfa_amr_claims (id, session_id, created_at, updated_at, authentication_method)
       values (gen_random_uuid(), $1, now() - interval '1 day', now() - interval '1 day', 'password')`,
      [ALICE.sessionId],
    );
    await c.query(
      `insert into auth.refresh_tokens (instance_id, token, user_id, revoked, created_at, updated_at, parent, session_id) values
       ('00000000-0000-0000-0000-000000000000', $1, $3, true, now() - interval '1 day', now() - interval '1 hour', null, $4),
       ('00000000-0000-0000-0000-000000000000', $2, $3, false, now() - interval '1 hour', now() - interval '1 hour', $1, $4)`,
      [ALICE.oldToken, ALICE.activeToken, ALICE.id, ALICE.sessionId],
    );
    await c.query(`insert into auth.audit_log_entries (instance_id, id, payload, created_at, ip_address)
                   values ('00000000-0000-0000-0000-000000000000', gen_random_uuid(), '{"action":"login"}', now(), '203.0.113.9')`);
    await insertOriginalMfa(c);
    await c.query(`insert into public.notes (owner, body) values ($1, 'alice''s note'), ($2, 'bob''s note')`, [ALICE.id, BOB.id]);
    await extra?.(c);
  });
  return {
    ...db,
    apiRole,
    query: (text, values) => withClient(db.url, (c) => c.query(text, values)),
    drop: async () => {
      await db.drop();
      await withClient(process.env.TEST_DATABASE_URL!, (c) => c.query(`drop role if exists ${apiRole}`));
    },
  };
}

export async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * The shape of a schema: every column (type, nullability, default or generation), index and constraint
 * of the named tables, as sorted text, so two databases can be compared regardless of column order.
 */
export async function describeTables(url: string, schema: string, tables: string[]): Promise<string[]> {
  const { rows } = await withClient(url, (c) =>
    c.query(
      `select format('column %s.%s %s %s %s %s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
                     case when a.attnotnull then 'not null' else 'null' end, a.attgenerated, pg_get_expr(d.adbin, d.adrelid)) as line
       from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
       left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
       where n.nspname = $1 and c.relname = any($2) and a.attnum > 0 and not a.attisdropped
       union all
       select format('index %s', pg_get_indexdef(i.indexrelid)) from pg_index i join pg_class c on c.oid = i.indrelid
       join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relname = any($2)
       union all
       select format('constraint %s.%s %s', c.relname, con.conname, pg_get_constraintdef(con.oid)) from pg_constraint con
       join pg_class c on c.oid = con.conrelid join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relname = any($2)
       order by 1`,
      [schema, tables],
    ),
  );
  return rows.map((r) => r.line);
}

/** Every table and column of a schema, to show that a failed adoption changed nothing. */
export async function snapshot(url: string, schema: string): Promise<string[]> {
  const { rows } = await withClient(url, (c) =>
    c.query(
      `select format('%s.%s %s', c.relname, a.attname, format_type(a.atttypid, a.atttypmod)) as line
       from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = $1 and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped
       union all select format('schema %s', nspname) from pg_namespace
       union all select format('type %s', t.typname) from pg_type t join pg_namespace n on n.oid = t.typnamespace where n.nspname = $1
       union all select format('rows %s', count(*)) from auth.refresh_tokens
       order by 1`,
      [schema],
    ),
  );
  return rows.map((r) => r.line);
}

/** describeTables of a fresh install (a new database, our migrations only): what an adopted schema must equal. */
export async function describeFreshInstall(tables: string[]): Promise<string[]> {
  const fresh = await createTestDatabase();
  try {
    await migrate(fresh.url, 'auth');
    return await describeTables(fresh.url, 'auth', tables);
  } finally {
    await fresh.drop();
  }
}

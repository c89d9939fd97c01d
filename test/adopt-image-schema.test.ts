// A fresh self-hosted Supabase stack: its database image creates the original's first tables (2018,
// test/fixtures/supabase-image-auth-schema.sql) before any auth service runs, so the first start of ours
// adopts that schema rather than an empty one. It must start, keep a user written there, and serve, also
// as a role set up as the image sets up its auth role, which had no CREATE on the database before late 2025.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import bcrypt from 'bcryptjs';
import { migrate } from '../dist/db/migrate.js';
import { createTestDatabase } from './helpers/db.js';
import { startTestService } from './helpers/server.js';
import { describeFreshInstall, describeTables, withClient } from './helpers/gotrue-db.js';

const FIXTURE = readFileSync(new URL('./fixtures/supabase-image-auth-schema.sql', import.meta.url), 'utf8');
const OUR_TABLES = ['users', 'identities', 'sessions', 'refresh_tokens', 'one_time_tokens', 'audit_log_entries'];
/** A refresh token as the original issued them before it had sessions: 16 random bytes, base64url. */
const LEGACY_TOKEN = 'Xq3bNk0LhX9zA-c_T7pWdQ';
const ERIN = { id: '88888888-8888-4888-8888-888888888888', email: 'erin@example.com', password: 'erin-password-1' };

/** A database in the image's starting state, with one user and a session-less refresh token of that era. */
async function imageDatabase() {
  const db = await createTestDatabase();
  await withClient(db.url, async (c) => {
    await c.query(FIXTURE);
    await c.query(
      `insert into auth.users (instance_id, id, aud, role, email, encrypted_password, confirmed_at, email_change,
                               email_change_token, email_change_sent_at, raw_app_meta_data, raw_user_meta_data, created_at, updated_at)
       values ('00000000-0000-0000-0000-000000000000', $1, 'authenticated', 'authenticated', $2, $3, now(),
               'erin.new@example.com', 'pending-change-token', now(), '{"provider":"email"}', '{}', now(), now())`,
      [ERIN.id, ERIN.email, bcrypt.hashSync(ERIN.password, 10)],
    );
    await c.query(
      `insert into auth.refresh_tokens (token, user_id, revoked, created_at, updated_at)
       values ('old-token', $1, false, now(), now()), ($2, $1, false, now(), now())`,
      [ERIN.id, LEGACY_TOKEN],
    );
  });
  return db;
}

t.test("the image's schema is adopted into ours; the user written there signs in, and sign-up works", async (t) => {
  const db = await imageDatabase();
  t.teardown(() => db.drop());
  const lines: string[] = [];
  const result = await migrate(db.url, 'auth', (line: string) => lines.push(line));
  t.equal(result.adopted, true);
  // the original renamed both in 2021; before that confirmed_at was the email's confirmation
  t.ok(lines.includes("users: column confirmed_at renamed email_confirmed_at, as the original's 2021 migrations rename it"));
  const pending = await withClient(db.url, (c) =>
    c.query(
      `select token_type, relates_to, token_hash = encode(sha256('pending-change-token'), 'hex') as hashed from auth.one_time_tokens`,
    ),
  );
  t.strictSame(
    pending.rows,
    [{ token_type: 'email_change_token_new', relates_to: 'erin.new@example.com', hashed: true }],
    'the pending email change (email_change_token, named email_change_token_new since 2021) is kept, hashed',
  );
  t.ok(
    lines.includes('refresh tokens hashed and copied: 0 rows'),
    'tokens from before sessions existed are left out, as the original cannot refresh them',
  );

  t.strictSame(
    await describeTables(db.url, 'auth', OUR_TABLES),
    await describeFreshInstall(OUR_TABLES),
    'exactly what a fresh install has',
  );

  const api = await startTestService({ DATABASE_URL: db.url, AUTH_SITE_URL: 'http://localhost:3000', AUTH_MAILER_AUTOCONFIRM: 'true' });
  t.teardown(() => api.stop());
  const signIn = await api.request('POST', '/token?grant_type=password', { body: { email: ERIN.email, password: ERIN.password } });
  t.equal(signIn.status, 200, JSON.stringify(signIn.body));
  t.equal(signIn.body.user.id, ERIN.id);
  t.ok(signIn.body.user.email_confirmed_at, 'her confirmation is kept (without it the sign-in above is refused)');
  t.equal(signIn.body.user.new_email, 'erin.new@example.com');
  t.equal(signIn.body.user.identities.length, 0, 'she had no identity row then; none is invented');
  const legacy = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: LEGACY_TOKEN } });
  t.equal(legacy.status, 400);
  // the original's current versions refuse the shape (validation_failed); see docs/differences.md
  t.equal(legacy.body.error_code, 'refresh_token_not_found', 'her token from before sessions is unknown: adoption left it out');
  const signUp = await api.request('POST', '/signup', { body: { email: 'new@example.com', password: 'a-new-password-1' } });
  t.equal(signUp.status, 200);
  const uid = await api.db.query(`select set_config('request.jwt.claim.sub', $1, true), auth.uid() as uid`, [ERIN.id]);
  t.equal(uid.rows[0].uid, ERIN.id, "the image's auth.uid() still answers");
});

t.test("the image's auth role, without CREATE on the database, adopts the schema and serves", async (t) => {
  const db = await imageDatabase();
  const role = `auth_admin_${randomBytes(4).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  await withClient(db.url, async (c) => {
    // as the image sets its auth role up before late 2025: all on the schema, owner of its tables and
    // functions, nothing on the database (PUBLIC's CREATE goes too, as on a hardened database)
    await c.query(`create role ${role} login password '${password}'`);
    await c.query(`revoke create on database ${new URL(db.url).pathname.slice(1)} from public`);
    await c.query(`grant all on schema auth to ${role}`);
    for (const table of ['users', 'refresh_tokens', 'instances', 'audit_log_entries', 'schema_migrations']) {
      await c.query(`alter table auth.${table} owner to ${role}`);
    }
    for (const fn of ['uid', 'role', 'email']) await c.query(`alter function auth.${fn}() owner to ${role}`);
  });
  t.teardown(async () => {
    await db.drop();
    await withClient(new URL('/postgres', db.url).toString(), (c) => c.query(`drop role if exists ${role}`));
  });
  const asRole = new URL(db.url);
  asRole.username = role;
  asRole.password = password;
  const hasCreate = await withClient(db.url, (c) =>
    c.query(`select has_database_privilege($1, current_database(), 'CREATE') as allowed`, [role]),
  );
  t.equal(hasCreate.rows[0].allowed, false, 'the role really lacks CREATE on the database');

  const result = await migrate(asRole.toString(), 'auth');
  t.equal(result.adopted, true);
  t.strictSame(
    await describeTables(db.url, 'auth', OUR_TABLES),
    await describeFreshInstall(OUR_TABLES),
    'exactly what a fresh install has',
  );
  const owners = await withClient(db.url, (c) =>
    c.query(`select distinct tableowner from pg_tables where schemaname = 'auth' and tablename = any($1)`, [OUR_TABLES]),
  );
  t.strictSame(owners.rows, [{ tableowner: role }], 'every table adoption made belongs to the role');
  const schemas = await withClient(db.url, (c) => c.query(`select nspname from pg_namespace where nspname like 'portcullis%'`));
  t.strictSame(schemas.rows, [], 'no schema besides auth was needed');

  const api = await startTestService({ DATABASE_URL: asRole.toString(), AUTH_SITE_URL: 'http://localhost:3000' });
  t.teardown(() => api.stop());
  const signIn = await api.request('POST', '/token?grant_type=password', { body: { email: ERIN.email, password: ERIN.password } });
  t.equal(signIn.status, 200, JSON.stringify(signIn.body));
  t.equal(signIn.body.user.id, ERIN.id);
});

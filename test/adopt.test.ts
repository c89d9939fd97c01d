// Adoption of the original's database in place (docs/adopting-gotrue.md): a database built with the
// original's schema (test/fixtures/gotrue-schema.sql) and an application on top of it is converted at
// the first start, after which the original's users, sessions, refresh tokens and mailed links work,
// and the application's foreign key, trigger and row-level-security policy keep working.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { migrate } from '../dist/db/migrate.js';
import { createTestDatabase } from './helpers/db.js';
import { startTestService } from './helpers/server.js';
import { ALICE, BOB, DANA, createOriginalDatabase, describeTables, sha224, snapshot, withClient } from './helpers/gotrue-db.js';

const OUR_TABLES = [
  'users',
  'identities',
  'sessions',
  'mfa_amr_claims',
  'refresh_tokens',
  'one_time_tokens',
  'flow_state',
  'audit_log_entries',
  'rate_limits',
];
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());

t.test('adopted in place: the same schema as a fresh install, the original users and tokens working', async (t) => {
  // A failed start of an earlier version left an empty migrations table behind (the report).
  const original = await createOriginalDatabase((c) =>
    c.query(
      'create table auth.migrations (migration_id serial primary key, created_at timestamp with time zone not null default now(), name text)',
    ),
  );
  t.teardown(() => original.drop());
  const lines: string[] = [];
  const result = await migrate(original.url, 'auth', (line: string) => lines.push(line));
  t.equal(result.adopted, true);
  t.ok(
    lines.some((l) => l === 'refresh tokens hashed and copied: 2 rows'),
    lines.join('\n'),
  );

  const fresh = await createTestDatabase();
  t.teardown(() => fresh.drop());
  await migrate(fresh.url, 'auth');
  t.strictSame(
    await describeTables(original.url, 'auth', OUR_TABLES),
    await describeTables(fresh.url, 'auth', OUR_TABLES),
    'exactly what a fresh install has',
  );

  const { rows: users } = await original.query(
    'select id, email, phone, encrypted_password, confirmed_at is not null as confirmed from auth.users order by id',
  );
  t.equal(users.length, 3);
  t.match(users[0], { id: ALICE.id, email: ALICE.email, confirmed: true });
  t.match(users[1], { id: BOB.id, email: null, phone: BOB.phone, encrypted_password: null, confirmed: true }, "'' became NULL");
  const tables = (await original.query(`select tablename from pg_tables where schemaname = 'auth' order by 1`)).rows.map(
    (r) => r.tablename,
  );
  for (const kept of [
    'gotrue_schema_migrations',
    'gotrue_instances',
    'gotrue_mfa_factors',
    'gotrue_mfa_challenges',
    'gotrue_sso_providers',
    'gotrue_saml_relay_states',
  ]) {
    t.ok(tables.includes(kept), `${kept} kept aside`);
  }
  t.notOk(tables.includes('gotrue_refresh_tokens'), 'no refresh token left in clear');
  t.equal((await original.query('select count(*)::int as n from auth.gotrue_mfa_factors')).rows[0].n, 1);
  t.equal(
    (await original.query(`select count(*)::int as n from auth.refresh_tokens where token_hash = $1`, [ALICE.activeToken])).rows[0].n,
    0,
  );

  const api = await startTestService({ DATABASE_URL: original.url, AUTH_SITE_URL: 'http://localhost:3000' });
  t.teardown(() => api.stop());

  await t.test('a second start is a no-op', async (t) => {
    const before = (await original.query('select migration_id, created_at from auth.migrations order by 1')).rows;
    const again = await migrate(original.url, 'auth');
    t.strictSame(again, { applied: 0, adopted: false, pending: [] });
    t.strictSame((await original.query('select migration_id, created_at from auth.migrations order by 1')).rows, before);
  });

  await t.test('the refresh token the client holds refreshes, in its session, with its amr', async (t) => {
    const res = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: ALICE.activeToken } });
    t.equal(res.status, 200, res.text);
    t.equal(res.body.user.id, ALICE.id);
    const claims = claimsOf(res.body.access_token);
    t.equal(claims.session_id, ALICE.sessionId);
    t.equal(claims.aal, 'aal1');
    t.strictSame(
      claims.amr.map((a: { method: string }) => a.method),
      ['password'],
    );
    const next = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: res.body.refresh_token } });
    t.equal(next.status, 200, 'and its successor too');
  });

  await t.test('the bcrypt user signs in with the password set under the original; the hash is upgraded', async (t) => {
    const res = await api.request('POST', '/token?grant_type=password', { body: { email: ALICE.email, password: ALICE.password } });
    t.equal(res.status, 200, res.text);
    t.equal(res.body.user.id, ALICE.id);
    t.equal(res.body.user.user_metadata.name, 'Alice');
    const { rows } = await original.query('select encrypted_password from auth.users where id = $1', [ALICE.id]);
    t.match(rows[0].encrypted_password, /^\$argon2id\$/, 'upgraded from bcrypt');
    const wrong = await api.request('POST', '/token?grant_type=password', { body: { email: ALICE.email, password: 'not-it' } });
    t.equal(wrong.status, 400);
  });

  await t.test('the recovery link mailed before the move still works, once', async (t) => {
    const link = `/verify?token=${sha224(ALICE.email + ALICE.recoveryCode)}&type=recovery&redirect_to=http://localhost:3000/reset`;
    const res = await api.request('GET', link);
    t.equal(res.status, 303);
    const location = res.headers.get('location')!;
    t.match(location, /^http:\/\/localhost:3000\/reset#access_token=/);
    const fragment = new URLSearchParams(location.split('#')[1]);
    t.equal(fragment.get('type'), 'recovery');
    t.equal(claimsOf(fragment.get('access_token')!).sub, ALICE.id);
    const again = await api.request('GET', link);
    t.match(again.headers.get('location'), /error_code=otp_expired/);
  });

  await t.test('the confirmation code mailed before the move (kept only in the users column) confirms the sign-up', async (t) => {
    const res = await api.request('POST', '/verify', { body: { type: 'signup', email: DANA.email, token: DANA.confirmationCode } });
    t.equal(res.status, 200, res.text);
    t.equal(res.body.user.id, DANA.id);
    t.ok(res.body.user.email_confirmed_at);
    t.ok(res.body.access_token);
  });

  await t.test("the application's foreign key and trigger fire on a new sign-up", async (t) => {
    const res = await api.request('POST', '/signup', { body: { email: 'carol@example.com', password: 'carol-password' } });
    t.equal(res.status, 200, res.text);
    const id = res.body.id ?? res.body.user.id;
    const { rows } = await original.query('select email from public.profiles where id = $1', [id]);
    t.strictSame(rows, [{ email: 'carol@example.com' }]);
    const profiles = await original.query('select count(*)::int as n from public.profiles');
    t.equal(profiles.rows[0].n, 4, 'no extra profile rows from adoption itself');
  });

  await t.test('the policy sees the user through the settings PostgREST makes', async (t) => {
    for (const [setting, value] of [
      ['request.jwt.claims', JSON.stringify({ sub: ALICE.id, role: 'authenticated' })],
      ['request.jwt.claim.sub', ALICE.id],
    ]) {
      const rows = await withClient(original.url, async (c) => {
        await c.query('begin');
        await c.query(`set local role ${original.apiRole}`);
        await c.query('select set_config($1, $2, true)', [setting, value]);
        const { rows } = await c.query('select body from public.notes');
        await c.query('rollback');
        return rows;
      });
      t.strictSame(rows, [{ body: "alice's note" }], setting);
    }
  });
});

t.test("a view in the application's schema on auth.users survives: the column type it uses is kept", async (t) => {
  const original = await createOriginalDatabase((c) => c.query('create view public.user_emails as select id, email from auth.users'));
  t.teardown(() => original.drop());
  const lines: string[] = [];
  await migrate(original.url, 'auth', (line: string) => lines.push(line));
  t.ok(lines.includes('users: kept email as character varying(255) (not text): used by public.user_emails'), lines.join('\n'));
  const { rows } = await original.query('select email from public.user_emails where id = $1', [ALICE.id]);
  t.strictSame(rows, [{ email: ALICE.email }]);
});

t.test('a failure half way leaves the original schema untouched', async (t) => {
  // The original compares emails case-sensitively; ours does not, so these two cannot both be adopted.
  const original = await createOriginalDatabase((c) =>
    c.query(`insert into auth.users (id, aud, role, email, created_at, updated_at) values
             (gen_random_uuid(), 'authenticated', 'authenticated', 'Dup@example.com', now(), now()),
             (gen_random_uuid(), 'authenticated', 'authenticated', 'dup@example.com', now(), now())`),
  );
  t.teardown(() => original.drop());
  const before = await snapshot(original.url, 'auth');
  await t.rejects(migrate(original.url, 'auth'), /users_email_key|duplicate/);
  t.strictSame(await snapshot(original.url, 'auth'), before);
  const { rows } = await original.query(`select count(*)::int as n from auth.refresh_tokens where token = $1`, [ALICE.activeToken]);
  t.equal(rows[0].n, 1);
});

t.test('a dry run reports adoption and the pending migrations, and changes nothing', async (t) => {
  const original = await createOriginalDatabase();
  t.teardown(() => original.drop());
  const before = await snapshot(original.url, 'auth');
  const lines: string[] = [];
  const result = await migrate(original.url, 'auth', (line: string) => lines.push(line), { dryRun: true });
  t.equal(result.adopted, true);
  t.ok(result.pending.length > 0);
  t.ok(lines.includes('[dry run] refresh tokens hashed and copied: 2 rows'), lines.join('\n'));
  t.ok(lines.includes('[dry run] users: dropped column confirmation_token'));
  t.ok(lines.includes(`[dry run] would apply migration ${result.pending.at(-1)}`));
  t.strictSame(await snapshot(original.url, 'auth'), before);
});

t.test('`portcullis migrate --dry-run` prints the plan on stdout and changes nothing', async (t) => {
  const original = await createOriginalDatabase();
  t.teardown(() => original.drop());
  const before = await snapshot(original.url, 'auth');
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(AUTH_|GOTRUE_)/.test(name)));
  const res = spawnSync(process.execPath, [fileURLToPath(new URL('../bin/portcullis.js', import.meta.url)), 'migrate', '--dry-run'], {
    env: {
      ...env,
      DATABASE_URL: original.url,
      AUTH_DB_DRIVER: 'postgres',
      AUTH_JWT_SECRET: 'x'.repeat(32),
      AUTH_SITE_URL: 'http://localhost:3000',
      AUTH_API_EXTERNAL_URL: 'http://localhost:9999',
      AUTH_LOG_LEVEL: 'error',
    },
    encoding: 'utf8',
  });
  t.equal(res.status, 0, res.stderr);
  const out = res.stdout.split('\n');
  t.match(out[0], /^\[dry run\] adopting the original's schema in "auth" \(10 of its migrations recorded, last 20251111201300\)$/);
  t.ok(out.includes('[dry run] refresh tokens hashed and copied: 2 rows'));
  t.ok(out.includes('[dry run] would apply migration 00006_auth_functions.sql'));
  t.strictSame(await snapshot(original.url, 'auth'), before);
  const bad = spawnSync(process.execPath, [fileURLToPath(new URL('../bin/portcullis.js', import.meta.url)), 'migrate', '--dry'], {
    env,
    encoding: 'utf8',
  });
  t.equal(bad.status, 2, 'an unknown flag is refused, not ignored');
});

t.test('a fresh database gets auth.uid(), role(), email() and jwt() reading both PostgREST forms', async (t) => {
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  await migrate(db.url, 'auth');
  const read = (settings: Record<string, string>) =>
    withClient(db.url, async (c) => {
      for (const [k, v] of Object.entries(settings)) await c.query('select set_config($1, $2, false)', [k, v]);
      return (await c.query('select auth.uid() as uid, auth.role() as role, auth.email() as email, auth.jwt() as jwt')).rows[0];
    });
  const claims = { sub: ALICE.id, role: 'authenticated', email: ALICE.email };
  t.strictSame(await read({ 'request.jwt.claims': JSON.stringify(claims) }), {
    uid: ALICE.id,
    role: 'authenticated',
    email: ALICE.email,
    jwt: claims,
  });
  t.match(await read({ 'request.jwt.claim.sub': ALICE.id, 'request.jwt.claim.role': 'anon', 'request.jwt.claim.email': 'x@example.com' }), {
    uid: ALICE.id,
    role: 'anon',
    email: 'x@example.com',
  });
  t.strictSame(await read({ 'request.jwt.claims': '' }), { uid: null, role: null, email: null, jwt: null });
});

// Adoption of the original's database in place (docs/adopting-gotrue.md): a database built with the
// original's schema (test/fixtures/gotrue-schema.sql) and an application on top of it is converted at
// the first start, after which the original's users, sessions, refresh tokens and mailed links work,
// and the application's foreign key, trigger and row-level-security policy keep working.
import t from 'tap';
import { migrate } from '../dist/db/migrate.js';
import { secretBox } from '../dist/server/mfa/encryption.js';
import { createTestDatabase } from './helpers/db.js';
import { JWT_SECRET, startTestService } from './helpers/server.js';
import { totpCode } from './helpers/mfa.js';
import { runPortcullis } from './helpers/cli.js';
import {
  ALICE,
  BOB,
  DANA,
  MFA,
  ORIGINAL_KEY,
  createOriginalDatabase,
  describeFreshInstall,
  describeTables,
  sha224,
  snapshot,
  withClient,
} from './helpers/gotrue-db.js';

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
/** The keys the test service runs with (JWT_SECRET, no SECURITY_DB_ENCRYPTION key), plus the original's key to open what it sealed. */
const box = (decryptionKeys: Record<string, string> = {}) =>
  secretBox({
    jwt: { secret: JWT_SECRET },
    security: { dbEncryption: { encrypt: false, encryptionKeyId: '', encryptionKey: '', decryptionKeys } },
  } as any);
const sealSecret = (rowId: string, stored: string) => box().sealIfClear(rowId, stored);
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
  const result = await migrate(original.url, 'auth', (line: string) => lines.push(line), { sealSecret });
  t.equal(result.adopted, true);
  for (const line of [
    'refresh tokens hashed and copied: 3 rows',
    'MFA factors copied: 4 rows',
    'TOTP secrets sealed: 1 rows',
    'MFA challenges copied: 1 rows',
    'phone challenge codes sealed: 1 rows',
    'passkeys copied: 1 rows',
  ]) {
    t.ok(lines.includes(line), line);
  }

  t.strictSame(
    await describeTables(original.url, 'auth', OUR_TABLES),
    await describeFreshInstall(OUR_TABLES),
    'exactly what a fresh install has',
  );

  const { rows: users } = await original.query(
    'select id, email, phone, encrypted_password, confirmed_at is not null as confirmed, instance_id from auth.users order by id',
  );
  t.equal(users.length, 3);
  t.match(users[0], { id: ALICE.id, email: ALICE.email, confirmed: true });
  t.equal(users[0].instance_id, '00000000-0000-0000-0000-000000000000', "the original's instance_id is kept, as seed scripts wrote it");
  t.match(users[1], { id: BOB.id, email: null, phone: BOB.phone, encrypted_password: null, confirmed: true }, "'' became NULL");
  const tables = (await original.query(`select tablename from pg_tables where schemaname = 'auth' order by 1`)).rows.map(
    (r) => r.tablename,
  );
  for (const kept of ['gotrue_schema_migrations', 'gotrue_instances']) {
    t.ok(tables.includes(kept), `${kept} kept aside`);
  }
  t.notOk(tables.includes('gotrue_refresh_tokens'), 'no refresh token left in clear');
  for (const moved of [
    'gotrue_mfa_factors',
    'gotrue_mfa_challenges',
    'gotrue_webauthn_credentials',
    'gotrue_webauthn_challenges',
    'gotrue_sso_providers',
    'gotrue_saml_relay_states',
  ]) {
    t.notOk(tables.includes(moved), `${moved} moved into ours and dropped`);
  }
  t.equal(
    (await original.query(`select count(*)::int as n from auth.refresh_tokens where token_hash = $1`, [ALICE.activeToken])).rows[0].n,
    0,
  );

  const api = await startTestService({ DATABASE_URL: original.url, AUTH_SITE_URL: 'http://localhost:3000' });
  t.teardown(() => api.stop());

  await t.test('a second start is a no-op', async (t) => {
    const before = (await original.query('select migration_id, created_at from auth.migrations order by 1')).rows;
    const factors = (await original.query('select id, secret from auth.mfa_factors order by id')).rows;
    const again = await migrate(original.url, 'auth', undefined, { sealSecret });
    t.strictSame(again, { applied: 0, adopted: false, pending: [] });
    t.strictSame((await original.query('select migration_id, created_at from auth.migrations order by 1')).rows, before);
    t.strictSame((await original.query('select id, secret from auth.mfa_factors order by id')).rows, factors, 'secrets not sealed twice');
  });

  await t.test('MFA: a dump holds no TOTP secret or phone code in clear; what the original sealed is kept', async (t) => {
    // Every row of every table in the namespace as text: what a data-only dump holds (pg_dump itself is not
    // used: the machine's may be older than the embedded server, and then refuses to run).
    const tables = (await original.query(`select tablename from pg_tables where schemaname = 'auth'`)).rows.map((r) => r.tablename);
    let dump = '';
    for (const table of tables) {
      const { rows } = await original.query(`select to_jsonb(t)::text as row from auth.${JSON.stringify(table)} t`);
      dump += rows.map((r) => r.row).join('\n');
    }
    t.ok(dump.includes(MFA.totpFactorId), 'the dump has the factor');
    t.notOk(dump.includes(MFA.totpSecret), 'but not its secret in clear');
    const { rows } = await original.query('select id, secret from auth.mfa_factors where secret is not null order by id');
    const secret = (id: string) => rows.find((r) => r.id === id)!.secret;
    t.equal(box().open(MFA.totpFactorId, secret(MFA.totpFactorId)).value, MFA.totpSecret, 'sealed with our key, for its row');
    t.equal(JSON.parse(secret(MFA.sealedFactorId)).key_id, ORIGINAL_KEY.id, "the original's envelope kept as it was");
    t.equal(box({ [ORIGINAL_KEY.id]: ORIGINAL_KEY.key }).open(MFA.sealedFactorId, secret(MFA.sealedFactorId)).value, MFA.sealedSecret);
    const [challenge] = (await original.query('select otp_code, ip_address from auth.mfa_challenges')).rows;
    t.equal(box().open(MFA.phoneChallengeId, challenge.otp_code).value, MFA.phoneCode, 'the phone code in flight, sealed');
    t.equal(challenge.ip_address, '203.0.113.9');
  });

  await t.test("MFA: the webauthn factor's credential is in our shape; the passkey is kept", async (t) => {
    const [factor] = (await original.query('select web_authn_credential as c from auth.mfa_factors where id = $1', [MFA.webauthnFactorId]))
      .rows;
    t.strictSame(factor.c, {
      credential_id: MFA.credentialId.toString('base64url'),
      public_key: MFA.publicKey.toString('base64url'),
      sign_count: 7,
      transports: ['usb'],
      attestation_type: 'none',
      backup_eligible: false,
      backed_up: false,
    });
    const { rows } = await original.query('select user_id, credential_id, sign_count, friendly_name from auth.webauthn_credentials');
    t.strictSame(rows, [
      { user_id: ALICE.id, credential_id: Buffer.from('alice-passkey-credential'), sign_count: '3', friendly_name: 'laptop' },
    ]);
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

  await t.test('MFA: the aal2 session refreshes at aal2; a password sign-in reaches aal2 with the TOTP factor', async (t) => {
    const refreshed = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: MFA.aal2Token } });
    t.equal(refreshed.status, 200, refreshed.text);
    t.equal(claimsOf(refreshed.body.access_token).aal, 'aal2');
    t.equal(claimsOf(refreshed.body.access_token).session_id, MFA.aal2SessionId);

    const signIn = await api.request('POST', '/token?grant_type=password', { body: { email: ALICE.email, password: ALICE.password } });
    t.equal(signIn.status, 200, signIn.text);
    t.equal(claimsOf(signIn.body.access_token).aal, 'aal1');
    const token = signIn.body.access_token;
    const c = await api.request('POST', `/factors/${MFA.totpFactorId}/challenge`, { token, body: {} });
    t.equal(c.status, 200, c.text);
    const wrong = await api.request('POST', `/factors/${MFA.totpFactorId}/verify`, {
      token,
      body: { challenge_id: c.body.id, code: '000000' },
    });
    t.equal(wrong.status, 422, 'a wrong code is refused');
    const c2 = await api.request('POST', `/factors/${MFA.totpFactorId}/challenge`, { token, body: {} });
    const v = await api.request('POST', `/factors/${MFA.totpFactorId}/verify`, {
      token,
      body: { challenge_id: c2.body.id, code: totpCode(MFA.totpSecret) },
    });
    t.equal(v.status, 200, v.text);
    const claims = claimsOf(v.body.access_token);
    t.equal(claims.aal, 'aal2');
    t.ok(claims.amr.some((a: { method: string }) => a.method === 'totp'));
    const old = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: ALICE.activeToken } });
    t.equal(old.status, 400, "as with the original, reaching aal2 ends the user's aal1 sessions");
  });
});

t.test("a view in the application's schema on auth.users survives: the column type it uses is kept", async (t) => {
  const original = await createOriginalDatabase((c) => c.query('create view public.user_emails as select id, email from auth.users'));
  t.teardown(() => original.drop());
  const lines: string[] = [];
  await migrate(original.url, 'auth', (line: string) => lines.push(line), { sealSecret });
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
  await t.rejects(migrate(original.url, 'auth', undefined, { sealSecret }), /users_email_key|duplicate/);
  t.strictSame(await snapshot(original.url, 'auth'), before);
  const { rows } = await original.query(`select count(*)::int as n from auth.refresh_tokens where token = $1`, [ALICE.activeToken]);
  t.equal(rows[0].n, 1);
});

t.test('a failure in the last step, moving MFA rows after the migrations ran, still leaves the original schema untouched', async (t) => {
  // A webauthn credential whose counter is not a number cannot be converted.
  const original = await createOriginalDatabase((c) =>
    c.query(
      `insert into auth.mfa_factors (id, user_id, factor_type, status, created_at, updated_at, web_authn_credential)
       values (gen_random_uuid(), $1, 'webauthn', 'verified', now(), now(), '{"id":"AAAA","authenticator":{"signCount":"many"}}')`,
      [BOB.id],
    ),
  );
  t.teardown(() => original.drop());
  const before = await snapshot(original.url, 'auth');
  const lines: string[] = [];
  await t.rejects(
    migrate(original.url, 'auth', (line: string) => lines.push(line), { sealSecret }),
    /invalid input syntax for type bigint/,
  );
  t.ok(lines.includes('applying migration 6 auth_functions.sql'), 'the failure came after every migration was applied');
  t.strictSame(await snapshot(original.url, 'auth'), before);
  const { rows } = await original.query('select secret from auth.mfa_factors where id = $1', [MFA.totpFactorId]);
  t.strictSame(rows, [{ secret: MFA.totpSecret }], 'the original MFA rows are where they were');
});

t.test('a database adopted by an earlier version, MFA tables still aside, has them moved at the next start', async (t) => {
  const original = await createOriginalDatabase();
  t.teardown(() => original.drop());
  await migrate(original.url, 'auth', undefined, { sealSecret });
  // What such a version left: the original's factors renamed aside (an older shape, without the webauthn columns).
  const factorId = '12121212-1212-4212-8212-121212121212';
  await original.query(`create table auth.gotrue_mfa_factors (id uuid primary key, user_id uuid not null, friendly_name text,
                          factor_type text not null, status text not null, created_at timestamptz not null, updated_at timestamptz not null,
                          secret text, phone text)`);
  await original.query(
    `insert into auth.gotrue_mfa_factors values ($1, $2, 'app', 'totp', 'verified', now(), now(), 'GEZDGNBVGY3TQOJQ', null)`,
    [factorId, BOB.id],
  );
  const lines: string[] = [];
  const again = await migrate(original.url, 'auth', (line: string) => lines.push(line), { sealSecret });
  t.equal(again.applied, 0);
  t.ok(lines.includes('MFA factors copied: 1 rows'), lines.join('\n'));
  const { rows } = await original.query('select user_id, secret from auth.mfa_factors where id = $1', [factorId]);
  t.equal(rows[0].user_id, BOB.id);
  t.equal(box().open(factorId, rows[0].secret).value, 'GEZDGNBVGY3TQOJQ', 'sealed');
  t.notOk((await original.query(`select to_regclass('auth.gotrue_mfa_factors') as r`)).rows[0].r, 'the source is dropped');
  const third: string[] = [];
  await migrate(original.url, 'auth', (line: string) => third.push(line), { sealSecret });
  t.strictSame(third, [], 'and the start after that has nothing to do');
});

t.test('without a key to seal them, clear TOTP secrets stop the adoption and nothing changes', async (t) => {
  const original = await createOriginalDatabase();
  t.teardown(() => original.drop());
  const before = await snapshot(original.url, 'auth');
  await t.rejects(migrate(original.url, 'auth'), /mfa_factors\.secret holds values in clear/);
  t.strictSame(await snapshot(original.url, 'auth'), before);
});

t.test('a dry run reports adoption and the pending migrations, and changes nothing', async (t) => {
  const original = await createOriginalDatabase();
  t.teardown(() => original.drop());
  const before = await snapshot(original.url, 'auth');
  const lines: string[] = [];
  const result = await migrate(original.url, 'auth', (line: string) => lines.push(line), { dryRun: true, sealSecret });
  t.equal(result.adopted, true);
  t.ok(result.pending.length > 0);
  t.ok(lines.includes('[dry run] refresh tokens hashed and copied: 3 rows'), lines.join('\n'));
  t.ok(lines.includes('[dry run] users: dropped column confirmation_token'));
  t.ok(lines.includes(`[dry run] would apply migration ${result.pending.at(-1)}`));
  t.ok(lines.includes('[dry run] MFA factors copied: 4 rows'), 'the move of MFA rows is rehearsed too');
  t.strictSame(await snapshot(original.url, 'auth'), before);
});

t.test('`portcullis migrate --dry-run` prints the plan on stdout and changes nothing', async (t) => {
  const original = await createOriginalDatabase();
  t.teardown(() => original.drop());
  const before = await snapshot(original.url, 'auth');
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(AUTH_|GOTRUE_)/.test(name)));
  const res = runPortcullis(['migrate', '--dry-run'], {
    env: {
      ...env,
      DATABASE_URL: original.url,
      AUTH_DB_DRIVER: 'postgres',
      AUTH_JWT_SECRET: 'x'.repeat(32),
      AUTH_SITE_URL: 'http://localhost:3000',
      AUTH_API_EXTERNAL_URL: 'http://localhost:9999',
      AUTH_LOG_LEVEL: 'error',
    },
  });
  t.equal(res.status, 0, res.stderr);
  const out = res.stdout.split('\n');
  t.match(out[0], /^\[dry run\] adopting the original's schema in "auth" \(12 of its migrations recorded, last 20260115000000\)$/);
  t.ok(out.includes('[dry run] refresh tokens hashed and copied: 3 rows'));
  t.ok(out.includes('[dry run] would apply migration 00006_auth_functions.sql'));
  t.strictSame(await snapshot(original.url, 'auth'), before);
  const bad = runPortcullis(['migrate', '--dry'], { env });
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

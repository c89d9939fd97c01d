// The seed scripts written for the original insert users straight into auth.users, naming its columns
// (instance_id, the token columns as '', email_change as '') and a bcrypt hash, and add the email identity
// by hand (docs/adopting-gotrue.md#users-in-place). On a Portcullis database the same statements run, and
// the seeded user signs in through auth-js and reads back as the original would show it.
import t from 'tap';
import bcrypt from 'bcryptjs';
import { startTestService } from './helpers/server.js';
import { authClient } from './helpers/auth-client.js';
import { adminToken } from './helpers/admin.js';
import { USER_COLUMNS } from '../dist/db/users.js';

const USER_ID = '6f1c5a52-4b1e-4c53-9a0e-2b7d0f3e9a11';

t.test("a user seeded with the original's insert statements signs in and reads back cleanly", async (t) => {
  const api = await startTestService();
  t.teardown(() => api.stop());
  const hash = bcrypt.hashSync('seeded-password-1', 10);
  await api.db.query(
    `insert into users (instance_id, id, aud, role, email, encrypted_password, email_confirmed_at, recovery_sent_at,
                        last_sign_in_at, raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
                        confirmation_token, email_change, email_change_token_new, recovery_token)
     values ('00000000-0000-0000-0000-000000000000', $1, 'authenticated', 'authenticated', 'seed@example.com', $2,
             now(), now(), now(), '{"provider":"email","providers":["email"]}', '{"name":"Seed"}', now(), now(),
             '', '', '', '')`,
    [USER_ID, hash],
  );
  await api.db.query(
    `insert into identities (id, user_id, provider_id, identity_data, provider, last_sign_in_at, created_at, updated_at)
     values (gen_random_uuid(), $1::uuid, $1::text, jsonb_build_object('sub', $1::text, 'email', 'seed@example.com'), 'email', now(), now(), now())`,
    [USER_ID],
  );

  const auth = authClient(api.url);
  const { data, error } = await auth.signInWithPassword({ email: 'seed@example.com', password: 'seeded-password-1' });
  t.error(error, 'the seeded user signs in (its bcrypt hash verifies)');
  t.equal(data.user?.id, USER_ID);
  const { data: read } = await auth.getUser();
  t.match(read.user, { id: USER_ID, email: 'seed@example.com', user_metadata: { name: 'Seed' }, identities: [{ provider: 'email' }] });
  t.notOk(read.user && 'new_email' in read.user, "email_change '' is no pending change");

  const listed = await api.request('GET', '/admin/users', { token: await adminToken() });
  t.equal(listed.status, 200);
  t.equal(listed.body.users.length, 1);
  t.notOk('confirmation_token' in listed.body.users[0], 'the token columns never reach the API');
  t.notOk('instance_id' in listed.body.users[0]);
});

t.test("the audit log's instance_id: the original's zero UUID on new entries, and seed inserts naming it are accepted", async (t) => {
  const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
  t.teardown(() => api.stop());
  t.equal((await api.request('POST', '/signup', { body: { email: 'audited@example.com', password: 'audited-password-1' } })).status, 200);
  const { rows } = await api.db.query(`select distinct instance_id from audit_log_entries`);
  t.same(rows, [{ instance_id: '00000000-0000-0000-0000-000000000000' }], 'every entry the sign-up wrote');
  await api.db.query(
    `insert into audit_log_entries (instance_id, id, payload, created_at)
     values ('00000000-0000-0000-0000-000000000000', gen_random_uuid(), '{"action":"login","actor_id":"seeded"}', now())`,
  );
  const listed = await api.request('GET', '/admin/audit', { token: await adminToken() });
  t.equal(listed.status, 200);
  t.ok(JSON.stringify(listed.body).includes('"actor_id":"seeded"'), 'the seeded entry is listed with the rest');
});

t.test("the original's columns are accepted, default as its rows hold them, and hold no token the service reads", async (t) => {
  const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'false' });
  t.teardown(() => api.stop());
  await api.request('POST', '/signup', { body: { email: 'fresh@example.com', password: 'fresh-password-1' } });
  const { rows } = await api.db.query(
    `select instance_id, is_super_admin, confirmation_token, recovery_token, email_change_token_new,
            email_change_token_current, phone_change_token, reauthentication_token
     from users where email = 'fresh@example.com'`,
  );
  t.same(rows[0], {
    instance_id: '00000000-0000-0000-0000-000000000000',
    is_super_admin: null,
    confirmation_token: '',
    recovery_token: '',
    email_change_token_new: '',
    email_change_token_current: '',
    phone_change_token: '',
    reauthentication_token: '',
  });
  const tokens = await api.db.query(`select token_type from one_time_tokens`);
  t.same(
    tokens.rows.map((r) => r.token_type),
    ['confirmation_token'],
    'the confirmation mailed at sign-up is in one_time_tokens, hashed, as before',
  );
});

t.test("statements read every users column but the original's, which nothing reads", async (t) => {
  const api = await startTestService();
  t.teardown(() => api.stop());
  const { rows } = await api.db.query(
    `select attname from pg_attribute where attrelid = 'users'::regclass and attnum > 0 and not attisdropped order by attnum`,
  );
  const original = [
    'instance_id',
    'is_super_admin',
    'confirmation_token',
    'recovery_token',
    'email_change_token_new',
    'email_change_token_current',
    'phone_change_token',
    'reauthentication_token',
  ];
  t.strictSame(
    USER_COLUMNS.split(', '),
    rows.map((r) => r.attname).filter((name) => !original.includes(name)),
    'a column a migration adds to users is named in USER_COLUMNS (and UserRow), or it is never read',
  );
});

// Lone UTF-16 surrogates in a JSON body (issue 18 item 2): every metadata field, as a value and as an
// object key, is stored with U+FFFD in their place (the original's decoder does the same) instead of
// failing the jsonb insert with a 500.
import t from 'tap';
import { startMailStack } from './helpers/passwordless.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';
import { confirmedUser } from './helpers/users.js';

const stack = await startMailStack({ AUTH_RATE_LIMIT_EMAIL_SENT: '1000', AUTH_SMTP_MAX_FREQUENCY: '1ms' });
const { api } = stack;
t.teardown(() => stack.stop());
const admin = await adminToken();

// JSON.stringify writes a lone surrogate as the escape "\ud800", exactly what a fuzzer sends.
const HOSTILE = { value: 'a\ud800b', '\udc00key': 'v', nested: { list: ['\udbff'] }, pair: '\ud83d\ude00' };
const CLEAN = { value: 'a\ufffdb', '\ufffdkey': 'v', nested: { list: ['\ufffd'] }, pair: '\ud83d\ude00' };

const metadata = async (email: string) =>
  (await api.db.query('select raw_user_meta_data as u, raw_app_meta_data as a from users where email = $1', [email])).rows[0];

t.test('the raw body really carries lone surrogate escapes', async (t) => {
  t.match(JSON.stringify(HOSTILE), /\\ud800.*\\udc00key.*\\udbff/);
});

t.test('POST /signup data', async (t) => {
  const email = uniqueEmail('s');
  const res = await api.request('POST', '/signup', { body: { email, password: 'Passw0rd-123', data: HOSTILE } });
  t.equal(res.status, 200, res.text);
  t.match((await metadata(email)).u, CLEAN);
  t.match(res.body.user_metadata, CLEAN);
});

t.test('POST /otp data (implicit sign-up)', async (t) => {
  const email = uniqueEmail('o');
  const res = await api.request('POST', '/otp', { body: { email, data: HOSTILE } });
  t.equal(res.status, 200, res.text);
  t.match((await metadata(email)).u, CLEAN);
});

t.test('POST /magiclink data (implicit sign-up)', async (t) => {
  const email = uniqueEmail('m');
  const res = await api.request('POST', '/magiclink', { body: { email, data: HOSTILE } });
  t.equal(res.status, 200, res.text);
  t.match((await metadata(email)).u, CLEAN);
});

t.test('PUT /user data', async (t) => {
  const session = await confirmedUser(api);
  const res = await api.request('PUT', '/user', { token: session.access_token, body: { data: HOSTILE } });
  t.equal(res.status, 200, res.text);
  t.match((await metadata(session.user.email)).u, CLEAN);
});

t.test('POST /invite data', async (t) => {
  const email = uniqueEmail('i');
  const res = await api.request('POST', '/invite', { token: admin, body: { email, data: HOSTILE } });
  t.equal(res.status, 200, res.text);
  t.match((await metadata(email)).u, CLEAN);
});

t.test('POST /admin/generate_link data', async (t) => {
  const email = uniqueEmail('g');
  const res = await api.request('POST', '/admin/generate_link', {
    token: admin,
    body: { type: 'signup', email, password: 'Passw0rd-123', data: HOSTILE },
  });
  t.equal(res.status, 200, res.text);
  t.match((await metadata(email)).u, CLEAN);
});

t.test('admin user_metadata and app_metadata, on create and on update', async (t) => {
  const email = uniqueEmail('a');
  const created = await api.request('POST', '/admin/users', {
    token: admin,
    body: { email, user_metadata: HOSTILE, app_metadata: HOSTILE },
  });
  t.equal(created.status, 200, created.text);
  let row = await metadata(email);
  t.match(row.u, CLEAN);
  t.match(row.a, CLEAN);
  const updated = await api.request('PUT', `/admin/users/${created.body.id}`, {
    token: admin,
    body: { user_metadata: { again: '\udfff' }, app_metadata: { '\ud800': 1 } },
  });
  t.equal(updated.status, 200, updated.text);
  row = await metadata(email);
  t.equal(row.u.again, '\ufffd');
  t.equal(row.a['\ufffd'], 1);
});

t.test('a surrogate in a plain string field is no 5xx either', async (t) => {
  const res = await api.request('POST', '/token?grant_type=password', { body: { email: 'x\ud800@example.com', password: '\udc00' } });
  t.equal(res.status, 400, res.text);
  t.equal(res.body.error_code, 'invalid_credentials');
});

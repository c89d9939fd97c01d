// The admin API driven as @supabase/auth-js's GoTrueAdminApi drives it (listUsers, createUser,
// updateUserById, deleteUser, generateLink, inviteUserByEmail), each answer held to the original's
// (internal/api/admin.go, mail.go, invite.go, pagination.go): statuses, error codes and messages, the
// fields present, and the X-Total-Count and Link headers the client reads its pages from.
import t from 'tap';
import { GoTrueAdminApi } from '@supabase/auth-js';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';

const api = await startTestService({
  AUTH_URI_ALLOW_LIST: 'https://app.example/**',
  AUTH_MAILER_SECURE_EMAIL_CHANGE_ENABLED: 'true',
});
t.teardown(() => api.stop());
const admin = await adminToken('service_role');
const adminApi = new GoTrueAdminApi({ url: api.url, headers: { Authorization: 'Bearer ' + admin } });
const listQuery = (query: string) => api.request('GET', '/admin/users' + query, { token: admin });
const generateLink = (body: unknown) => api.request('POST', '/admin/generate_link', { token: admin, body });

// Five users of the default audience, oldest first, and one of another audience the list never counts.
for (let i = 0; i < 5; i++) await adminApi.createUser({ email: `listed${i}@example.com`, user_metadata: { full_name: `Listed ${i}` } });
await api.request('POST', '/admin/users', { token: admin, body: { email: 'elsewhere@example.com', aud: 'elsewhere' } });

t.test('listUsers through the client: the pages it reads from Link and X-Total-Count', async (t) => {
  const second = await adminApi.listUsers({ page: 2, perPage: 2 });
  t.equal(second.error, null);
  t.match(second.data, { aud: 'authenticated', total: 5, nextPage: 3, lastPage: 3 });
  t.strictSame(
    second.data.users.map((u) => u.email),
    ['listed2@example.com', 'listed1@example.com'],
  );
  t.equal(second.data.users[0].identities, null, 'the list does not load identities, as the original');
  const all = await adminApi.listUsers();
  t.match(all.data, { total: 5, nextPage: null, lastPage: 1 });
  t.equal(all.data.users.length, 5);
});

t.test('a page far past the last one is an empty page, as the original serves it, not a 400', async (t) => {
  const deep = await listQuery('?page=1000000000000000&per_page=50');
  t.equal(deep.status, 200);
  t.strictSame(deep.body, { users: [], aud: 'authenticated' });
  t.equal(deep.headers.get('x-total-count'), '5');
  t.equal(deep.headers.get('link'), '</admin/users?page=1&per_page=50>; rel="last"');
  const deepest = await listQuery('?page=9007199254740991&per_page=9007199254740991');
  t.equal(deepest.status, 200);
  t.strictSame(deepest.body.users, []);
  const audit = await api.request('GET', '/admin/audit?page=1000000000000000', { token: admin });
  t.strictSame([audit.status, audit.body], [200, []], 'the audit log pages alike');
  const client = await adminApi.listUsers({ page: 1e15, perPage: 50 });
  t.equal(client.error, null);
  t.match(client.data, { users: [], total: 5, nextPage: null, lastPage: 1 });
});

t.test('page and per_page edges answer as Go parses them', async (t) => {
  const zero = await listQuery('?page=0&per_page=2');
  t.equal(zero.status, 200);
  t.equal(zero.body.users.length, 2, 'page 0 serves page 1');
  t.equal(zero.headers.get('link'), '</admin/users?page=1&per_page=2>; rel="next", </admin/users?page=3&per_page=2>; rel="last"');
  for (const [query, text, why] of [
    ['?page=-1', '-1', 'invalid syntax'],
    ['?per_page=abc', 'abc', 'invalid syntax'],
    ['?page=1.5', '1.5', 'invalid syntax'],
    ['?page=99999999999999999999', '99999999999999999999', 'value out of range'],
  ]) {
    const refused = await listQuery(query);
    t.strictSame(
      [refused.status, refused.body],
      [400, { code: 400, error_code: 'validation_failed', msg: `Bad Pagination Parameters: strconv.ParseUint: parsing "${text}": ${why}` }],
      query,
    );
  }
  const huge = await listQuery('?per_page=100000000000000');
  t.equal(huge.status, 200);
  t.equal(huge.body.users.length, 5);
  t.equal(huge.headers.get('link'), '</admin/users?page=1&per_page=100000000000000>; rel="last"');
});

t.test('filter and sort, kept in the Link targets with the keys sorted', async (t) => {
  const filtered = await listQuery('?filter=LISTED%203');
  t.strictSame(
    filtered.body.users.map((u: { email: string }) => u.email),
    ['listed3@example.com'],
    "full_name matches case-insensitively (the email's LIKE does not)",
  );
  const ascending = await listQuery('?sort=created_at%20ASC&per_page=1');
  t.equal(ascending.body.users[0].email, 'listed0@example.com');
  t.equal(
    ascending.headers.get('link'),
    '</admin/users?page=2&per_page=1&sort=created_at+ASC>; rel="next", </admin/users?page=5&per_page=1&sort=created_at+ASC>; rel="last"',
  );
  const badField = await listQuery('?sort=email');
  t.strictSame(badField.body, { code: 400, error_code: 'validation_failed', msg: "Bad Sort Parameters: bad field for sort 'email'" });
  const other = await api.request('GET', '/admin/users', { token: admin, headers: { 'x-jwt-aud': 'elsewhere' } });
  t.equal(other.body.aud, 'elsewhere');
  t.strictSame(
    other.body.users.map((u: { email: string }) => u.email),
    ['elsewhere@example.com'],
  );
});

t.test("generateLink email_change to the user's own address: 422 email_exists, nothing stamped", async (t) => {
  const { data } = await adminApi.createUser({ email: 'same@example.com', email_confirm: true });
  for (const type of ['email_change_current', 'email_change_new'] as const) {
    const own = await generateLink({ type, email: 'same@example.com', new_email: 'Same@Example.com' });
    t.strictSame(
      [own.status, own.body],
      [422, { code: 422, error_code: 'email_exists', msg: 'A user with this email address has already been registered' }],
      type,
    );
    const viaClient = await adminApi.generateLink({ type, email: 'same@example.com', newEmail: 'same@example.com' });
    t.match(viaClient, { data: { properties: null, user: null }, error: { status: 422, code: 'email_exists' } });
  }
  const after = await adminApi.getUserById(data.user!.id);
  t.notOk(after.data.user!.new_email, 'no pending change');
  t.notOk(after.data.user!.email_change_sent_at);
  const elsewhere = await generateLink({ type: 'email_change_new', email: 'same@example.com', new_email: 'moved@example.com' });
  t.equal(elsewhere.status, 200, 'another address is still fine');
  t.equal(elsewhere.body.new_email, 'moved@example.com');
});

// Edges of the admin users API held to the original (internal/api/admin.go, pagination.go and
// internal/models/user.go): a role of white space alone, page sizes past what its database layer takes,
// metadata keys set to null, and which columns a soft delete hashes.
import t from 'tap';
import { createHash } from 'node:crypto';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';
import { adminCreatedUser } from './helpers/users.js';
import { uniqueEmail } from './helpers/accounts.js';

const api = await startTestService();
t.teardown(() => api.stop());
const admin = await adminToken('service_role');

const create = (body: unknown) => api.request('POST', '/admin/users', { token: admin, body });
const update = (id: string, body: unknown) => api.request('PUT', `/admin/users/${id}`, { token: admin, body });
const roleOf = async (id: string) => (await api.db.query('select role from users where id = $1', [id])).rows[0].role;

t.test('a role of white space alone is stored trimmed, as the empty role, on create and on update', async (t) => {
  const made = await create({ email: uniqueEmail('blank-role'), role: '   ' });
  t.equal(made.status, 200);
  t.equal(made.body.role, '', 'not the default role');
  t.equal(await roleOf(made.body.id), '');

  const { id } = await adminCreatedUser(api);
  t.equal(await roleOf(id), 'authenticated');
  const blanked = await update(id, { role: ' \t ' });
  t.strictSame([blanked.status, blanked.body.role], [200, '']);
  t.equal(await roleOf(id), '');

  const padded = await update(id, { role: '  editor  ' });
  t.strictSame([padded.status, padded.body.role], [200, 'editor'], 'other roles are trimmed too');
  // Go's white space, not String#trim's: U+0085 is taken off, a byte order mark kept.
  const nextLine = await update(id, { role: ' \u0085 ' });
  t.strictSame([nextLine.status, nextLine.body.role], [200, '']);
  const marked = await update(id, { role: '\ufeffeditor' });
  t.strictSame([marked.status, marked.body.role], [200, '\ufeffeditor']);
  await update(id, { role: 'editor' });
  const empty = await update(id, { role: '' });
  t.strictSame([empty.status, empty.body.role], [200, 'editor'], 'an empty role leaves the role as it is');
  const defaulted = await create({ email: uniqueEmail('empty-role'), role: '' });
  t.equal(defaulted.body.role, 'authenticated', 'an empty role on create is the default one');
});

t.test('a page or per_page of 2^63 or more is paged as the original pages it: page 1, 20 rows', async (t) => {
  const aud = 'edge-pages';
  const headers = { 'X-JWT-AUD': aud };
  for (let i = 0; i < 22; i++) {
    const made = await create({ email: `paged${i}@edge-pages.test`, aud });
    t.equal(made.status, 200);
  }
  const list = (query: string) => api.request('GET', `/admin/users${query}`, { token: admin, headers });

  for (const perPage of ['9223372036854775808', '18446744073709551615']) {
    const first = await list(`?per_page=${perPage}`);
    t.equal(first.status, 200, perPage);
    t.equal(first.body.users.length, 20, `per_page=${perPage} serves 20 rows`);
    t.equal(first.headers.get('x-total-count'), '22');
    t.equal(
      first.headers.get('link'),
      `</admin/users?page=1&per_page=${perPage}>; rel="last"`,
      'the page count divides by the value asked',
    );
  }
  const second = await list('?page=2&per_page=9223372036854775808');
  t.equal(second.body.users.length, 2, 'page 2 of 20-row pages');
  t.equal(second.headers.get('link'), '</admin/users?page=1&per_page=9223372036854775808>; rel="last"');

  const largestInt = await list('?per_page=9223372036854775807');
  t.equal(largestInt.body.users.length, 22, 'the largest value the database layer takes serves every row');

  const wrappedPage = await list('?page=9223372036854775808&per_page=5');
  t.equal(wrappedPage.status, 200);
  t.strictSame(
    wrappedPage.body.users.map((u: { email: string }) => u.email),
    ['paged21@edge-pages.test', 'paged20@edge-pages.test', 'paged19@edge-pages.test', 'paged18@edge-pages.test', 'paged17@edge-pages.test'],
    'a page of 2^63 or more serves page 1',
  );
  t.equal(wrappedPage.headers.get('link'), '</admin/users?page=5&per_page=5>; rel="last"');

  const audit = await api.request('GET', '/admin/audit?per_page=9223372036854775808', { token: admin });
  t.equal(audit.status, 200);
  t.equal(audit.body.length, 20, 'the audit log pages alike');
});

t.test('user_metadata keys set to null are removed, also from metadata stored as JSON null', async (t) => {
  const made = await create({ email: uniqueEmail('meta'), user_metadata: { keep: 1, drop: 2, kept_null: null } });
  t.strictSame(made.body.user_metadata, { keep: 1, drop: 2, kept_null: null }, 'a new user stores its metadata as given');
  const id = made.body.id;
  const merged = await update(id, { user_metadata: { drop: null, never_there: null, added: { nested: null } } });
  t.strictSame(merged.body.user_metadata, { keep: 1, kept_null: null, added: { nested: null } }, 'null removes a key, one level deep');

  // The original writes JSON null there for a user made from a password hash without user_metadata; it
  // reads that back as an empty map and merges into it like any other.
  const { id: bare } = await adminCreatedUser(api);
  await api.db.query(`update users set raw_user_meta_data = 'null'::jsonb where id = $1`, [bare]);
  const read = await api.request('GET', `/admin/users/${bare}`, { token: admin });
  t.strictSame(read.body.user_metadata, {});
  const filled = await update(bare, { user_metadata: { a: null, b: 1 } });
  t.strictSame([filled.status, filled.body.user_metadata], [200, { b: 1 }]);
  const { rows } = await api.db.query('select raw_user_meta_data from users where id = $1', [bare]);
  t.strictSame(rows[0].raw_user_meta_data, { b: 1 });
});

t.test('soft delete hashes the email, phone and both pending addresses, and each identity subject', async (t) => {
  const email = uniqueEmail('soft-edge');
  const made = await create({ email, phone: '+14155550142', email_confirm: true, phone_confirm: true });
  const id = made.body.id;
  await api.db.query(`update users set email_change = 'pending-new@example.com', phone_change = '14155550143' where id = $1`, [id]);
  const hash = (value: string) =>
    createHash('sha256')
      .update(id + value)
      .digest('base64url');

  const res = await api.request('DELETE', `/admin/users/${id}`, { token: admin, body: { should_soft_delete: true } });
  t.strictSame([res.status, res.body], [200, {}]);
  const {
    rows: [u],
  } = await api.db.query('select email, phone, email_change, phone_change from users where id = $1', [id]);
  t.strictSame(u, {
    email: hash(email),
    phone: hash('14155550142').slice(0, 15),
    email_change: hash('pending-new@example.com'),
    phone_change: hash('14155550143').slice(0, 15),
  });
  const shown = await api.request('GET', `/admin/users/${id}`, { token: admin });
  t.equal(shown.body.new_email, hash('pending-new@example.com'), 'the pending address is not shown');
  t.equal(shown.body.new_phone, hash('14155550143').slice(0, 15));
  const { rows: identities } = await api.db.query(
    'select provider, provider_id, identity_data from identities where user_id = $1 order by provider',
    [id],
  );
  t.strictSame(identities, [
    { provider: 'email', provider_id: hash(`email:${id}`), identity_data: {} },
    { provider: 'phone', provider_id: hash(`phone:${id}`), identity_data: {} },
  ]);
});

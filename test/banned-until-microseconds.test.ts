// banned_until carries the microseconds PostgreSQL stores, as every other time in the user JSON does
// (docs/users-and-audit.md#user-json): the original writes its times with Go's RFC3339Nano, so a ban it
// sets from ban_duration (its clock's nanoseconds, kept to the microsecond by the column) or one a script
// writes shows its whole fraction, trailing zeros dropped, in UTC.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';

const api = await startTestService();
t.teardown(() => api.stop());
const admin = await adminToken();

async function newUser(email: string) {
  const res = await api.request('POST', '/admin/users', { token: admin, body: { email, password: 'micro-ban-pass', email_confirm: true } });
  if (res.status !== 200) throw new Error(res.text);
  return res.body as { id: string };
}

/** banned_until as the column holds it, in the original's JSON form (UTC, trailing zeros of the fraction dropped). */
async function stored(id: string): Promise<string> {
  const { rows } = await api.db.query(
    `select trim(trailing '.' from rtrim(to_char(banned_until at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '0')) || 'Z' as text
     from users where id = $1`,
    [id],
  );
  return rows[0].text;
}

t.test('a ban from ban_duration shows the microseconds it was stored with', async (t) => {
  const user = await newUser('micro-ban@example.com');
  // The clock's sub-millisecond digits are zero about one time in a thousand; a few bans make that case moot.
  const fractions: string[] = [];
  for (let i = 0; i < 3; i++) {
    const banned = await api.request('PUT', `/admin/users/${user.id}`, { token: admin, body: { ban_duration: '1h' } });
    t.equal(banned.status, 200, banned.text);
    const column = await stored(user.id);
    t.equal(banned.body.banned_until, column, 'the answer shows the stored time whole');
    const shown = await api.request('GET', `/admin/users/${user.id}`, { token: admin });
    t.equal(shown.body.banned_until, column, 'and so does GET /admin/users/{id}');
    fractions.push(column.replace(/^.*:\d\d(\.\d+)?Z$/, '$1'));
  }
  t.ok(
    fractions.some((f) => f.length > 4),
    `the stored times have digits below the millisecond (${fractions.join(', ')}), as the original's clock gives`,
  );

  const created = await api.request('POST', '/admin/users', {
    token: admin,
    body: { email: 'micro-ban-created@example.com', ban_duration: '24h' },
  });
  t.equal(created.status, 200, created.text);
  t.equal(created.body.banned_until, await stored(created.body.id), 'POST /admin/users shows the stored time whole too');
});

t.test('a ban a script wrote to the microsecond shows every digit, in GET /user and the admin endpoints', async (t) => {
  const user = await newUser('micro-ban-script@example.com');
  const session = await api.request('POST', '/token?grant_type=password', {
    body: { email: 'micro-ban-script@example.com', password: 'micro-ban-pass' },
  });
  t.equal(session.status, 200, session.text);
  // A ban already over, so GET /user still answers with the user.
  await api.db.query(`update users set banned_until = '2026-01-02 03:04:05.123456+00' where id = $1`, [user.id]);
  const me = await api.request('GET', '/user', { token: session.body.access_token });
  t.equal(me.status, 200, me.text);
  t.equal(me.body.banned_until, '2026-01-02T03:04:05.123456Z');
  const shown = await api.request('GET', `/admin/users/${user.id}`, { token: admin });
  t.equal(shown.body.banned_until, '2026-01-02T03:04:05.123456Z');
  const listed = await api.request('GET', '/admin/users?per_page=100', { token: admin });
  const row = (listed.body.users as { id: string; banned_until?: string }[]).find((u) => u.id === user.id);
  t.equal(row?.banned_until, '2026-01-02T03:04:05.123456Z', 'GET /admin/users lists it so');

  await api.db.query(`update users set banned_until = '2026-01-02 03:04:05.12+00' where id = $1`, [user.id]);
  t.equal((await api.request('GET', '/user', { token: session.body.access_token })).body.banned_until, '2026-01-02T03:04:05.12Z');
  await api.db.query(`update users set banned_until = '2026-01-02 05:04:05.000007+02' where id = $1`, [user.id]);
  t.equal(
    (await api.request('GET', '/user', { token: session.body.access_token })).body.banned_until,
    '2026-01-02T03:04:05.000007Z',
    'in UTC whatever offset it was written with',
  );
});

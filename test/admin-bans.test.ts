// Bans (REFERENCE §14.1, SPEC transitions table): ban_duration bans until now + duration, `none` unbans;
// a banned user is refused at the password grant, by GET /user and by /verify links, and the ban shows
// as banned_until. The refresh grant is not in this tree yet, so its refusal is not tested here.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { adminToken, fragmentOf } from './helpers/admin.js';

const api = await startTestService();
t.teardown(() => api.stop());
const admin = await adminToken();

const signIn = (email: string) => api.request('POST', '/token?grant_type=password', { body: { email, password: 'ban-test-pass' } });
const put = (id: string, body: unknown) => api.request('PUT', `/admin/users/${id}`, { token: admin, body });
async function newUser(email: string, extra: Record<string, unknown> = {}) {
  const res = await api.request('POST', '/admin/users', {
    token: admin,
    body: { email, password: 'ban-test-pass', email_confirm: true, ...extra },
  });
  if (res.status !== 200) throw new Error(res.text);
  return res.body;
}

t.test('ban → refused at sign-in, GET /user and /verify links → unban → everything works again', async (t) => {
  const user = await newUser('banned@example.com');
  const session = await signIn('banned@example.com');
  t.equal(session.status, 200);

  const before = Date.now();
  const banned = await put(user.id, { ban_duration: '1h30m' });
  const after = Date.now();
  t.equal(banned.status, 200);
  const until = Date.parse(banned.body.banned_until);
  t.ok(until >= before + 90 * 60_000 && until <= after + 90 * 60_000, 'banned_until = now + 1h30m');

  const login = await signIn('banned@example.com');
  t.strictSame([login.status, login.body], [400, { code: 400, error_code: 'user_banned', msg: 'User is banned' }]);
  const me = await api.request('GET', '/user', { token: session.body.access_token });
  t.strictSame([me.status, me.body], [403, { code: 403, error_code: 'user_banned', msg: 'User is banned' }]);
  const link = await api.request('POST', '/admin/generate_link', {
    token: admin,
    body: { type: 'magiclink', email: 'banned@example.com' },
  });
  t.equal(link.status, 200);
  t.equal(link.body.banned_until, banned.body.banned_until, 'generate_link shows the ban too');
  const followed = await api.request('GET', new URL(link.body.action_link).pathname + new URL(link.body.action_link).search);
  t.equal(followed.status, 303);
  t.strictSame(fragmentOf(followed.headers.get('location')), {
    error: 'access_denied',
    error_code: 'user_banned',
    error_description: 'User is banned',
    sb: '',
  });

  const shown = await api.request('GET', `/admin/users/${user.id}`, { token: admin });
  t.equal(shown.body.banned_until, banned.body.banned_until);

  const unbanned = await put(user.id, { ban_duration: 'none' });
  t.equal(unbanned.status, 200);
  t.notOk('banned_until' in unbanned.body, 'banned_until disappears from the user');
  t.equal((await signIn('banned@example.com')).status, 200);
  t.equal(
    (await api.request('GET', '/user', { token: session.body.access_token })).status,
    200,
    'the old session was kept, as in the original',
  );
});

t.test('durations in ns, us, ms, s, m, h and combinations', async (t) => {
  const user = await newUser('durations@example.com');
  const cases: Array<[string, number]> = [
    ['1000000000ns', 1000],
    ['2500000us', 2500],
    ['1500ms', 1500],
    ['90s', 90_000],
    ['45m', 45 * 60_000],
    ['24h', 86_400_000],
    ['1h30m', 90 * 60_000],
    ['2h45m30.5s', (2 * 3600 + 45 * 60 + 30.5) * 1000],
    ['1.5h', 90 * 60_000],
  ];
  for (const [text, ms] of cases) {
    const before = Date.now();
    const res = await put(user.id, { ban_duration: text });
    const after = Date.now();
    t.equal(res.status, 200, text);
    const until = Date.parse(res.body.banned_until);
    t.ok(until >= before + ms - 1 && until <= after + ms + 1, `${text} bans for ${ms} ms`);
  }
  const huge = await put(user.id, { ban_duration: '99999999h' });
  t.strictSame(
    [huge.status, huge.body.msg],
    [400, 'invalid format for ban duration: time: invalid duration "99999999h"'],
    "beyond Go's int64 nanoseconds",
  );
  const zero = await put(user.id, { ban_duration: '0' });
  t.notOk('banned_until' in zero.body, '0 unbans');
  const past = await put(user.id, { ban_duration: '-1h' });
  t.ok(Date.parse(past.body.banned_until) < Date.now(), 'a negative duration leaves the user unbanned');
  t.equal((await signIn('durations@example.com')).status, 200);
});

t.test('a ban given at creation holds, and ends by itself when its time has passed', async (t) => {
  const user = await newUser('bornbanned@example.com', { ban_duration: '24h' });
  t.ok(Date.parse(user.banned_until) > Date.now() + 23 * 3_600_000);
  t.equal((await signIn('bornbanned@example.com')).body.error_code, 'user_banned');
  await api.db.query(`update users set banned_until = now() - interval '1 second' where id = $1`, [user.id]);
  t.equal((await signIn('bornbanned@example.com')).status, 200, 'an expired ban no longer applies');
});

t.test("ban_duration edges read as Go's time.ParseDuration reads them: whole int64 nanoseconds", async (t) => {
  const user = await newUser('edges@example.com');
  const storedUntil = async () =>
    (await api.db.query('select banned_until from users where id = $1', [user.id])).rows[0].banned_until as Date | null;
  const longest = 9_223_372_036_854.775;
  const cases: Array<[string, number | null]> = [
    ['0.5ns', null],
    ['0s', null],
    ['-0', null],
    ['+1h', 3_600_000],
    ['.5h', 1_800_000],
    ['1h0.5ns', 3_600_000],
    ['-1h', -3_600_000],
    ['2562047h47m16.854775807s', longest],
    ['9223372036854775807ns', longest],
    ['-2562047h47m16.854775808s', -longest],
  ];
  for (const [text, ms] of cases) {
    await put(user.id, { ban_duration: '1h' });
    const before = Date.now();
    const res = await put(user.id, { ban_duration: text });
    const after = Date.now();
    t.equal(res.status, 200, text);
    const stored = await storedUntil();
    if (ms === null) {
      t.notOk('banned_until' in res.body, `${text} unbans`);
      t.equal(stored, null, `${text} clears banned_until`);
      continue;
    }
    const until = Date.parse(res.body.banned_until);
    t.ok(until >= before + ms - 1 && until <= after + ms + 1, `${text} bans for ${ms} ms`);
    t.equal(stored?.getTime(), until, `${text} is stored as answered`);
  }
  const refused: Array<[string, string]> = [
    ['2562047h47m16.854775808s', 'time: invalid duration "2562047h47m16.854775808s"'],
    ['9999999999h', 'time: invalid duration "9999999999h"'],
    ['1h5', 'time: missing unit in duration "1h5"'],
    ['5d', 'time: unknown unit "d" in duration "5d"'],
    ['.h', 'time: invalid duration ".h"'],
    ['5é', 'time: unknown unit "\\xc3\\xa9" in duration "5\\xc3\\xa9"'],
  ];
  for (const [text, error] of refused) {
    const res = await put(user.id, { ban_duration: text });
    t.strictSame([res.status, res.body.msg], [400, `invalid format for ban duration: ${error}`], text);
  }
  const created = await api.request('POST', '/admin/users', {
    token: admin,
    body: { email: 'edges-new@example.com', ban_duration: '2562047h47m16.854775807s' },
  });
  t.equal(created.status, 200, 'the longest duration is taken on create too');
  const tiny = await api.request('POST', '/admin/users', {
    token: admin,
    body: { email: 'edges-tiny@example.com', ban_duration: '0.9ns' },
  });
  t.notOk('banned_until' in tiny.body, 'under 1 ns is no ban on create');
});

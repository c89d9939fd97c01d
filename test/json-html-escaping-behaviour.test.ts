// The original writes every answer with Go's json.Marshal, which escapes `<`, `>`, `&`, U+2028 and U+2029
// inside strings (\u003c, \u003e, \u0026, \u2028, \u2029), so an answer sniffed as HTML or read as script
// opens no tag and ends no line. These check the answer's bytes on the two paths every answer takes: a
// handler's object (GET /user) and an error (its message quoting the input). The OAuth server's userinfo,
// written in Go's map order, is checked in oauth-server-encoding-behaviour.test.ts.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { signUp } from './helpers/accounts.js';
import { adminToken } from './helpers/admin.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true' });
t.teardown(() => api.stop());

const TRICKY = '<b>Tom & Jerry</b>\u2028next\u2029end';
const ESCAPED = '\\u003cb\\u003eTom \\u0026 Jerry\\u003c/b\\u003e\\u2028next\\u2029end';
const UNSAFE = /[<>&\u2028\u2029]/;

t.test("a handler's answer: metadata values and keys escaped as Go escapes them, read back unchanged", async (t) => {
  const session = await signUp(api);
  const put = await api.request('PUT', '/user', { token: session.access_token, body: { data: { bio: TRICKY, ['a<b']: 1 } } });
  t.equal(put.status, 200);
  const res = await api.request('GET', '/user', { token: session.access_token });
  t.equal(res.status, 200);
  t.ok(res.text.includes(`"bio":"${ESCAPED}"`), 'the value, escaped');
  t.ok(res.text.includes('"a\\u003cb":1'), 'the key, escaped');
  t.notOk(UNSAFE.test(res.text), 'no raw <, >, &, U+2028 or U+2029 anywhere');
  t.equal(res.body.user_metadata.bio, TRICKY, 'the same text once parsed');
});

t.test('an error that quotes its input', async (t) => {
  const res = await api.request('GET', '/admin/users?per_page=%3Cx%26y%3E', { token: await adminToken() });
  t.equal(res.status, 400);
  t.equal(res.body.msg, 'Bad Pagination Parameters: strconv.ParseUint: parsing "<x&y>": invalid syntax');
  t.ok(res.text.includes('parsing \\"\\u003cx\\u0026y\\u003e\\"'), res.text);
});

// Errors the operator's own database code raises on purpose (docs/errors.md#errors-raised-in-the-database):
// a trigger on users that refuses some sign-ups. The new user is not kept; the answer is the original's
// "Database error saving new user", and under the initial API
// version the database's own SQLSTATE, message and hint, with the status a PTxxx code names. A trigger
// with a bug in it is still only an unexpected failure there.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { adminToken } from './helpers/admin.js';

const api = await startTestService({ AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' });
t.teardown(() => api.stop());
await api.db.query(`
  create function refuse_some_users() returns trigger language plpgsql as $$
  begin
    if new.email like '%@blocked.test' then
      raise exception 'Sign-ups from blocked.test are closed' using hint = 'Use another address', detail = 'policy 7';
    elsif new.email like '%@teapot.test' then
      raise exception 'No coffee here' using errcode = 'PT418';
    elsif new.email like '%@busy.test' then
      raise exception 'Try later' using errcode = 'PT503';
    elsif new.email like '%@buggy.test' then
      insert into no_such_profiles (id) values (new.id);
    elsif new.is_anonymous then
      raise exception 'No anonymous users';
    end if;
    return new;
  end $$;
  create trigger refuse_some_users before insert on users for each row execute function refuse_some_users();
`);

const NEW_API = { 'x-supabase-api-version': '2024-01-01' };
const signUp = (email: string, headers: Record<string, string> = {}) =>
  api.request('POST', '/signup', { body: { email, password: 'Secret-password-1' }, headers });
const usersNamed = async (pattern: string) =>
  Number((await api.db.query('select count(*) from users where email like $1', [pattern])).rows[0].count);

t.test('a trigger that raises: the original message, and nothing kept', async (t) => {
  const res = await signUp('ann@blocked.test', NEW_API);
  t.equal(res.status, 500);
  t.same(res.body, { code: 'unexpected_failure', message: 'Database error saving new user' });
  t.equal(res.headers.get('x-sb-error-code'), 'unexpected_failure');
  t.equal(await usersNamed('%@blocked.test'), 0);
  t.equal((await signUp('ann@allowed.test', NEW_API)).status, 200, 'other sign-ups go through');
});

t.test('under the initial API version the database speaks for itself', async (t) => {
  const raised = await signUp('bob@blocked.test');
  t.equal(raised.status, 500);
  t.same(raised.body, { code: 'P0001', message: 'Sign-ups from blocked.test are closed', hint: 'Use another address', detail: 'policy 7' });
  t.equal(raised.headers.get('x-sb-error-code'), 'unexpected_failure');

  const teapot = await signUp('cy@teapot.test');
  t.equal(teapot.status, 418, 'PTxxx names the status');
  t.same(teapot.body, { code: 'PT418', message: 'No coffee here' });
  t.equal(teapot.headers.get('retry-after'), null);
  const busy = await signUp('ed@busy.test');
  t.same([busy.status, busy.body], [503, { code: 'PT503', message: 'Try later' }]);
  t.equal(busy.headers.get('retry-after'), '5', 'a 503 says when to come back, whoever named it');

  const buggy = await signUp('di@buggy.test');
  t.equal(buggy.status, 500);
  t.match(buggy.body, { code: 500, error_code: 'unexpected_failure', msg: 'Database error saving new user', error_id: String });
  t.notMatch(buggy.text, /no_such_profiles/, "a bug's details stay in the log");
  t.equal(await usersNamed('%@buggy.test'), 0);
});

t.test('anonymous sign-ins and admin-created users have their own messages', async (t) => {
  const anonymous = await api.request('POST', '/signup', { body: {}, headers: NEW_API });
  t.same([anonymous.status, anonymous.body], [500, { code: 'unexpected_failure', message: 'Database error creating anonymous user' }]);
  const admin = await api.request('POST', '/admin/users', {
    token: await adminToken(),
    body: { email: 'fay@blocked.test' },
    headers: NEW_API,
  });
  t.same([admin.status, admin.body], [500, { code: 'unexpected_failure', message: 'Database error creating new user' }]);
});

t.test("the request log keeps the database's message", async (t) => {
  await api.stop();
  const line = api.logs().find((l) => l.msg === 'request completed' && l.status === 500 && String(l.error).includes('no_such_profiles'));
  t.ok(line, 'the failed sign-up is logged with its cause');
});

// Every auth hook the service calls, as a real Postgres function created by the test
// (pg-functions://postgres/<schema>/<function>; docs/hooks.md#postgres-functions): payloads, answers, the
// function's {"error": …} passed to the client, its statement timeout, and a failure leaving no writes.
import t, { type Test } from 'tap';
import { decodeJwt } from 'jose';
import { startTestService } from './helpers/server.js';
import { startSmtpServer } from './helpers/smtp.js';
import { startSmsGatewayFake } from './helpers/sms.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';
import { PASSWORD, adminCreatedUser } from './helpers/users.js';
import { fragmentOf, insertUser, plantToken } from './helpers/passwordless.js';

const smtp = await startSmtpServer();
const sms = await startSmsGatewayFake();
const hook = (name: string, fn: string) => ({
  [`AUTH_HOOK_${name}_ENABLED`]: 'true',
  [`AUTH_HOOK_${name}_URI`]: `pg-functions://postgres/hooks_test/${fn}`,
});
const api = await startTestService({
  ...hook('CUSTOM_ACCESS_TOKEN', 'custom_access_token'),
  ...hook('BEFORE_USER_CREATED', 'before_user_created'),
  ...hook('SEND_EMAIL', 'send_email'),
  ...hook('SEND_SMS', 'send_sms'),
  ...hook('PASSWORD_VERIFICATION_ATTEMPT', 'password_verification_attempt'),
  ...hook('AFTER_USER_CREATED', 'after_user_created'),
  AUTH_SMTP_HOST: '127.0.0.1',
  AUTH_SMTP_PORT: String(smtp.port),
  AUTH_SMTP_ADMIN_EMAIL: 'noreply@example.com',
  AUTH_EXTERNAL_PHONE_ENABLED: 'true',
  AUTH_SMS_PROVIDER: 'twilio',
  AUTH_SMS_TWILIO_API_BASE_URL: sms.baseUrl,
  AUTH_SMS_TWILIO_ACCOUNT_SID: 'AC123',
  AUTH_SMS_TWILIO_AUTH_TOKEN: 'tok',
  AUTH_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG1',
});
t.teardown(async () => {
  await api.stop();
  await smtp.close();
  await sms.close();
});

// Each function records its event, so the test reads the payload the service sent.
await api.db.query(`
  create schema hooks_test;
  create table hooks_test.events (id bigserial primary key, hook text not null, event jsonb not null);
  create function hooks_test.record(hook text, event jsonb) returns void language sql as
    $$ insert into hooks_test.events (hook, event) values (hook, event) $$;

  create function hooks_test.custom_access_token(event jsonb) returns jsonb language plpgsql as $$
  declare claims jsonb := event->'claims';
  begin
    perform hooks_test.record('custom_access_token', event);
    if claims->>'email' like 'slow-%' then perform pg_sleep(3); end if;
    if claims->>'email' like 'drop-%' then return jsonb_build_object('claims', claims - 'role'); end if;
    if claims->>'email' like 'deny-%'
       or (claims->>'email' like 'refreshdeny-%' and event->>'authentication_method' = 'token_refresh') then
      return jsonb_build_object('error', jsonb_build_object('http_code', 403, 'message', 'No tokens for you'));
    end if;
    return jsonb_build_object('claims', claims || jsonb_build_object('tenant', 'pg'));
  end $$;

  create function hooks_test.before_user_created(event jsonb) returns jsonb language plpgsql as $$
  begin
    perform hooks_test.record('before_user_created', event);
    if event->'user'->>'email' like '%@blocked.example' then
      return jsonb_build_object('error', jsonb_build_object('http_code', 400, 'message', 'Blocked domain'));
    end if;
    return '{}'::jsonb;
  end $$;

  create function hooks_test.send_email(event jsonb) returns jsonb language plpgsql as $$
  begin perform hooks_test.record('send_email', event); return '{}'::jsonb; end $$;

  create function hooks_test.send_sms(event jsonb) returns jsonb language plpgsql as $$
  begin perform hooks_test.record('send_sms', event); return '{}'::jsonb; end $$;

  create function hooks_test.after_user_created(event jsonb) returns jsonb language sql as $$ select null::jsonb $$;

  create function hooks_test.password_verification_attempt(event jsonb) returns jsonb language plpgsql as $$
  begin
    perform hooks_test.record('password_verification_attempt', event);
    if (event->>'valid')::boolean then return jsonb_build_object('decision', 'continue'); end if;
    return jsonb_build_object('decision', 'reject', 'message', 'Locked by policy', 'should_logout_user', true);
  end $$;
`);

const confirmedUser = (email = uniqueEmail('pg')) => adminCreatedUser(api, email);
const signIn = (email: string, password = PASSWORD) => api.request('POST', '/token?grant_type=password', { body: { email, password } });
const lastEvent = async (hook: string): Promise<any> =>
  (await api.db.query('select event from hooks_test.events where hook = $1 order by id desc limit 1', [hook])).rows[0]?.event;
const sessionsOf = async (userId: string) =>
  Number((await api.db.query('select count(*) from sessions where user_id = $1', [userId])).rows[0].count);

t.test('custom access token: the function’s claims are signed, on sign-in and on refresh', async (t) => {
  const user = await confirmedUser();
  const res = await signIn(user.email);
  t.equal(res.status, 200);
  t.equal(decodeJwt(res.body.access_token).tenant, 'pg');
  const event = await lastEvent('custom_access_token');
  t.match(event, { user_id: user.id, authentication_method: 'password', metadata: { name: 'customize-access-token' } });
  t.match(event.claims, { sub: user.id, email: user.email, role: 'authenticated', aal: 'aal1' });
  const refreshed = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: res.body.refresh_token } });
  t.equal(refreshed.status, 200);
  t.equal(decodeJwt(refreshed.body.access_token).tenant, 'pg');
  t.equal((await lastEvent('custom_access_token')).authentication_method, 'token_refresh');
});

t.test('custom access token on refresh: the function runs in the refresh’s transaction; its refusal undoes both', async (t) => {
  const user = await confirmedUser(uniqueEmail('refreshdeny'));
  const { refresh_token } = (await signIn(user.email)).body;
  const refreshEvents = async () =>
    Number(
      (
        await api.db.query(
          `select count(*) from hooks_test.events where event->>'user_id' = $1 and event->>'authentication_method' = 'token_refresh'`,
          [user.id],
        )
      ).rows[0].count,
    );
  const refused = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token } });
  t.same([refused.status, refused.body.msg], [403, 'No tokens for you']);
  t.equal(await refreshEvents(), 0, 'the event the function wrote rolled back with the refresh');
  const { rows } = await api.db.query(
    'select rt.revoked, (select count(*)::int from refresh_tokens c where c.session_id = rt.session_id) as tokens from refresh_tokens rt where rt.user_id = $1',
    [user.id],
  );
  t.strictSame(rows, [{ revoked: false, tokens: 1 }], 'the presented token is still the active one, and it has no child');
});

t.test('custom access token: a removed required claim, the function’s error, its timeout: refused, no session left', async (t) => {
  const dropped = await confirmedUser(uniqueEmail('drop'));
  const res = await signIn(dropped.email);
  t.same([res.status, res.body.error_code], [500, 'unexpected_failure']);
  t.match(res.body.msg, /role/);
  t.equal(await sessionsOf(dropped.id), 0);

  const denied = await confirmedUser(uniqueEmail('deny'));
  const refused = await signIn(denied.email);
  t.same([refused.status, refused.body.error_code, refused.body.msg], [403, 'unknown', 'No tokens for you']);
  t.equal(await sessionsOf(denied.id), 0);

  const slow = await confirmedUser(uniqueEmail('slow'));
  const late = await signIn(slow.email);
  t.same(
    [late.status, late.body.error_code, late.body.msg],
    [500, 'unexpected_failure', 'Error running hook URI: pg-functions://postgres/hooks_test/custom_access_token'],
  );
  t.equal(await sessionsOf(slow.id), 0, 'the 2 s statement timeout ended the call and the sign-in rolled back');
});

t.test('custom access token failing at GET /verify: a 5xx goes back in the redirect, as the original sends any error there', async (t) => {
  const email = uniqueEmail('drop');
  const id = await insertUser(api.db, { email });
  const { linkToken } = await plantToken(api.db, id, 'confirmation_token', email);
  const res = await api.request('GET', `/verify?${new URLSearchParams({ type: 'signup', token: linkToken })}`);
  t.equal(res.status, 303, 'not a JSON page for the browser that followed the mail link');
  const location = res.headers.get('location')!;
  t.ok(location.startsWith('http://localhost:3000#'), location);
  t.match(fragmentOf(location), { error: 'server_error', error_code: 'unexpected_failure', error_description: /role/ });
  t.equal(await sessionsOf(id), 0);
  const user = await api.db.query('select email_confirmed_at from users where id = $1', [id]);
  t.equal(user.rows[0].email_confirmed_at, null, 'the verification rolled back');
});

t.test('before-user-created: the function sees the user; its refusal leaves no user row', async (t) => {
  const email = uniqueEmail('created');
  const ok = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
  t.equal(ok.status, 200);
  t.match(await lastEvent('before_user_created'), { user: { id: ok.body.id, email }, metadata: { name: 'before-user-created' } });

  const blocked = `someone-${process.pid}@blocked.example`;
  const res = await api.request('POST', '/signup', { body: { email: blocked, password: PASSWORD } });
  t.same([res.status, res.body.error_code, res.body.msg], [400, 'unknown', 'Blocked domain']);
  t.equal((await api.db.query('select 1 from users where email = $1', [blocked])).rowCount, 0);
  t.equal((await api.db.query('select 1 from identities where email = $1', [blocked])).rowCount, 0);
});

t.test('send email: the function gets the token instead of the SMTP server', async (t) => {
  const email = uniqueEmail('pgmail');
  t.equal((await api.request('POST', '/signup', { body: { email, password: PASSWORD } })).status, 200);
  const event = await lastEvent('send_email');
  t.match(event, { user: { email }, email_data: { email_action_type: 'signup', token: /^\d{6}$/ }, metadata: { name: 'send-email' } });
  const verified = await api.request('POST', '/verify', { body: { type: 'signup', email, token: event.email_data.token } });
  t.equal(verified.status, 200);
  t.equal(smtp.mails.length, 0);
});

t.test('send SMS: the function gets the code instead of the gateway', async (t) => {
  const phone = '15550002222';
  t.equal((await api.request('POST', '/otp', { body: { phone } })).status, 200);
  const event = await lastEvent('send_sms');
  t.match(event, { user: { phone }, sms: { otp: /^\d{6}$/, phone }, metadata: { name: 'send-sms' } });
  const verified = await api.request('POST', '/verify', { body: { type: 'sms', phone, token: event.sms.otp } });
  t.equal(verified.status, 200);
  t.equal(sms.messages.length, 0);
});

t.test('password verification attempt: the function rejects a wrong password and logs the user out', async (t) => {
  const user = await confirmedUser();
  t.equal((await signIn(user.email)).status, 200);
  t.match(await lastEvent('password_verification_attempt'), { user_id: user.id, valid: true });
  const res = await signIn(user.email, 'wrong-password');
  t.same([res.status, res.body.error_code, res.body.msg], [400, 'invalid_credentials', 'Locked by policy']);
  t.equal(await sessionsOf(user.id), 0);
});

/**
 * Makes hooks_test.<fn> answer `value`, a SQL expression of type `returns`, until the test ends (the
 * function the service was set up with is kept aside and put back).
 */
async function answering(t: Test, fn: string, returns: string, value: string): Promise<void> {
  const kept = `${fn}_kept`;
  const aside = (await api.db.query('select 1 from pg_proc where proname = $1', [kept])).rowCount;
  await api.db.query(aside ? `drop function hooks_test.${fn}(jsonb)` : `alter function hooks_test.${fn}(jsonb) rename to ${kept}`);
  await api.db.query(`create function hooks_test.${fn}(event jsonb) returns ${returns} language sql as $$ select ${value} $$`);
  if (!aside)
    t.teardown(() => api.db.query(`drop function hooks_test.${fn}(jsonb); alter function hooks_test.${kept}(jsonb) rename to ${fn}`));
}
const UNDECODABLE = [500, 'unexpected_failure', 'Error unmarshaling JSON output.'];
const userWith = async (column: 'email' | 'phone', value: string) =>
  (await api.db.query(`select 1 from users where ${column} = $1`, [value])).rowCount;

t.test('a result that is not an object stops the request with the original’s 500, whatever its SQL type', async (t) => {
  const results: Array<[string, string]> = [
    ['integer', '12345'],
    ['jsonb', `'12345'::jsonb`],
    ['jsonb', `'"deny"'::jsonb`],
    ['boolean', 'false'],
    ['jsonb', `'[]'::jsonb`],
    ['text', `'deny'`],
  ];
  for (const [returns, value] of results) {
    const what = `${value} as ${returns}`;
    const email = uniqueEmail('pg-undecodable');
    await answering(t, 'before_user_created', returns, value);
    const refused = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
    t.same([refused.status, refused.body.error_code, refused.body.msg], UNDECODABLE, `before_user_created ${what}`);
    t.equal(await userWith('email', email), 0, 'no user was created');
  }
  await answering(t, 'before_user_created', 'jsonb', `'{}'::jsonb`);
  const email = uniqueEmail('pg-undecodable');
  await answering(t, 'send_email', 'jsonb', `'[{}]'::jsonb`);
  const unsent = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
  t.same([unsent.status, unsent.body.error_code, unsent.body.msg], UNDECODABLE, 'send_email');
  t.equal(await userWith('email', email), 0, 'the sign-up and its token rolled back');

  await answering(t, 'send_sms', 'integer', '1');
  const texted = await api.request('POST', '/otp', { body: { phone: '15550007771' } });
  t.same([texted.status, texted.body.error_code, texted.body.msg], UNDECODABLE, 'send_sms');
  t.equal(await userWith('phone', '15550007771'), 0);

  await answering(t, 'send_email', 'jsonb', `'{}'::jsonb`);
  await answering(t, 'after_user_created', 'jsonb', `'"done"'::jsonb`);
  const told = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
  // POST /signup answers any failure of this hook in its own words, as the original's sign-up does.
  t.same([told.status, told.body.error_code, told.body.msg], [500, 'unexpected_failure', 'Error invoking hook'], 'after_user_created');
  t.equal(await userWith('email', email), 1, 'as the original: created, then told');
});

t.test('a function returning text is read as JSON: its error is honoured, its output decoded', async (t) => {
  await answering(t, 'before_user_created', 'text', `'{"error": {"http_code": 403, "message": "No sign-ups today"}}'`);
  const refused = await api.request('POST', '/signup', { body: { email: uniqueEmail('pg-text'), password: PASSWORD } });
  t.same([refused.status, refused.body.error_code, refused.body.msg], [403, 'unknown', 'No sign-ups today']);
  // An http_code the original cannot decode (a string) makes the error no error, and the sign-up goes ahead.
  await answering(t, 'before_user_created', 'jsonb', `'{"error": {"http_code": "403", "message": "No"}}'::jsonb`);
  t.equal((await api.request('POST', '/signup', { body: { email: uniqueEmail('pg-text'), password: PASSWORD } })).status, 200);

  const user = await confirmedUser();
  await answering(t, 'password_verification_attempt', 'text', `'{"decision": "reject", "message": "Text says no"}'`);
  const rejected = await signIn(user.email);
  t.same([rejected.status, rejected.body.error_code, rejected.body.msg], [400, 'invalid_credentials', 'Text says no']);
});

t.test('a jsonb null is an empty output, unlike SQL null for the custom access token', async (t) => {
  for (const fn of ['before_user_created', 'send_email', 'after_user_created']) await answering(t, fn, 'jsonb', `'null'::jsonb`);
  const email = uniqueEmail('pg-null');
  t.equal((await api.request('POST', '/signup', { body: { email, password: PASSWORD } })).status, 200);
  t.equal(await userWith('email', email), 1);
  await answering(t, 'send_sms', 'json', `'null'::json`);
  t.equal((await api.request('POST', '/otp', { body: { phone: '15550007772' } })).status, 200);

  const user = await confirmedUser();
  await answering(t, 'password_verification_attempt', 'jsonb', `'null'::jsonb`);
  t.equal((await signIn(user.email, 'wrong-password')).body.msg, 'Invalid login credentials', 'null continues');
  await answering(t, 'custom_access_token', 'jsonb', `'null'::jsonb`);
  const jsonNull = await signIn(user.email);
  t.same([jsonNull.status, jsonNull.body.error_code, jsonNull.body.msg], [500, 'unexpected_failure', 'output claims field is missing']);
  await answering(t, 'custom_access_token', 'jsonb', 'null::jsonb');
  const sqlNull = await signIn(user.email);
  t.equal(sqlNull.status, 500);
  t.match(sqlNull.body.msg, /^output claims do not conform to the expected schema/, 'SQL null: no claims');
  t.equal(await sessionsOf(user.id), 0);
});

t.test('password verification attempt: a member of the wrong type is the original’s 500, and no session ends', async (t) => {
  const user = await confirmedUser();
  t.equal((await signIn(user.email)).status, 200);
  await answering(
    t,
    'password_verification_attempt',
    'jsonb',
    `'{"decision": "reject", "message": 42, "should_logout_user": true}'::jsonb`,
  );
  const res = await signIn(user.email, 'wrong-password');
  t.same([res.status, res.body.error_code, res.body.msg], UNDECODABLE);
  t.equal(await sessionsOf(user.id), 1);
});

t.test('a function that raises for the client is answered in PostgREST’s shape, as the original keeps its error', async (t) => {
  await answering(t, 'password_verification_attempt', 'jsonb', '(select null::jsonb)');
  await api.db.query(`create or replace function hooks_test.password_verification_attempt(event jsonb) returns jsonb language plpgsql as $$
    begin raise exception 'Accounts are frozen' using errcode = 'PT403', hint = 'Try tomorrow'; end $$`);
  const user = await confirmedUser();
  const res = await signIn(user.email);
  t.same([res.status, res.body], [403, { code: 'PT403', message: 'Accounts are frozen', hint: 'Try tomorrow' }]);
  const versioned = await api.request('POST', '/token?grant_type=password', {
    body: { email: user.email, password: PASSWORD },
    headers: { 'X-Supabase-Api-Version': '2024-01-01' },
  });
  t.same(
    [versioned.status, versioned.body],
    [
      500,
      { code: 'unexpected_failure', message: 'Error running hook URI: pg-functions://postgres/hooks_test/password_verification_attempt' },
    ],
    'the 2024-01-01 shape keeps the hook error',
  );
});

t.test('a function that does not exist is the original’s 500, naming the URI', async (t) => {
  await api.db.query('alter function hooks_test.password_verification_attempt(jsonb) rename to gone');
  t.teardown(() => api.db.query('alter function hooks_test.gone(jsonb) rename to password_verification_attempt'));
  const user = await confirmedUser();
  const res = await signIn(user.email);
  t.same([res.status, res.body.msg], [500, 'Error running hook URI: pg-functions://postgres/hooks_test/password_verification_attempt']);
});

t.test('a function named in mixed case and declared (event json) is called as the original calls it', async (t) => {
  // The original quotes the URI's names and passes the payload untyped: both of these worked there.
  const other = await startTestService({
    AUTH_HOOK_CUSTOM_ACCESS_TOKEN_ENABLED: 'true',
    AUTH_HOOK_CUSTOM_ACCESS_TOKEN_URI: 'pg-functions://postgres/hooks_test/addTenantClaim',
  });
  t.teardown(() => other.stop());
  await other.db.query(`
    create schema hooks_test;
    create function hooks_test."addTenantClaim"(event json) returns json language sql as
      $$ select json_build_object('claims', (event->'claims')::jsonb || '{"tenant": "mixed"}'::jsonb) $$;
  `);
  const email = uniqueEmail('mixed');
  const made = await other.request('POST', '/admin/users', {
    token: await adminToken(),
    body: { email, password: PASSWORD, email_confirm: true },
  });
  t.equal(made.status, 200);
  const res = await other.request('POST', '/token?grant_type=password', { body: { email, password: PASSWORD } });
  t.equal(res.status, 200);
  t.equal(decodeJwt(res.body.access_token).tenant, 'mixed');
});

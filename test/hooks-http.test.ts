// Every auth hook the service calls, over HTTP to a real endpoint that verifies the Standard Webhooks
// signature with the standardwebhooks package (docs/hooks.md): payloads as the original's, answers
// acted on, the send hooks replacing SMTP and the SMS gateway, and the transport's limits and errors.
import t from 'tap';
import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { startTestService } from './helpers/server.js';
import { startSmtpServer } from './helpers/smtp.js';
import { startSmsGatewayFake } from './helpers/sms.js';
import { newHookSecret, startHookServer } from './helpers/hook-server.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';
import { PASSWORD, adminCreatedUser } from './helpers/users.js';

const hooks = await startHookServer();
const smtp = await startSmtpServer();
const sms = await startSmsGatewayFake();
const hook = (name: string, path: string) => ({
  [`AUTH_HOOK_${name}_ENABLED`]: 'true',
  // A key in the query, as some endpoints take one: it must not reach the log.
  [`AUTH_HOOK_${name}_URI`]: `${hooks.url}${path}?key=hook-query-key`,
  // Two secrets, as during a rotation: the endpoint knows only the second.
  [`AUTH_HOOK_${name}_SECRETS`]: `${newHookSecret()}|${hooks.secret}`,
});
const api = await startTestService({
  ...hook('CUSTOM_ACCESS_TOKEN', '/custom-access-token'),
  ...hook('BEFORE_USER_CREATED', '/before-user-created'),
  ...hook('SEND_EMAIL', '/send-email'),
  ...hook('SEND_SMS', '/send-sms'),
  ...hook('PASSWORD_VERIFICATION_ATTEMPT', '/password-verification-attempt'),
  // User info in the URI, as Go's client sends it: Basic credentials (fetch refuses such a URL as it is).
  AUTH_HOOK_PASSWORD_VERIFICATION_ATTEMPT_URI: `${hooks.url.replace('://', '://hook-user:p%40ss-word@')}/password-verification-attempt?key=hook-query-key`,
  ...hook('AFTER_USER_CREATED', '/after-user-created'),
  AUTH_SMTP_HOST: '127.0.0.1',
  AUTH_SMTP_PORT: String(smtp.port),
  AUTH_SMTP_ADMIN_EMAIL: 'noreply@example.com',
  AUTH_EXTERNAL_PHONE_ENABLED: 'true',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  AUTH_SMS_PROVIDER: 'twilio',
  AUTH_SMS_TWILIO_API_BASE_URL: sms.baseUrl,
  AUTH_SMS_TWILIO_ACCOUNT_SID: 'AC123',
  AUTH_SMS_TWILIO_AUTH_TOKEN: 'tok',
  AUTH_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG1',
});
t.teardown(async () => {
  await api.stop();
  await hooks.close();
  await smtp.close();
  await sms.close();
});

// What a well-behaved endpoint answers, unless a test scripts otherwise.
hooks.on('/custom-access-token', (p) => ({ body: { claims: { ...p.claims, tenant: 'acme' } } }));
hooks.on('/before-user-created', () => ({ body: {} }));
hooks.on('/send-email', () => ({ body: {} }));
hooks.on('/send-sms', () => ({ body: {} }));
hooks.on('/password-verification-attempt', () => ({ body: { decision: 'continue' } }));

const confirmedUser = (email = uniqueEmail('hooks')) => adminCreatedUser(api, email);
const signIn = (email: string, password = PASSWORD) => api.request('POST', '/token?grant_type=password', { body: { email, password } });
const lastCall = (path: string) => hooks.callsTo(path).at(-1)!;
const sessionsOf = async (userId: string) =>
  Number((await api.db.query('select count(*) from sessions where user_id = $1', [userId])).rows[0].count);

t.test('every call is signed once per secret, and the endpoint verifies it with the standardwebhooks package', async (t) => {
  const user = await confirmedUser();
  t.equal((await signIn(user.email)).status, 200);
  const calls = hooks.calls.slice(-2);
  t.same(
    calls.map((c) => c.verified),
    [true, true],
  );
  t.equal(String(calls[0].headers['webhook-signature']).split(', ').length, 2, 'one signature per configured secret');
  t.equal(calls[0].headers['content-type'], 'application/json');
  t.match(calls[0].headers['webhook-id'], /^[0-9a-f-]{36}$/);
});

t.test('custom access token: the claims the hook returns are signed; the payload is the original’s', async (t) => {
  const user = await confirmedUser();
  const res = await signIn(user.email);
  t.equal(res.status, 200);
  const claims = decodeJwt(res.body.access_token);
  t.equal(claims.tenant, 'acme');
  t.equal(res.body.expires_at, claims.exp);
  const { payload } = lastCall('/custom-access-token');
  t.same(Object.keys(payload).sort(), ['authentication_method', 'claims', 'metadata', 'user_id']);
  t.equal(payload.metadata.name, 'customize-access-token');
  t.equal(payload.metadata.ip_address, '127.0.0.1');
  t.match(payload.metadata.uuid, /^[0-9a-f-]{36}$/);
  t.equal(payload.user_id, user.id);
  t.equal(payload.authentication_method, 'password');
  t.match(payload.claims, {
    sub: user.id,
    email: user.email,
    role: 'authenticated',
    aal: 'aal1',
    is_anonymous: false,
    aud: 'authenticated',
  });

  const refreshed = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: res.body.refresh_token } });
  t.equal(refreshed.status, 200);
  t.equal(decodeJwt(refreshed.body.access_token).tenant, 'acme');
  t.equal(lastCall('/custom-access-token').payload.authentication_method, 'token_refresh');
});

t.test('custom access token: a refresh the hook fails changes nothing, so the same token refreshes later', async (t) => {
  const user = await confirmedUser();
  const { refresh_token } = (await signIn(user.email)).body;
  const refresh = () => api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token } });
  // What a rotation writes: the presented token revoked, a child, the session's refresh time, two audit rows.
  const written = async () =>
    (
      await api.db.query(
        `select rt.revoked, (select count(*)::int from refresh_tokens c where c.parent_id = rt.id) as children, s.refreshed_at,
                (select count(*)::int from audit_log_entries a where a.payload ->> 'actor_id' = $2
                   and a.payload ->> 'action' in ('token_refreshed', 'token_revoked')) as audited
           from refresh_tokens rt join sessions s on s.id = rt.session_id where rt.token_hash = $1`,
        [createHash('sha256').update(refresh_token).digest('hex'), user.id],
      )
    ).rows[0];
  const before = await written();
  t.match(before, { revoked: false, children: 0, audited: 0 });
  hooks.once('/custom-access-token', () => ({ body: { other: true } }));
  const failed = await refresh();
  t.same([failed.status, failed.body.msg], [500, 'output claims field is missing']);
  t.strictSame(await written(), before, 'nothing of the rotation is left: the token is still the active one');
  const retried = await refresh();
  t.equal(retried.status, 200, retried.text);
  t.not(retried.body.refresh_token, refresh_token, 'a new child, as for a first refresh');
  t.match(await written(), { revoked: true, children: 1, audited: 2 });
});

t.test('custom access token: a required claim removed or retyped is refused, and the sign-in leaves no session', async (t) => {
  const user = await confirmedUser();
  hooks.once('/custom-access-token', (p) => {
    const { session_id: _gone, ...claims } = p.claims;
    return { body: { claims } };
  });
  const removed = await signIn(user.email);
  t.equal(removed.status, 500);
  t.equal(removed.body.error_code, 'unexpected_failure');
  t.match(removed.body.msg, /^output claims do not conform to the expected schema: \n- .*session_id/);
  hooks.once('/custom-access-token', (p) => ({ body: { claims: { ...p.claims, exp: String(p.claims.exp) } } }));
  const retyped = await signIn(user.email);
  t.equal(retyped.status, 500);
  t.match(retyped.body.msg, /exp.*integer/);
  hooks.once('/custom-access-token', () => ({ body: { other: true } }));
  const missing = await signIn(user.email);
  t.same([missing.status, missing.body.msg], [500, 'output claims field is missing']);
  // As the original decodes the answer: no claims fail the schema, claims of another type the decoding.
  const SCHEMA = /^output claims do not conform to the expected schema: \n- \(root\): /;
  const UNDECODABLE = 'Error unmarshaling JSON output.';
  for (const [what, reply, msg] of [
    ['"claims": null', { body: { claims: null } }, SCHEMA],
    ['204 No Content', { status: 204 }, SCHEMA],
    ['an empty 200', { status: 200, headers: { 'content-type': 'application/json' }, body: '' }, UNDECODABLE],
    ['claims a string', { body: { claims: 'sub' } }, UNDECODABLE],
    ['claims a list', { body: { claims: [] } }, UNDECODABLE],
    ['a list', { body: [] }, UNDECODABLE],
  ] as const) {
    hooks.once('/custom-access-token', reply);
    const res = await signIn(user.email);
    t.same([res.status, res.body.error_code], [500, 'unexpected_failure'], what);
    if (typeof msg === 'string') t.equal(res.body.msg, msg, what);
    else t.match(res.body.msg, msg, what);
  }
  t.equal(await sessionsOf(user.id), 0, 'no session was left behind');
});

t.test('before-user-created: the payload is the user about to be created, whose id it then gets', async (t) => {
  const email = uniqueEmail('before');
  const res = await api.request('POST', '/signup', { body: { email, password: PASSWORD, data: { plan: 'pro' } } });
  t.equal(res.status, 200);
  const { payload } = lastCall('/before-user-created');
  t.equal(payload.metadata.name, 'before-user-created');
  t.match(payload.user, { id: res.body.id, email, aud: 'authenticated', role: 'authenticated', user_metadata: { plan: 'pro' } });
  t.match(payload.user.app_metadata, { provider: 'email', providers: ['email'] });
});

t.test('before-user-created is called once per sign-up that sends a code, by email or by phone, as the original calls it', async (t) => {
  // A sign-up's send needs a permit of RATE_LIMIT_*_SENT; taking it must not run the hook a second time.
  for (const body of [{ email: uniqueEmail('once') }, { phone: '+15550007777' }]) {
    const before = hooks.callsTo('/before-user-created').length;
    const res = await api.request('POST', '/signup', { body: { ...body, password: PASSWORD } });
    t.equal(res.status, 200, res.text);
    const calls = hooks.callsTo('/before-user-created').slice(before);
    t.equal(calls.length, 1, JSON.stringify(body));
    t.equal(calls[0]?.payload.user.id, res.body.id, 'with the id the user gets');
  }
});

t.test('PUT /user changing email and phone sends each code once', async (t) => {
  const email = uniqueEmail('both');
  const signedUp = await api.request('POST', '/admin/users', {
    token: await adminToken(),
    body: { email, password: PASSWORD, email_confirm: true },
  });
  t.equal(signedUp.status, 200, signedUp.text);
  const session = await api.request('POST', '/token?grant_type=password', { body: { email, password: PASSWORD } });
  const [mails, texts] = [hooks.callsTo('/send-email').length, hooks.callsTo('/send-sms').length];
  const res = await api.request('PUT', '/user', {
    token: session.body.access_token,
    body: { email: uniqueEmail('both-new'), phone: '+15550008888' },
  });
  t.equal(res.status, 200, res.text);
  t.equal(hooks.callsTo('/send-email').length - mails, 1, 'one email change hook call, not one per attempt');
  t.equal(hooks.callsTo('/send-sms').length - texts, 1);
});

t.test('before-user-created: a refusal is the client’s error, and no user row is written', async (t) => {
  const email = uniqueEmail('refused');
  hooks.once('/before-user-created', { body: { error: { http_code: 403, message: 'Sign-ups from this domain are closed' } } });
  const res = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
  t.same([res.status, res.body.error_code, res.body.msg], [403, 'unknown', 'Sign-ups from this domain are closed']);
  hooks.once('/before-user-created', { body: { error: { message: 'No code given' } } });
  const defaulted = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
  t.same([defaulted.status, defaulted.body.error_code, defaulted.body.msg], [500, 'unexpected_failure', 'No code given']);
  const rows = await api.db.query('select 1 from users where email = $1', [email]);
  t.equal(rows.rowCount, 0);
  t.equal(hooks.callsTo('/send-email').filter((c) => c.payload.user.email === email).length, 0, 'nothing was sent either');
});

t.test('before-user-created: anonymous sign-in, invites and generated sign-up links ask it too', async (t) => {
  const refuse = () => hooks.once('/before-user-created', { body: { error: { http_code: 422, message: 'Not now' } } });
  const anonymousBefore = Number((await api.db.query('select count(*) from users where is_anonymous')).rows[0].count);
  refuse();
  const anonymous = await api.request('POST', '/signup', { body: {} });
  t.same([anonymous.status, anonymous.body.msg], [422, 'Not now']);
  t.equal(Number((await api.db.query('select count(*) from users where is_anonymous')).rows[0].count), anonymousBefore);
  const admitted = await api.request('POST', '/signup', { body: {} });
  t.equal(admitted.status, 200);
  t.match(lastCall('/before-user-created').payload.user, { id: admitted.body.user.id, is_anonymous: true });

  const invited = uniqueEmail('invited');
  refuse();
  const invite = await api.request('POST', '/invite', { token: await adminToken(), body: { email: invited } });
  t.same([invite.status, invite.body.msg], [422, 'Not now']);
  const linked = uniqueEmail('linked');
  refuse();
  const link = await api.request('POST', '/admin/generate_link', {
    token: await adminToken(),
    body: { type: 'signup', email: linked, password: PASSWORD },
  });
  t.same([link.status, link.body.msg], [422, 'Not now']);
  t.equal((await api.db.query('select 1 from users where email = any($1)', [[invited, linked]])).rowCount, 0);

  const accepted = await api.request('POST', '/invite', { token: await adminToken(), body: { email: invited } });
  t.equal(accepted.status, 200);
  t.equal(lastCall('/send-email').payload.email_data.email_action_type, 'invite');
  t.equal(smtp.mails.length, 0);
});

t.test(
  'after-user-created: told of the committed user; a failure is a 500 at sign-up, its own error elsewhere; the user stays',
  async (t) => {
    const email = uniqueEmail('after');
    const res = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
    t.equal(res.status, 200);
    const calls = hooks.callsTo('/after-user-created').filter((c) => c.payload.user.email === email);
    t.equal(calls.length, 1);
    t.equal(calls[0].payload.metadata.name, 'after-user-created');
    t.match(calls[0].payload.user, { id: res.body.id, email, identities: [{ provider: 'email' }] });

    const refusedEmail = uniqueEmail('after-refused');
    hooks.once('/after-user-created', { body: { error: { http_code: 409, message: 'CRM unavailable' } } });
    const refused = await api.request('POST', '/signup', { body: { email: refusedEmail, password: PASSWORD } });
    t.same(
      [refused.status, refused.body.error_code, refused.body.msg],
      [500, 'unexpected_failure', 'Error invoking hook'],
      "POST /signup answers any failure in the original's own words",
    );
    t.equal(
      (await api.db.query('select 1 from users where email = $1', [refusedEmail])).rowCount,
      1,
      'as the original: created, then told',
    );
    const otpEmail = uniqueEmail('after-otp');
    hooks.once('/after-user-created', { body: { error: { http_code: 409, message: 'CRM unavailable' } } });
    const otp = await api.request('POST', '/otp', { body: { email: otpEmail } });
    t.same([otp.status, otp.body.msg], [500, 'Error invoking hook'], 'so do the sign-ups /otp makes through it');
    hooks.once('/after-user-created', { body: { error: { http_code: 409, message: 'CRM unavailable' } } });
    const anonymous = await api.request('POST', '/signup', { body: {} });
    t.same(
      [anonymous.status, anonymous.body.error_code, anonymous.body.msg],
      [409, 'unknown', 'CRM unavailable'],
      'elsewhere the hook speaks',
    );

    const before = hooks.callsTo('/after-user-created').length;
    hooks.once('/before-user-created', { body: { error: { http_code: 403, message: 'No' } } });
    t.equal((await api.request('POST', '/signup', { body: { email: uniqueEmail('never'), password: PASSWORD } })).status, 403);
    t.equal(hooks.callsTo('/after-user-created').length, before, 'a user never created is never announced');
  },
);

t.test("send email for reauthentication: redirect_to is the request's, else SITE_URL, as the original", async (t) => {
  const email = uniqueEmail('reauth');
  t.equal((await api.request('POST', '/signup', { body: { email, password: PASSWORD } })).status, 200);
  const confirmed = await api.request('POST', '/verify', {
    body: { type: 'signup', token_hash: lastCall('/send-email').payload.email_data.token_hash },
  });
  const token = confirmed.body.access_token;
  t.equal((await api.request('GET', '/reauthenticate?redirect_to=http://localhost:3000/after-reauth', { token })).status, 200);
  t.match(lastCall('/send-email').payload.email_data, {
    email_action_type: 'reauthentication',
    redirect_to: 'http://localhost:3000/after-reauth',
  });
});

t.test('send email replaces SMTP: the hook gets the token, the link works, no mail reaches the SMTP server', async (t) => {
  const email = uniqueEmail('mail');
  const signup = await api.request('POST', '/signup', { body: { email, password: PASSWORD }, headers: {} });
  t.equal(signup.status, 200);
  const { payload } = lastCall('/send-email');
  t.equal(payload.metadata.name, 'send-email');
  t.equal(payload.user.email, email);
  t.same(Object.keys(payload.email_data).sort(), [
    'email_action_type',
    'factor_type',
    'old_email',
    'old_phone',
    'provider',
    'redirect_to',
    'site_url',
    'token',
    'token_hash',
    'token_hash_new',
    'token_new',
  ]);
  t.match(payload.email_data, { email_action_type: 'signup', site_url: api.url, redirect_to: 'http://localhost:3000', token_new: '' });
  t.match(payload.email_data.token, /^\d{6}$/);
  const verified = await api.request('POST', '/verify', { body: { type: 'signup', token_hash: payload.email_data.token_hash } });
  t.equal(verified.status, 200);
  t.equal(verified.body.user.email, email);
  t.equal(smtp.mails.length, 0, 'the SMTP server received nothing');
});

t.test('send email: a secure email change is one hook call with both tokens, paired as the original pairs them', async (t) => {
  const user = await confirmedUser();
  const session = (await signIn(user.email)).body;
  const newEmail = uniqueEmail('changed');
  const res = await api.request('PUT', '/user', { token: session.access_token, body: { email: newEmail } });
  t.equal(res.status, 200);
  const calls = hooks.callsTo('/send-email').filter((c) => c.payload.user.id === user.id);
  t.equal(calls.length, 1);
  const data = calls[0].payload.email_data;
  t.equal(data.email_action_type, 'email_change');
  // token and token_hash_new confirm the current address; token_new and token_hash the new one.
  const current = await api.request('POST', '/verify', { body: { type: 'email_change', email: user.email, token: data.token } });
  t.equal(current.status, 200);
  t.match(current.body.msg ?? '', /Confirmation link accepted/);
  const fresh = await api.request('POST', '/verify', { body: { type: 'email_change', token_hash: data.token_hash } });
  t.equal(fresh.status, 200);
  t.equal(fresh.body.user.email, newEmail);
  t.equal(smtp.mails.length, 0);
});

t.test('send email: an email change with one mail (no current address) shows the new address as new_email', async (t) => {
  const anonymous = await api.request('POST', '/signup', { body: {} });
  t.equal(anonymous.status, 200);
  const newEmail = uniqueEmail('anon-change');
  const res = await api.request('PUT', '/user', { token: anonymous.body.access_token, body: { email: newEmail } });
  t.equal(res.status, 200);
  const { payload } = lastCall('/send-email');
  t.equal(payload.email_data.email_action_type, 'email_change');
  t.equal(payload.user.id, anonymous.body.user.id);
  t.equal(payload.user.new_email, newEmail, 'the pending address, as the original sets it before sending');
  t.same(payload.user.identities, [], 'identities are a list, empty for an anonymous user, as GET /user shows them');
  t.notOk('factors' in payload.user, 'no factors, none sent');
});

t.test('send email and SMS: the user is sent as GET /user shows it, identities and factors included', async (t) => {
  const user = await confirmedUser();
  const session = (await signIn(user.email)).body;
  const factor = await api.request('POST', '/factors', { token: session.access_token, body: { factor_type: 'totp', friendly_name: 'f' } });
  t.equal(factor.status, 200);
  const newEmail = uniqueEmail('with-factor');
  t.equal((await api.request('PUT', '/user', { token: session.access_token, body: { email: newEmail } })).status, 200);
  const shown = (await api.request('GET', '/user', { token: session.access_token })).body;
  const mailed = lastCall('/send-email').payload.user;
  t.equal(mailed.new_email, newEmail);
  t.same(mailed.identities, shown.identities);
  t.match(mailed.identities, [{ provider: 'email', user_id: user.id }]);
  t.same(mailed.factors, shown.factors);
  t.match(mailed.factors, [{ id: factor.body.id, factor_type: 'totp', status: 'unverified' }]);
});

t.test('send SMS for a phone change: the new number as new_phone, the client address in metadata, on resend too', async (t) => {
  const user = await confirmedUser();
  const session = (await signIn(user.email)).body;
  // POST /resend finds the user by the number it holds now, as the original does, so the user has one.
  const current = '15550003334';
  await api.db.query('update users set phone = $2, phone_confirmed_at = now() where id = $1', [user.id, current]);
  const phone = '15550003333';
  const res = await api.request('PUT', '/user', { token: session.access_token, body: { phone } });
  t.equal(res.status, 200);
  const sent = lastCall('/send-sms').payload;
  t.equal(sent.metadata.ip_address, '127.0.0.1');
  t.match(sent.user, { id: user.id, new_phone: phone, identities: [{ provider: 'email' }] });
  t.match(sent.sms, { otp: /^\d{6}$/, phone });

  await api.db.query(`update users set phone_change_sent_at = now() - interval '1 hour' where id = $1`, [user.id]);
  const resent = await api.request('POST', '/resend', { token: session.access_token, body: { type: 'phone_change', phone: current } });
  t.equal(resent.status, 200);
  const again = lastCall('/send-sms').payload;
  t.not(again.metadata.uuid, sent.metadata.uuid, 'a second call');
  t.equal(again.metadata.ip_address, '127.0.0.1');
  t.match(again.user, { id: user.id, new_phone: phone });
  const verified = await api.request('POST', '/verify', { body: { type: 'phone_change', phone, token: again.sms.otp } });
  t.equal(verified.status, 200);
  t.equal(verified.body.user.phone, phone);
});

t.test('send email: the hook’s error is the request’s, and the token it would have carried is rolled back', async (t) => {
  const email = uniqueEmail('mailfail');
  hooks.once('/send-email', { body: { error: { http_code: 429, message: 'Mail quota reached' } } });
  const res = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
  t.same([res.status, res.body.error_code, res.body.msg], [429, 'unknown', 'Mail quota reached']);
  t.equal((await api.db.query('select 1 from users where email = $1', [email])).rowCount, 0);
});

t.test('send SMS replaces the gateway: the hook gets the code, which verifies; the gateway gets nothing', async (t) => {
  const phone = '15550001111';
  const res = await api.request('POST', '/otp', { body: { phone } });
  t.equal(res.status, 200);
  const { payload } = lastCall('/send-sms');
  t.equal(payload.metadata.name, 'send-sms');
  t.equal(payload.user.phone, phone);
  t.match(payload.sms, { otp: /^\d{6}$/, phone });
  const verified = await api.request('POST', '/verify', { body: { type: 'sms', phone, token: payload.sms.otp } });
  t.equal(verified.status, 200);
  t.equal(verified.body.user.phone, phone);
  t.equal(sms.messages.length, 0, 'the gateway received nothing');
});

t.test("a hook URI's user info is sent as Basic credentials, as Go's HTTP client sends it, and never logged", async (t) => {
  const user = await confirmedUser();
  const before = hooks.calls.length;
  t.equal((await signIn(user.email)).status, 200);
  const call = hooks.calls.slice(before).find((c) => c.path === '/password-verification-attempt');
  t.ok(call, 'the hook was reached');
  t.equal(call?.headers.authorization, `Basic ${Buffer.from('hook-user:p@ss-word').toString('base64')}`);
  t.equal(call?.verified, true, 'still signed');
  t.notMatch(JSON.stringify(api.logs()), /p%40ss-word|p@ss-word/);
});

t.test('password verification attempt: told of right and wrong passwords; reject with logout ends every session', async (t) => {
  const user = await confirmedUser();
  const first = await signIn(user.email);
  t.equal(first.status, 200);
  t.match(lastCall('/password-verification-attempt').payload, {
    user_id: user.id,
    valid: true,
    metadata: { name: 'password-verification' },
  });

  hooks.once('/password-verification-attempt', { body: { decision: 'reject', message: 'Account locked', should_logout_user: true } });
  const refused = await signIn(user.email, 'wrong-password');
  t.same([refused.status, refused.body.error_code, refused.body.msg], [400, 'invalid_credentials', 'Account locked']);
  t.equal(lastCall('/password-verification-attempt').payload.valid, false);
  t.equal(await sessionsOf(user.id), 0, 'should_logout_user ended the existing session');
  const stale = await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: first.body.refresh_token } });
  t.equal(stale.status, 400);

  hooks.once('/password-verification-attempt', { body: { decision: 'reject' } });
  const defaulted = await signIn(user.email);
  t.same([defaulted.status, defaulted.body.msg], [400, 'Further password verification attempts will be rejected.']);
  const wrong = await signIn(user.email, 'wrong-password');
  t.same([wrong.status, wrong.body.msg], [400, 'Invalid login credentials'], 'continue leaves the usual answer');
});

t.test('password verification attempt: a user without a password is refused before the hook, which is not called', async (t) => {
  const email = uniqueEmail('hooks-nopw');
  const created = await api.request('POST', '/admin/users', { token: await adminToken(), body: { email, email_confirm: true } });
  t.equal(created.status, 200);
  hooks.once('/password-verification-attempt', { body: { decision: 'reject', message: 'Account locked' } });
  const before = hooks.callsTo('/password-verification-attempt').length;
  const res = await signIn(email, 'any-password-1');
  t.same([res.status, res.body.error_code, res.body.msg], [400, 'invalid_credentials', 'Invalid login credentials']);
  t.equal(hooks.callsTo('/password-verification-attempt').length, before, 'the original answers before its hook');
  // The scripted rejection is still pending: a user with a password meets it.
  const user = await confirmedUser();
  t.equal((await signIn(user.email)).body.msg, 'Account locked');
});

/** A 200 application/json answer of exactly `json`. */
const answer = (json: string) => ({ status: 200, headers: { 'content-type': 'application/json' }, body: json });
const UNDECODABLE = [500, 'unexpected_failure', 'Error unmarshaling JSON output.'];
const userWith = async (column: 'email' | 'phone', value: string) =>
  (await api.db.query(`select 1 from users where ${column} = $1`, [value])).rowCount;

t.test('an answer that is not an object stops the request with the original’s 500, for every hook that expects none', async (t) => {
  let phones = 0;
  for (const json of ['12345', 'false', '"deny"', '[]', '[{}]']) {
    const email = uniqueEmail('undecodable');
    hooks.once('/before-user-created', answer(json));
    const refused = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
    t.same([refused.status, refused.body.error_code, refused.body.msg], UNDECODABLE, `before-user-created ${json}`);
    t.equal(await userWith('email', email), 0, 'no user was created');

    hooks.once('/send-email', answer(json));
    const unsent = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
    t.same([unsent.status, unsent.body.error_code, unsent.body.msg], UNDECODABLE, `send-email ${json}`);
    t.equal(await userWith('email', email), 0, 'the sign-up and its token rolled back');

    const phone = `1555000610${phones++}`;
    hooks.once('/send-sms', answer(json));
    const texted = await api.request('POST', '/otp', { body: { phone } });
    t.same([texted.status, texted.body.error_code, texted.body.msg], UNDECODABLE, `send-sms ${json}`);
    t.equal(await userWith('phone', phone), 0);

    hooks.once('/after-user-created', answer(json));
    const told = await api.request('POST', '/signup', { body: {} });
    t.same([told.status, told.body.error_code, told.body.msg], UNDECODABLE, `after-user-created ${json} (an anonymous sign-in)`);
    hooks.once('/after-user-created', answer(json));
    const signedUp = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
    t.same([signedUp.status, signedUp.body.msg], [500, 'Error invoking hook'], `after-user-created ${json} at sign-up`);
    t.equal(await userWith('email', email), 1, 'as the original: created, then told');
  }
});

t.test('an answer of null is an empty output, as in the original; for the custom access token it has no claims', async (t) => {
  const email = uniqueEmail('null-answer');
  for (const path of ['/before-user-created', '/send-email', '/after-user-created']) hooks.once(path, answer('null'));
  t.equal((await api.request('POST', '/signup', { body: { email, password: PASSWORD } })).status, 200);
  t.equal(await userWith('email', email), 1);
  hooks.once('/send-sms', answer(' null '));
  t.equal((await api.request('POST', '/otp', { body: { phone: '15550004444' } })).status, 200);

  const user = await confirmedUser();
  hooks.once('/password-verification-attempt', answer('null'));
  t.equal((await signIn(user.email)).status, 200, 'a null password attempt answer continues');
  hooks.once('/custom-access-token', answer('null'));
  const unsigned = await signIn(user.email);
  t.same([unsigned.status, unsigned.body.error_code, unsigned.body.msg], [500, 'unexpected_failure', 'output claims field is missing']);
});

t.test('password verification attempt: a member of the wrong type is the original’s 500, and no session ends', async (t) => {
  const user = await confirmedUser();
  t.equal((await signIn(user.email)).status, 200);
  for (const json of [
    '{"decision":"reject","message":42}',
    '{"decision":"reject","should_logout_user":"yes"}',
    '{"decision":true}',
    '{"decision":"reject","message":["Locked"],"should_logout_user":true}',
  ]) {
    hooks.once('/password-verification-attempt', answer(json));
    const res = await signIn(user.email, 'wrong-password');
    t.same([res.status, res.body.error_code, res.body.msg], UNDECODABLE, json);
  }
  t.equal(await sessionsOf(user.id), 1, 'the existing session was kept');

  // Members are matched ignoring case, and null leaves a member unset, as the original decodes them.
  hooks.once('/password-verification-attempt', answer('{"Decision":"reject","MESSAGE":"Locked","message":null}'));
  const refused = await signIn(user.email);
  t.same([refused.status, refused.body.error_code, refused.body.msg], [400, 'invalid_credentials', 'Locked']);
  t.equal(await sessionsOf(user.id), 1, 'should_logout_user absent');
});

t.test('an error the original cannot decode is no error: the answer is read as the output', async (t) => {
  for (const json of [
    '{"error":{"message":"Closed","http_code":"403"}}',
    '{"error":{"message":"Closed","http_code":403.5}}',
    '{"error":{"message":42,"http_code":403}}',
    '{"error":"Closed"}',
    '{"error":null}',
  ]) {
    const email = uniqueEmail('error-undecodable');
    hooks.once('/before-user-created', answer(json));
    const res = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
    t.equal(res.status, 200, json);
    t.equal(await userWith('email', email), 1);
  }
  hooks.once('/before-user-created', answer('{"Error":{"Message":"Closed","HTTP_CODE":403}}'));
  const refused = await api.request('POST', '/signup', { body: { email: uniqueEmail('error-case'), password: PASSWORD } });
  t.same([refused.status, refused.body.error_code, refused.body.msg], [403, 'unknown', 'Closed'], 'member names in any case');
});

t.test('an endpoint that does not answer: 422 hook_timeout, nothing signed in', async (t) => {
  const user = await confirmedUser();
  hooks.once('/custom-access-token', { stall: true });
  const res = await signIn(user.email);
  t.same(
    [res.status, res.body.error_code, res.body.msg],
    [422, 'hook_timeout', 'Failed to reach hook within maximum time of 5.000000 seconds'],
  );
  t.equal(await sessionsOf(user.id), 0);
});

t.test('429 and 503 with Retry-After are tried again; without it the call fails', async (t) => {
  const user = await confirmedUser();
  const before = hooks.callsTo('/password-verification-attempt').length;
  hooks.once(
    '/password-verification-attempt',
    { status: 429, headers: { 'retry-after': '1' } },
    { status: 503, headers: { 'retry-after': '1' } },
  );
  const res = await signIn(user.email);
  t.equal(res.status, 200);
  t.equal(hooks.callsTo('/password-verification-attempt').length - before, 3, 'two refusals, then the answer');

  hooks.once('/password-verification-attempt', { status: 503 });
  const failed = await signIn(user.email);
  t.same(
    [failed.status, failed.body.error_code, failed.body.msg],
    [500, 'unexpected_failure', 'Service currently unavailable due to hook'],
  );
});

t.test('answers the original refuses: oversize, not JSON, an unexpected status', async (t) => {
  const user = await confirmedUser();
  hooks.once('/password-verification-attempt', { body: { decision: 'continue', padding: 'x'.repeat(200 * 1024) } });
  const big = await signIn(user.email);
  t.same(
    [big.status, big.body.error_code, big.body.msg],
    [422, 'hook_payload_over_size_limit', 'Payload size exceeded size limit of 204800 bytes'],
  );
  hooks.once('/password-verification-attempt', { status: 200, headers: { 'content-type': 'text/plain' }, body: 'continue' });
  const text = await signIn(user.email);
  t.same(
    [text.status, text.body.error_code, text.body.msg],
    [400, 'hook_payload_invalid_content_type', 'Invalid JSON response. Received content-type: text/plain'],
  );
  hooks.once('/password-verification-attempt', { status: 200, body: '{"decision":"continue"}' });
  const untyped = await signIn(user.email);
  t.same([untyped.status, untyped.body.error_code], [400, 'hook_payload_invalid_content_type']);
  // A Content-Type that does not parse is refused with the parser's reason; a well-formed other type is not JSON.
  for (const [contentType, msg] of [
    [';/', 'Invalid Content-Type header: invalid media type'],
    ['application json', 'Invalid Content-Type header: invalid media type'],
    ['application/', 'Invalid Content-Type header: invalid media type'],
    ['application/json/x', 'Invalid Content-Type header: invalid media type'],
    ['application/json; charset', 'Invalid Content-Type header: invalid parameter format'],
    ['application/json; charset="utf-8', 'Invalid Content-Type header: invalid parameter format'],
    ['app/js', 'Invalid JSON response. Received content-type: app/js'],
  ]) {
    hooks.once('/password-verification-attempt', {
      status: 200,
      headers: { 'content-type': contentType },
      body: '{"decision":"continue"}',
    });
    const res = await signIn(user.email);
    t.same([res.status, res.body.error_code, res.body.msg], [400, 'hook_payload_invalid_content_type', msg], contentType);
  }
  // Letter case, a quoted value, spaces around ';' and a repeated parameter are accepted.
  for (const contentType of ['Application/JSON; Charset="utf-8"', 'application/json ; charset=utf-8; charset=utf-8']) {
    hooks.once('/password-verification-attempt', {
      status: 200,
      headers: { 'content-type': contentType },
      body: '{"decision":"continue"}',
    });
    t.equal((await signIn(user.email)).status, 200, contentType);
  }
  // Content-Type sent twice (a proxy adding its own): the first field is the answer's, as the original reads it.
  for (const [fields, status] of [
    [['application/json', 'text/plain'], 200],
    [['application/json; note="a,b"', 'text/html'], 200],
    [['text/plain', 'application/json'], 400],
  ] as const) {
    hooks.once('/password-verification-attempt', {
      status: 200,
      headers: { 'content-type': [...fields] },
      body: '{"decision":"continue"}',
    });
    t.equal((await signIn(user.email)).status, status, fields.join(' + '));
  }
  hooks.once('/password-verification-attempt', { status: 418, body: {} });
  const teapot = await signIn(user.email);
  t.same([teapot.status, teapot.body.msg], [500, 'Unexpected status code returned from hook: 418']);
  hooks.once('/password-verification-attempt', { status: 200, headers: { 'content-type': 'application/json' }, body: '' });
  const empty = await signIn(user.email);
  t.same(
    [empty.status, empty.body.error_code, empty.body.msg],
    [500, 'unexpected_failure', 'Error unmarshaling JSON output.'],
    'an empty 200 is not "no output", as in the original',
  );
  hooks.once('/password-verification-attempt', { status: 204 });
  t.equal((await signIn(user.email)).status, 200, '204 No Content is a continue');
});

// Last: the log is complete once the service has stopped.
t.test('each call is logged with its endpoint, outcome and duration, never the URI’s query', async (t) => {
  await api.stop();
  const logged = api.logs().filter((l) => l.action === 'run_hook');
  t.ok(logged.some((l) => l.success === true && l.hook === `${hooks.url}/custom-access-token` && Number.isInteger(l.duration_ms)));
  t.ok(logged.some((l) => l.success === false && l.hook === `${hooks.url}/password-verification-attempt`));
  t.notMatch(JSON.stringify(api.logs()), /hook-query-key/);
});

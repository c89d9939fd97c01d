// PUT /user, GET /reauthenticate and POST /resend driven as auth-js drives them (updateUser, reauthenticate,
// resend), each answer held to the original's (REFERENCE §2.7–2.9, §5.3): the mails and SMS that go out,
// the answer's fields, and the refusals' status, error_code and msg.
import t from 'tap';
import { startMailStack } from './helpers/passwordless.js';
import { uniqueEmail } from './helpers/accounts.js';
import { confirmedUser, PASSWORD } from './helpers/users.js';

const stack = await startMailStack(
  { AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true', AUTH_RATE_LIMIT_EMAIL_SENT: '1000', AUTH_RATE_LIMIT_SMS_SENT: '1000' },
  { sms: true },
);
const insecure = await startMailStack({ AUTH_MAILER_SECURE_EMAIL_CHANGE_ENABLED: 'false', AUTH_RATE_LIMIT_EMAIL_SENT: '1000' });
const { api, smtp } = stack;
const sms = stack.sms!;
t.teardown(async () => {
  await stack.stop();
  await insecure.stop();
});

const put = (token: string, body: unknown, service = api) => service.request('PUT', '/user', { token, body });
const resend = (body: unknown) => api.request('POST', '/resend', { body });
const changeMailTo = (to: string, server = smtp) => server.waitForMail((m) => m.to === to && m.subject === 'Confirm Email Change');
const INTERVAL_MSG = /^For security purposes, you can only request this after \d+ seconds\.$/;

t.test('a user_metadata key named __proto__ is kept like any other, as the original keeps it', async (t) => {
  const s = await confirmedUser(api);
  const res = await api.request('PUT', '/user', {
    token: s.access_token,
    raw: '{"data":{"__proto__":{"admin":true},"plain":2}}',
    headers: { 'content-type': 'application/json' },
  });
  t.equal(res.status, 200);
  t.ok(Object.hasOwn(res.body.user_metadata, '__proto__'), 'in the answer');
  t.strictSame(res.body.user_metadata['__proto__'], { admin: true });
  t.equal(res.body.user_metadata.plain, 2);
  const stored = await api.db.query(`select raw_user_meta_data -> '__proto__' as proto from users where id = $1`, [s.user.id]);
  t.strictSame(stored.rows[0].proto, { admin: true }, 'stored');
  const removed = await api.request('PUT', '/user', {
    token: s.access_token,
    raw: '{"data":{"__proto__":null}}',
    headers: { 'content-type': 'application/json' },
  });
  t.notOk(Object.hasOwn(removed.body.user_metadata, '__proto__'), 'a null value deletes it, as any key');
  t.equal(removed.body.user_metadata.plain, 2);
});

t.test('data: a shallow merge; a nested object replaces the old one whole; null data and app_metadata change nothing', async (t) => {
  const s = await confirmedUser(api);
  await put(s.access_token, { data: { n: { x: 1 }, keep: true, gone: 'soon' } });
  const res = await put(s.access_token, { data: { n: { y: 2 }, gone: null } });
  t.strictSame(res.body.user_metadata.n, { y: 2 });
  t.equal(res.body.user_metadata.keep, true);
  t.notOk('gone' in res.body.user_metadata);
  const none = await put(s.access_token, { data: null, app_metadata: null });
  t.equal(none.status, 200);
  t.strictSame(none.body.user_metadata, res.body.user_metadata);
  const empty = await put(s.access_token, { app_metadata: {} });
  t.strictSame(empty.body, { code: 403, error_code: 'not_admin', msg: 'Updating app_metadata requires admin privileges' });
});

t.test('email change with secure change on: mails to both addresses, new_email and email_change_sent_at answered', async (t) => {
  const s = await confirmedUser(api);
  const to = uniqueEmail('new');
  const res = await put(s.access_token, { email: to });
  t.equal(res.status, 200);
  t.equal(res.body.email, s.user.email, 'the address itself waits for the links');
  t.equal(res.body.new_email, to);
  t.ok(Date.parse(res.body.email_change_sent_at));
  await changeMailTo(to);
  await changeMailTo(s.user.email);
  const again = await put(s.access_token, { email: to });
  t.match(again.body, { code: 429, error_code: 'over_email_send_rate_limit', msg: INTERVAL_MSG });
  const resent = await resend({ type: 'email_change', email: s.user.email });
  t.match(resent.body, { code: 429, error_code: 'over_email_send_rate_limit', msg: INTERVAL_MSG });
});

t.test('email change with secure change off: one mail, to the new address', async (t) => {
  const s = await confirmedUser(insecure.api);
  const to = uniqueEmail('new');
  const res = await put(s.access_token, { email: to }, insecure.api);
  t.equal(res.body.new_email, to);
  t.ok(Date.parse(res.body.email_change_sent_at));
  await changeMailTo(to, insecure.smtp);
  // A marker mail sent after the change: when it has arrived, any mail of the change has too.
  await put((await confirmedUser(insecure.api)).access_token, { email: uniqueEmail('marker') }, insecure.api);
  await insecure.smtp.waitForMail((m) => m.to.startsWith('marker-'));
  t.equal(insecure.smtp.mails.filter((m) => m.to === s.user.email && m.subject === 'Confirm Email Change').length, 0);
});

t.test("another user's address in another case is taken; the user's own in another case is no change", async (t) => {
  const a = await confirmedUser(api);
  const b = await confirmedUser(api);
  const res = await put(a.access_token, { email: b.user.email.toUpperCase() });
  t.strictSame(res.body, { code: 422, error_code: 'email_exists', msg: 'A user with this email address has already been registered' });
  const same = await put(a.access_token, { email: a.user.email.toUpperCase() });
  t.equal(same.status, 200);
  t.notOk('new_email' in same.body);
  t.notOk('email_change_sent_at' in same.body);
});

t.test('password: empty is weak; a user with no password sets any; a nonce not asked for is ignored', async (t) => {
  const s = await confirmedUser(api);
  const empty = await put(s.access_token, { password: '' });
  t.strictSame(empty.body, {
    code: 422,
    error_code: 'weak_password',
    msg: 'Password should be at least 6 characters.',
    weak_password: { reasons: ['length'] },
  });
  await api.db.query('update users set encrypted_password = null where id = $1', [s.user.id]);
  t.equal((await put(s.access_token, { password: PASSWORD })).status, 200, 'no same_password without a password');
  t.equal((await put(s.access_token, { password: 'Other-password-9', nonce: '123456' })).status, 200);
});

t.test('phone change and the resends: taken number, interval, nothing pending', async (t) => {
  const a = await confirmedUser(api);
  const b = await confirmedUser(api);
  await api.db.query("update users set phone = '14155550777', phone_confirmed_at = now() where id = $1", [b.user.id]);
  const taken = await put(a.access_token, { phone: '+1 415 555 0777' });
  t.strictSame(taken.body, { code: 422, error_code: 'phone_exists', msg: 'A user with this phone number has already been registered' });
  const ok = await put(a.access_token, { phone: '+14155550778' });
  t.equal(ok.body.new_phone, '14155550778');
  await sms.waitForMessage('14155550778');
  const again = await resend({ type: 'phone_change', email: a.user.email });
  t.match(again.body, { code: 429, error_code: 'over_sms_send_rate_limit', msg: INTERVAL_MSG });
  t.strictSame((await resend({ type: 'email_change', email: a.user.email })).body, {}, 'no email change pending');
  t.strictSame((await resend({ type: 'sms', phone: '+14155550777' })).body, {}, 'a confirmed phone');
  const signup = await api.request('POST', '/signup', { body: { email: uniqueEmail('unconfirmed'), password: PASSWORD } });
  const r2 = await resend({ type: 'signup', email: signup.body.email });
  t.match(r2.body, { code: 429, error_code: 'over_email_send_rate_limit', msg: INTERVAL_MSG });
  t.strictSame((await api.request('GET', '/reauthenticate', { token: a.access_token })).body, {});
  const second = await api.request('GET', '/reauthenticate', { token: a.access_token });
  t.match(second.body, { code: 429, error_code: 'over_email_send_rate_limit', msg: INTERVAL_MSG });
});

t.test('an anonymous user: a taken email is refused; phone with password sends the code', async (t) => {
  const b = await confirmedUser(api);
  const anon = (await api.request('POST', '/signup', { body: {} })).body;
  const taken = await put(anon.access_token, { email: b.user.email });
  t.strictSame(taken.body, { code: 422, error_code: 'email_exists', msg: 'A user with this email address has already been registered' });
  const ph = await put(anon.access_token, { phone: '+14155550991', password: 'Anon-pass-99' });
  t.match(ph.body, { new_phone: '14155550991', is_anonymous: true, phone: '' });
  await sms.waitForMessage('14155550991');
  const re = await api.request('GET', '/reauthenticate', { token: anon.access_token });
  t.strictSame(re.body, {
    code: 400,
    error_code: 'validation_failed',
    msg: 'Reauthentication requires the user to have an email or a phone number',
  });
});

// GET /reauthenticate and the nonce PUT /user requires with SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION
// (REFERENCE §2.9, §2.8): sent by email (preferred) or SMS, single use, expiring, frequency-limited.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { startSmtpServer } from './helpers/smtp.js';
import { startSmsGatewayFake, twilioVerifyEnv } from './helpers/sms.js';
import { signIn, uniqueEmail } from './helpers/accounts.js';
import { afterSessionEnded, behindDeletion, holdLock } from './helpers/row-lock.js';
import { codeIn, confirmedUser, PASSWORD } from './helpers/users.js';

const smtp = await startSmtpServer();
const sms = await startSmsGatewayFake();
const api = await startTestService({
  AUTH_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: 'true',
  AUTH_SMTP_HOST: '127.0.0.1',
  AUTH_SMTP_PORT: String(smtp.port),
  AUTH_SMTP_ADMIN_EMAIL: 'admin@example.com',
  AUTH_EXTERNAL_PHONE_ENABLED: 'true',
  AUTH_SMS_PROVIDER: 'twilio',
  AUTH_SMS_TWILIO_API_BASE_URL: sms.baseUrl,
  AUTH_SMS_TWILIO_ACCOUNT_SID: 'AC123',
  AUTH_SMS_TWILIO_AUTH_TOKEN: 'token',
  AUTH_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG123',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  AUTH_RATE_LIMIT_EMAIL_SENT: '1000',
  AUTH_RATE_LIMIT_SMS_SENT: '1000',
});
t.teardown(async () => {
  await api.stop();
  await smtp.close();
  await sms.close();
});

const reauth = (token?: string) => api.request('GET', '/reauthenticate', { token });
const setPassword = (token: string, password: string, nonce?: string) => api.request('PUT', '/user', { token, body: { password, nonce } });
const nonceMail = (to: string) => smtp.waitForMail((m) => m.to === to && m.html.includes('Confirm reauthentication'));
const NONCE_INVALID = { code: 422, error_code: 'reauthentication_not_valid', msg: 'Nonce has expired or is invalid' };

t.test('needs a bearer token', async (t) => {
  t.strictSame((await reauth()).body, { code: 401, error_code: 'no_authorization', msg: 'This endpoint requires a valid Bearer token' });
});

t.test('email nonce: required, checked, single use', async (t) => {
  const s = await confirmedUser(api);
  const missing = await setPassword(s.access_token, 'New-password-22');
  t.strictSame(missing.body, { code: 400, error_code: 'reauthentication_needed', msg: 'Password update requires reauthentication' });
  const weak = await setPassword(s.access_token, 'short');
  t.equal(weak.body.error_code, 'weak_password', "a weak password is told so first, nonce or not, as the original's order");
  const sent = await reauth(s.access_token);
  t.equal(sent.status, 200);
  t.strictSame(sent.body, {});
  const mail = await nonceMail(s.user.email);
  const nonce = codeIn(mail.text);
  const me = await api.request('GET', '/user', { token: s.access_token });
  t.ok(Date.parse(me.body.reauthentication_sent_at));
  t.strictSame((await setPassword(s.access_token, 'New-password-22', nonce === '000000' ? '111111' : '000000')).body, NONCE_INVALID);
  const ok = await setPassword(s.access_token, 'New-password-22', nonce);
  t.equal(ok.status, 200);
  t.equal((await signIn(api, s.user.email, 'New-password-22')).user.id, s.user.id);
  t.strictSame((await setPassword(s.access_token, 'Third-password-33', nonce)).body, NONCE_INVALID, 'spent');
});

t.test('the nonce is checked and spent before the current and same password checks, as the original', async (t) => {
  const s = await confirmedUser(api);
  await reauth(s.access_token);
  const nonce = codeIn((await nonceMail(s.user.email)).text);
  const wrong = nonce === '000000' ? '111111' : '000000';
  t.strictSame((await setPassword(s.access_token, PASSWORD, wrong)).body, NONCE_INVALID, 'a wrong nonce before the same password');
  const same = await setPassword(s.access_token, PASSWORD, nonce);
  t.equal(same.body.error_code, 'same_password');
  t.strictSame((await setPassword(s.access_token, 'New-password-22', nonce)).body, NONCE_INVALID, 'spent by the refused update');
});

t.test('a new password clears reauthentication_sent_at: another nonce may be asked for at once, as the original', async (t) => {
  const s = await confirmedUser(api);
  await reauth(s.access_token);
  const nonce = codeIn((await nonceMail(s.user.email)).text);
  t.equal((await setPassword(s.access_token, 'New-password-22', nonce)).status, 200);
  const row = await api.db.query('select reauthentication_sent_at, confirmation_sent_at from users where id = $1', [s.user.id]);
  t.strictSame(row.rows[0], { reauthentication_sent_at: null, confirmation_sent_at: null });
  t.equal((await reauth(s.access_token)).status, 200, 'not 429');
});

t.test('an expired nonce is refused', async (t) => {
  const s = await confirmedUser(api);
  await reauth(s.access_token);
  const nonce = codeIn((await nonceMail(s.user.email)).text);
  await api.db.query(`update one_time_tokens set created_at = now() - interval '2 days' where user_id = $1`, [s.user.id]);
  t.strictSame((await setPassword(s.access_token, 'New-password-22', nonce)).body, NONCE_INVALID);
});

t.test('a second request within SMTP_MAX_FREQUENCY is refused', async (t) => {
  const s = await confirmedUser(api);
  t.equal((await reauth(s.access_token)).status, 200);
  const again = await reauth(s.access_token);
  t.equal(again.status, 429);
  t.equal(again.body.error_code, 'over_email_send_rate_limit');
  t.match(again.body.msg, /^For security purposes, you can only request this after \d+ seconds\.$/);
});

t.test('concurrent requests: exactly one nonce is sent, the others are refused', async (t) => {
  const s = await confirmedUser(api);
  const replies = await Promise.all(Array.from({ length: 8 }, () => reauth(s.access_token)));
  t.strictSame(replies.map((r) => r.status).sort(), [200, 429, 429, 429, 429, 429, 429, 429]);
  t.equal(smtp.mails.filter((m) => m.to === s.user.email && m.html.includes('Confirm reauthentication')).length, 1);
});

t.test('a user deleted while the request waits for its row: 403 user_not_found and no nonce, not a 500', async (t) => {
  for (const soft of [false, true]) {
    const s = await confirmedUser(api);
    const mailed = smtp.mails.length;
    const res = await behindDeletion(api, s.user.id, soft, () => reauth(s.access_token));
    t.strictSame(
      [res.status, res.body],
      [403, { code: 403, error_code: 'user_not_found', msg: 'User from sub claim in JWT does not exist' }],
      soft ? 'soft-deleted' : 'deleted',
    );
    t.equal(smtp.mails.length, mailed, 'no mail');
  }
});

t.test('a session ended while the request waits for its row: 403 session_not_found, no nonce made or sent', async (t) => {
  const s = await confirmedUser(api);
  const mailed = smtp.mails.length;
  const res = await afterSessionEnded(api, s.user.id, s.access_token, () => reauth(s.access_token));
  t.strictSame(
    [res.status, res.body],
    [403, { code: 403, error_code: 'session_not_found', msg: 'Session from session_id claim in JWT does not exist' }],
  );
  t.equal(smtp.mails.length, mailed, 'no mail');
  const { rows } = await api.db.query(
    `select u.reauthentication_token, u.reauthentication_sent_at,
            (select count(*)::int from one_time_tokens where user_id = u.id and token_type = 'reauthentication_token') as tokens,
            (select count(*)::int from audit_log_entries
              where payload->>'actor_id' = u.id::text and payload->>'action' = 'user_reauthenticate_requested') as audited
       from users u where u.id = $1`,
    [s.user.id],
  );
  t.strictSame(rows[0], { reauthentication_token: '', reauthentication_sent_at: null, tokens: 0, audited: 0 }, 'nothing written');
});

t.test('an address changed while the request waits for the user: the nonce goes to the address the user has now', async (t) => {
  const s = await confirmedUser(api);
  const moved = uniqueEmail('moved');
  // The change commits once the request waits for the user's row, after its bearer check read the old address.
  const change = await holdLock(api.db, 'update users set email = $2 where id = $1', [s.user.id, moved]);
  const asked = reauth(s.access_token);
  await change.waiters(1);
  await change.release();
  t.equal((await asked).status, 200);
  const mail = await nonceMail(moved);
  t.equal(
    smtp.mails.filter((m) => m.to === s.user.email && m.html.includes('Confirm reauthentication')).length,
    0,
    'none to the old address',
  );
  t.equal((await setPassword(s.access_token, 'Changed-password-9', codeIn(mail.html))).status, 200, 'the nonce it got works');
});

t.test('an address that lost its confirmation while the request waited is refused as unconfirmed', async (t) => {
  const s = await confirmedUser(api);
  const change = await holdLock(api.db, 'update users set email_confirmed_at = null where id = $1', [s.user.id]);
  const asked = reauth(s.access_token);
  await change.waiters(1);
  await change.release();
  const res = await asked;
  t.strictSame([res.status, res.body.error_code], [422, 'email_not_confirmed']);
});

t.test('an unconfirmed email is refused', async (t) => {
  const s = await confirmedUser(api);
  await api.db.query('update users set email_confirmed_at = null where id = $1', [s.user.id]);
  t.strictSame((await reauth(s.access_token)).body, {
    code: 422,
    error_code: 'email_not_confirmed',
    msg: 'Please verify your email first.',
  });
});

t.test('a phone-only user gets the nonce by SMS, with the message id', async (t) => {
  const phone = '14155550177';
  const signup = await api.request('POST', '/signup', { body: { phone: `+${phone}`, password: PASSWORD } });
  t.equal(signup.status, 200);
  await sms.waitForMessage(phone);
  await api.db.query('update users set phone_confirmed_at = now() where id = $1', [signup.body.id]);
  const s = (await api.request('POST', '/token?grant_type=password', { body: { phone: `+${phone}`, password: PASSWORD } })).body;
  const sent = await reauth(s.access_token);
  t.equal(sent.status, 200);
  const message = await sms.waitForMessage(phone);
  t.strictSame(sent.body, { message_id: message.id });
  t.equal((await setPassword(s.access_token, 'New-password-22', codeIn(message.body))).status, 200);
});

t.test('a user with neither email nor phone cannot reauthenticate', async (t) => {
  const anon = (await api.request('POST', '/signup', { body: {} })).body;
  t.strictSame((await reauth(anon.access_token)).body, {
    code: 400,
    error_code: 'validation_failed',
    msg: 'Reauthentication requires the user to have an email or a phone number',
  });
});

t.test('with Twilio Verify the gateway makes and checks the nonce', async (t) => {
  const verifyApi = await startTestService({
    AUTH_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: 'true',
    AUTH_EXTERNAL_PHONE_ENABLED: 'true',
    ...twilioVerifyEnv(sms.baseUrl),
    AUTH_RATE_LIMIT_SMS_SENT: '1000',
  });
  t.teardown(() => verifyApi.stop());
  const phone = '14155550188';
  const signup = await verifyApi.request('POST', '/signup', { body: { phone: `+${phone}`, password: PASSWORD } });
  await sms.waitForMessage(phone);
  await verifyApi.db.query('update users set phone_confirmed_at = now() where id = $1', [signup.body.id]);
  const s = (await verifyApi.request('POST', '/token?grant_type=password', { body: { phone: `+${phone}`, password: PASSWORD } })).body;
  t.equal((await verifyApi.request('GET', '/reauthenticate', { token: s.access_token })).status, 200);
  const sent = await sms.waitForMessage(phone);
  t.equal(sent.gateway, 'twilio_verify');
  const put = (nonce: string) => verifyApi.request('PUT', '/user', { token: s.access_token, body: { password: 'New-password-22', nonce } });
  // Refused by Twilio: 403 otp_expired as at /verify, not the nonce refusal (docs/sms.md#twilio-verify).
  t.strictSame((await put(sent.code === '000000' ? '111111' : '000000')).body, {
    code: 403,
    error_code: 'otp_expired',
    msg: 'Token has expired or is invalid',
  });
  t.equal((await put(sent.code!)).status, 200);
});

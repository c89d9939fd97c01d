// Phone confirmation under its settings: SMS_TEMPLATE and SMS_OTP_LENGTH, SMS_OTP_EXP, SMS_MAX_FREQUENCY,
// RATE_LIMIT_SMS_SENT, a gateway that checks codes itself (Twilio Verify), SMS_TEST_OTP (and its codes at
// /verify), and the
// per-client limit keyed by RATE_LIMIT_HEADER.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { startSmsGatewayFake, twilioVerifyEnv } from './helpers/sms.js';
import { confirmedUser } from './helpers/users.js';
import { adminToken } from './helpers/admin.js';

const sms = await startSmsGatewayFake();
t.teardown(() => sms.close());
const phoneOn = { AUTH_EXTERNAL_PHONE_ENABLED: 'true' };

t.test('template, code length, expiry, resend interval and the global SMS limit', async (t) => {
  const api = await startTestService({
    ...phoneOn,
    AUTH_SMS_PROVIDER: 'vonage',
    AUTH_SMS_VONAGE_API_BASE_URL: sms.baseUrl,
    AUTH_SMS_VONAGE_API_KEY: 'key',
    AUTH_SMS_VONAGE_API_SECRET: 'secret',
    AUTH_SMS_VONAGE_FROM: 'Portcullis',
    AUTH_SMS_TEMPLATE: 'Code {{ .Code }} for Portcullis',
    AUTH_SMS_OTP_LENGTH: '8',
    AUTH_SMS_OTP_EXP: '120',
    AUTH_SMS_MAX_FREQUENCY: '45',
    AUTH_RATE_LIMIT_SMS_SENT: '3',
  });
  t.teardown(() => api.stop());
  const first = await api.request('POST', '/signup', { body: { phone: '+4915112345678', password: 'secret99' } });
  t.equal(first.status, 200);
  const message = await sms.waitForMessage('4915112345678');
  t.equal(message.gateway, 'vonage');
  const code = message.body.match(/^Code (\d{8}) for Portcullis$/)?.[1];
  t.ok(code, 'the template and an eight-digit code');

  const again = await api.request('POST', '/signup', { body: { phone: '+4915112345678', password: 'secret99' } });
  t.equal(again.status, 429);
  t.equal(again.body.error_code, 'over_sms_send_rate_limit');
  t.match(again.body.msg, /^For security purposes, you can only request this after (44|45) seconds\.$/);

  await api.db.query("update one_time_tokens set created_at = now() - interval '121 seconds'");
  const expired = await api.request('POST', '/verify', { body: { type: 'sms', phone: '4915112345678', token: code } });
  t.strictSame(expired.body, { code: 403, error_code: 'otp_expired', msg: 'Token has expired or is invalid' }, 'expired after SMS_OTP_EXP');

  const more = await Promise.all(
    ['+4915112345679', '+4915112345670', '+4915112345671'].map((phone) =>
      api.request('POST', '/signup', { body: { phone, password: 'secret99' } }),
    ),
  );
  t.same(more.map((r) => r.status).sort(), [200, 200, 429], 'the fourth SMS of the hour is refused');
  t.strictSame(more.find((r) => r.status === 429)!.body, {
    code: 429,
    error_code: 'over_sms_send_rate_limit',
    msg: 'SMS rate limit exceeded',
  });
});

t.test('Twilio Verify generates and checks the code; wrong codes are counted', async (t) => {
  const api = await startTestService({
    ...phoneOn,
    ...twilioVerifyEnv(sms.baseUrl),
  });
  t.teardown(() => api.stop());
  await api.request('POST', '/signup', { body: { phone: '+15550101010', password: 'secret99' } });
  const sent = await sms.waitForMessage('15550101010');
  t.equal(sent.gateway, 'twilio_verify');
  const wrong = await api.request('POST', '/verify', {
    body: { type: 'sms', phone: '15550101010', token: sent.code === '000000' ? '111111' : '000000' },
  });
  t.equal(wrong.status, 403);
  const { rows } = await api.db.query('select attempts from one_time_tokens');
  t.equal(rows[0].attempts, 1, 'the wrong code was counted');
  const ok = await api.request('POST', '/verify', { body: { type: 'sms', phone: '15550101010', token: sent.code } });
  t.equal(ok.status, 200);
  t.type(ok.body.user.phone_confirmed_at, 'string');
});

t.test('SMS_TEST_OTP numbers skip the gateway', async (t) => {
  const api = await startTestService({
    ...phoneOn,
    AUTH_SMS_PROVIDER: 'twilio',
    AUTH_SMS_TWILIO_API_BASE_URL: sms.baseUrl,
    AUTH_SMS_TWILIO_ACCOUNT_SID: 'AC1',
    AUTH_SMS_TWILIO_AUTH_TOKEN: 't',
    AUTH_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG1',
    AUTH_SMS_TEST_OTP: '15550199999:424242',
  });
  t.teardown(() => api.stop());
  const before = sms.messages.length;
  t.equal((await api.request('POST', '/signup', { body: { phone: '+15550199999', password: 'secret99' } })).status, 200);
  t.equal(sms.messages.length, before, 'nothing reached the gateway');
  const ok = await api.request('POST', '/verify', { body: { type: 'sms', phone: '15550199999', token: '424242' } });
  t.equal(ok.status, 200);
});

t.test("a test number's fixed code at /verify needs no send and has no lifetime, as the original's", async (t) => {
  const api = await startTestService({ ...phoneOn, AUTH_SMS_TEST_OTP: '15550199001:424242, 15550199002:434343' });
  t.teardown(() => api.stop());
  const verify = (type: string, phone: string, token: string) => api.request('POST', '/verify', { body: { type, phone, token } });
  const ageCodes = (id: string) =>
    api.db.query(`update one_time_tokens set created_at = now() - interval '1 day' where user_id = $1`, [id]);

  const signup = await api.request('POST', '/signup', { body: { phone: '+15550199001', password: 'secret99' } });
  await ageCodes(signup.body.id);
  const first = await verify('sms', '15550199001', '424242');
  t.equal(first.status, 200, 'a day past SMS_OTP_EXP');
  const again = await verify('sms', '15550199001', '424242');
  t.equal(again.status, 200, 'again, with no code sent since');
  t.equal(again.body.user.id, signup.body.id);
  t.strictSame((await verify('sms', '15550199001', '000000')).body, {
    code: 403,
    error_code: 'otp_expired',
    msg: 'Token has expired or is invalid',
  });

  const s = await confirmedUser(api);
  t.equal((await api.request('PUT', '/user', { token: s.access_token, body: { phone: '+15550199002' } })).status, 200);
  await ageCodes(s.user.id);
  const changed = await verify('phone_change', '15550199002', '434343');
  t.equal(changed.status, 200, 'phone_change, a day past SMS_OTP_EXP');
  t.equal(changed.body.user.phone, '15550199002');

  const until = await startTestService({
    ...phoneOn,
    AUTH_SMS_TEST_OTP: '15550199003:424242',
    AUTH_SMS_TEST_OTP_VALID_UNTIL: '2000-01-01T00:00:00Z',
  });
  t.teardown(() => until.stop());
  const made = await until.request('POST', '/admin/users', {
    token: await adminToken(),
    body: { phone: '+15550199003', phone_confirm: true },
  });
  t.equal(made.status, 200, made.text);
  const late = await until.request('POST', '/verify', { body: { type: 'sms', phone: '15550199003', token: '424242' } });
  t.equal(late.body.error_code, 'otp_expired', 'past SMS_TEST_OTP_VALID_UNTIL the fixed code is nothing');
});

t.test('per-client limits key on RATE_LIMIT_HEADER and hold across threads', async (t) => {
  const api = await startTestService({ AUTH_HTTP_WORKERS: '2', AUTH_RATE_LIMIT_HEADER: 'X-Real-IP', AUTH_RATE_LIMIT_TOKEN_REFRESH: '1' });
  t.teardown(() => api.stop());
  const attempt = (ip?: string) =>
    api.request('POST', '/token?grant_type=password', {
      body: { email: 'x@example.com', password: 'nope' },
      headers: ip ? { 'X-Real-IP': ip } : {},
    });
  const burst = await Promise.all(Array.from({ length: 32 }, () => attempt('203.0.113.7, 10.0.0.1')));
  const limited = burst.filter((r) => r.status === 429);
  t.equal(limited.length, 2, 'a burst of 30, then refused');
  t.strictSame(limited[0].body, { code: 429, error_code: 'over_request_rate_limit', msg: 'Request rate limit reached' });
  t.equal((await attempt('198.51.100.1')).status, 400, 'another client has its own bucket');
  t.equal((await attempt()).status, 400, 'no header, no limit');
});

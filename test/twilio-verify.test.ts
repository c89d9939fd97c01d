// Phone codes under Twilio Verify (docs/sms.md#twilio-verify): Twilio's approval is what counts, not
// SMS_OTP_EXP; a check Twilio cannot answer, or answers late, is 403 otp_expired, at /verify and for
// PUT /user's nonce alike; test numbers stay ours, their fixed codes with no lifetime.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { startSmsGatewayFake, twilioVerifyEnv } from './helpers/sms.js';

const sms = await startSmsGatewayFake();
const api = await startTestService({
  AUTH_EXTERNAL_PHONE_ENABLED: 'true',
  ...twilioVerifyEnv(sms.baseUrl),
  AUTH_SMS_OTP_EXP: '60',
  AUTH_SMS_MAX_FREQUENCY: '1ms',
  AUTH_SMS_TEST_OTP: '15550300001:424242',
  AUTH_SEND_TIMEOUT: '1',
  AUTH_SECURITY_OTP_MAX_ATTEMPTS: '3',
  AUTH_SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION: 'true',
  AUTH_RATE_LIMIT_SMS_SENT: '1000',
});
t.teardown(async () => {
  await api.stop();
  await sms.close();
});

const OTP_EXPIRED = { code: 403, error_code: 'otp_expired', msg: 'Token has expired or is invalid' };
const PASSWORD = 'Secret-password-1';
const wrong = (code: string | undefined) => (code === '000000' ? '111111' : '000000');
const verify = (phone: string, token: string) => api.request('POST', '/verify', { body: { type: 'sms', phone, token } });
/** Makes the user's pending codes look `seconds` old, past SMS_OTP_EXP (60 s) for 61 and more. */
const age = (userId: string, seconds: number) =>
  api.db.query(`update one_time_tokens set created_at = now() - make_interval(secs => $2) where user_id = $1`, [userId, seconds]);
const attempts = async (userId: string) =>
  (await api.db.query<{ attempts: number }>('select attempts from one_time_tokens where user_id = $1', [userId])).rows.map(
    (r) => r.attempts,
  );

let nextNumber = 15550300100;
async function signUp(): Promise<{ phone: string; id: string; code: string }> {
  const phone = String(nextNumber++);
  const res = await api.request('POST', '/signup', { body: { phone: `+${phone}`, password: PASSWORD } });
  t.equal(res.status, 200, 'signed up');
  const sent = await sms.waitForMessage(phone);
  return { phone, id: res.body.id, code: sent.code! };
}

t.test('a code Twilio approves after SMS_OTP_EXP is accepted: Twilio has applied its own lifetime', async (t) => {
  const { phone, id, code } = await signUp();
  await age(id, 120);
  const res = await verify(phone, code);
  t.equal(res.status, 200);
  t.equal(res.body.user.id, id);
  t.type(res.body.user.phone_confirmed_at, 'string');
});

t.test('a test number is checked locally, its fixed code held to no lifetime (as the original)', async (t) => {
  const res = await api.request('POST', '/signup', { body: { phone: '+15550300001', password: PASSWORD } });
  t.equal(res.status, 200);
  await age(res.body.id, 61);
  t.equal((await verify('15550300001', '424242')).status, 200, 'past SMS_OTP_EXP');
  t.strictSame((await verify('15550300001', '000000')).body, OTP_EXPIRED, 'another code is wrong');
});

t.test('Twilio failing to check (503): 403 otp_expired, logged, no attempt counted; the code works once Twilio is back', async (t) => {
  const { phone, id, code } = await signUp();
  sms.failNext('twilio_verify');
  t.strictSame((await verify(phone, code)).body, OTP_EXPIRED);
  t.same(await attempts(id), [0], 'not counted against the user');
  t.equal((await verify(phone, code)).status, 200);
  const logged = () =>
    api
      .logs()
      .some(
        (l) =>
          l.msg === 'checking a phone code with the gateway failed' &&
          /Service Unavailable More information: https:\/\/www\.twilio\.com\/docs\/errors\/20503$/.test(String(l.error)),
      );
  // A thread's log lines reach the file a moment after its answer.
  for (let i = 0; i < 40 && !logged(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  t.ok(logged(), 'the gateway error was logged');
});

t.test('a check Twilio answers after SEND_TIMEOUT: 403 otp_expired at SEND_TIMEOUT, not when Twilio answers', async (t) => {
  const { phone, code } = await signUp();
  sms.delayNext('twilio_verify', 4000);
  const started = performance.now();
  t.strictSame((await verify(phone, code)).body, OTP_EXPIRED);
  const took = performance.now() - started;
  t.ok(took < 3000, `answered after ${Math.round(took)} ms, within SEND_TIMEOUT (1 s) and well before Twilio`);
  const open = await api.db.query(
    "select 1 from pg_stat_activity where state like 'idle in transaction%' and datname = current_database()",
  );
  t.equal(open.rowCount, 0, 'no transaction left open waiting for Twilio');
});

t.test('wrong codes still count: after SECURITY_OTP_MAX_ATTEMPTS the right one is refused and Twilio is not asked', async (t) => {
  const { phone, id, code } = await signUp();
  for (let i = 0; i < 3; i++) t.strictSame((await verify(phone, wrong(code))).body, OTP_EXPIRED);
  t.same(await attempts(id), [], 'the token is void');
  t.strictSame((await verify(phone, code)).body, OTP_EXPIRED);
});

t.test('the reauthentication nonce: refused or unchecked by Twilio is 403 otp_expired; approved late is accepted', async (t) => {
  const { phone, id, code } = await signUp();
  const session = (await verify(phone, code)).body;
  t.type(session.access_token, 'string');
  const put = (nonce: string) => api.request('PUT', '/user', { token: session.access_token, body: { password: 'New-password-22', nonce } });

  t.strictSame(
    (await put('123456')).body,
    { code: 422, error_code: 'reauthentication_not_valid', msg: 'Nonce has expired or is invalid' },
    'no nonce pending: the nonce refusal, before Twilio is asked',
  );

  t.equal((await api.request('GET', '/reauthenticate', { token: session.access_token })).status, 200);
  const nonce = (await sms.waitForMessage(phone)).code!;
  t.strictSame((await put(wrong(nonce))).body, OTP_EXPIRED, 'a nonce Twilio refuses');
  t.same(await attempts(id), [1], 'counted');
  sms.failNext('twilio_verify');
  t.strictSame((await put(nonce)).body, OTP_EXPIRED, 'Twilio answering 503');
  t.same(await attempts(id), [1], 'not counted');
  await age(id, 120);
  const ok = await put(nonce);
  t.equal(ok.status, 200, 'approved by Twilio after SMS_OTP_EXP');
  const signIn = await api.request('POST', '/token?grant_type=password', { body: { phone: `+${phone}`, password: 'New-password-22' } });
  t.equal(signIn.status, 200, 'the new password is set');
});

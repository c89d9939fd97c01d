// The `channel` field (docs/sms.md#channels): read, and checked up front, only where a code may go to a
// phone (a phone sign-up, POST /otp and PUT /user with a phone), so it is refused even when no SMS goes
// out; any value with the send-SMS hook; ignored elsewhere. And MessageBird's "sent to nobody" answer.
import t, { type Test } from 'tap';
import { startTestService, type TestService } from './helpers/server.js';
import { startSmsGatewayFake } from './helpers/sms.js';
import { startHookServer } from './helpers/hook-server.js';
import { uniqueEmail } from './helpers/accounts.js';

const sms = await startSmsGatewayFake();
const hooks = await startHookServer();
hooks.on('/send-sms', () => ({ body: {} }));
t.teardown(async () => {
  await sms.close();
  await hooks.close();
});

const PASSWORD = 'Secret-password-1';
const INVALID_CHANNEL = {
  code: 400,
  error_code: 'validation_failed',
  msg: "Invalid channel, supported values are 'sms' or 'whatsapp'. 'whatsapp' is only supported if Twilio or Twilio Verify is used as the provider.",
};
const messagebird = (baseUrl: string, accessKey = 'bird-key') => ({
  AUTH_SMS_PROVIDER: 'messagebird',
  AUTH_SMS_MESSAGEBIRD_API_BASE_URL: baseUrl,
  AUTH_SMS_MESSAGEBIRD_ACCESS_KEY: accessKey,
  AUTH_SMS_MESSAGEBIRD_ORIGINATOR: 'Portcullis',
});
const common = {
  AUTH_EXTERNAL_PHONE_ENABLED: 'true',
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_SMS_MAX_FREQUENCY: '1ms',
  AUTH_RATE_LIMIT_SMS_SENT: '1000',
};
async function service(t: Test, env: Record<string, string>): Promise<TestService> {
  const api = await startTestService({ ...common, ...env });
  t.teardown(() => api.stop());
  return api;
}

let nextNumber = 15550400100;
const newPhone = () => String(nextNumber++);
const userCount = async (api: TestService, phone: string) => (await api.db.query('select 1 from users where phone = $1', [phone])).rowCount;

t.test('a gateway without WhatsApp (MessageBird)', async (t) => {
  const api = await service(t, { ...messagebird(sms.baseUrl), AUTH_SMS_TEST_OTP: '15550400001:424242' });

  t.test('an email sign-up ignores the channel', async (t) => {
    const res = await api.request('POST', '/signup', { body: { email: uniqueEmail('ch'), password: PASSWORD, channel: 'foo' } });
    t.equal(res.status, 200);
    t.type(res.body.access_token, 'string');
    const typed = await api.request('POST', '/signup', { body: { email: uniqueEmail('ch'), password: PASSWORD, channel: 5 } });
    t.strictSame(
      typed.body,
      {
        code: 400,
        error_code: 'bad_json',
        msg: 'Could not parse request body as JSON: json: cannot unmarshal number into Go struct field SignupParams.channel of type string',
      },
      'but it is still a string',
    );
  });

  t.test('PUT /user reads the channel only with a phone', async (t) => {
    const session = (await api.request('POST', '/signup', { body: { email: uniqueEmail('ch'), password: PASSWORD } })).body;
    const put = (body: Record<string, unknown>) => api.request('PUT', '/user', { token: session.access_token, body });
    const data = await put({ data: { colour: 'teal' }, channel: 'foo' });
    t.equal(data.status, 200);
    t.equal(data.body.user_metadata.colour, 'teal');
    const phone = newPhone();
    t.strictSame((await put({ phone, channel: 'foo' })).body, INVALID_CHANNEL);
    t.strictSame((await put({ phone, channel: 'whatsapp' })).body, INVALID_CHANNEL);
    t.equal(sms.messages.filter((m) => m.to === phone).length, 0, 'nothing sent');
    t.equal((await put({ phone, channel: 'sms' })).status, 200);
    t.equal((await sms.waitForMessage(phone)).gateway, 'messagebird');
  });

  t.test('WhatsApp to a test number is refused though no SMS would go out', async (t) => {
    t.strictSame((await api.request('POST', '/otp', { body: { phone: '+15550400001', channel: 'whatsapp' } })).body, INVALID_CHANNEL);
    t.equal(await userCount(api, '15550400001'), 0, 'nobody signed up');
    const signup = await api.request('POST', '/signup', { body: { phone: '+15550400001', password: PASSWORD, channel: 'whatsapp' } });
    t.strictSame(signup.body, INVALID_CHANNEL);
    t.equal((await api.request('POST', '/otp', { body: { phone: '+15550400001' } })).status, 200, 'sms is fine');
  });

  t.test('POST /resend takes no channel: the code goes by SMS whatever the body says', async (t) => {
    const phone = newPhone();
    t.equal((await api.request('POST', '/signup', { body: { phone: `+${phone}`, password: PASSWORD } })).status, 200);
    await sms.waitForMessage(phone);
    const res = await api.request('POST', '/resend', { body: { type: 'sms', phone: `+${phone}`, channel: 'pigeon' } });
    t.equal(res.status, 200);
    t.equal((await sms.waitForMessage(phone)).channel, 'sms');
  });

  t.test('MessageBird creating the message but sending it to nobody is a failed send', async (t) => {
    const phone = newPhone();
    sms.failNext('messagebird', 'status');
    const res = await api.request('POST', '/otp', { body: { phone: `+${phone}` } });
    t.strictSame(res.body, {
      code: 422,
      error_code: 'sms_send_failed',
      msg: 'Error sending confirmation OTP to provider: messagebird error: total sent count is 0',
    });
    t.equal(await userCount(api, phone), 0, 'the sign-up rolled back with it');
  });
});

t.test('INTERNAL_HTTP_TIMEOUT, not only SEND_TIMEOUT, bounds the gateway call, as the original', async (t) => {
  const api = await service(t, { ...messagebird(sms.baseUrl), AUTH_INTERNAL_HTTP_TIMEOUT: '1s', AUTH_SEND_TIMEOUT: '30s' });
  const phone = newPhone();
  sms.delayNext('messagebird', 60_000); // never answers within the test
  const res = await api.request('POST', '/otp', { body: { phone: `+${phone}` } });
  t.strictSame(res.body, {
    code: 422,
    error_code: 'sms_send_failed',
    msg: 'Error sending confirmation OTP to provider: messagebird request failed: no answer within 1 s',
  });
  t.equal(await userCount(api, phone), 0, 'the sign-up rolled back with it');
});

t.test('with SMS_AUTOCONFIRM a phone sign-up sends nothing, and WhatsApp is still refused', async (t) => {
  const api = await service(t, { ...messagebird(sms.baseUrl), AUTH_SMS_AUTOCONFIRM: 'true' });
  const phone = newPhone();
  t.strictSame(
    (await api.request('POST', '/signup', { body: { phone: `+${phone}`, password: PASSWORD, channel: 'whatsapp' } })).body,
    INVALID_CHANNEL,
  );
  t.equal(await userCount(api, phone), 0);
  const ok = await api.request('POST', '/signup', { body: { phone: `+${phone}`, password: PASSWORD } });
  t.type(ok.body.access_token, 'string');
  const session = ok.body;
  const other = newPhone();
  const put = await api.request('PUT', '/user', { token: session.access_token, body: { phone: other, channel: 'whatsapp' } });
  t.strictSame(put.body, INVALID_CHANNEL, 'a phone taken at once is checked alike');
});

t.test('a named gateway missing its credentials keeps its channels: WhatsApp is a channel error, not a send failure', async (t) => {
  const api = await service(t, messagebird(sms.baseUrl, ''));
  const phone = newPhone();
  t.strictSame((await api.request('POST', '/otp', { body: { phone: `+${phone}`, channel: 'whatsapp' } })).body, INVALID_CHANNEL);
  const sent = await api.request('POST', '/otp', { body: { phone: `+${phone}` } });
  t.equal(sent.body.error_code, 'sms_send_failed', 'sms is attempted, and fails as unconfigured');
});

t.test('with the send-SMS hook any channel is accepted: the hook is not told it', async (t) => {
  const api = await service(t, {
    ...messagebird(sms.baseUrl),
    AUTH_HOOK_SEND_SMS_ENABLED: 'true',
    AUTH_HOOK_SEND_SMS_URI: `${hooks.url}/send-sms`,
    AUTH_HOOK_SEND_SMS_SECRETS: hooks.secret,
  });
  const before = hooks.callsTo('/send-sms').length;
  const phone = newPhone();
  t.equal((await api.request('POST', '/signup', { body: { phone: `+${phone}`, password: PASSWORD, channel: 'pigeon' } })).status, 200);
  t.equal((await api.request('POST', '/otp', { body: { phone: `+${newPhone()}`, channel: 'whatsapp' } })).status, 200);
  const calls = hooks.callsTo('/send-sms').slice(before);
  t.equal(calls.length, 2, 'each code went to the hook');
  t.equal(calls[0].payload.sms.phone, phone);
  t.notOk('channel' in calls[0].payload.sms);
  t.equal(sms.messages.filter((m) => m.to === phone).length, 0, 'and none to the gateway');
});

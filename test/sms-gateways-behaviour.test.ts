// The five SMS gateways seen from outside: what each one receives when the service sends a phone code
// (SMS_TEMPLATE filled with an SMS_OTP_LENGTH-digit code), and what the client is answered when it refuses,
// compared with the original (internal/api/sms_provider/*.go, internal/api/phone.go). Also when SMS_TEST_OTP
// stops applying and how SMS_TEST_OTP_VALID_UNTIL is read (internal/conf/configuration.go).
import t from 'tap';
import { ConfigError, loadConfig } from '../dist/server/config/load.js';
import { testOtpFor } from '../dist/server/delivery/sms/test-otp.js';
import { startTestService } from './helpers/server.js';
import { signUp } from './helpers/accounts.js';
import { gatewayEnvs, startSmsGatewayFake, type FailureKind, type GatewayName } from './helpers/sms.js';

const sms = await startSmsGatewayFake();
t.teardown(() => sms.close());

const phoneOn = { AUTH_EXTERNAL_PHONE_ENABLED: 'true' };
// Non-ASCII, so Vonage must be told the text is unicode; an eight-digit code, to see SMS_OTP_LENGTH applied.
const template = { AUTH_SMS_TEMPLATE: 'Portcullis – {{ .Code }}', AUTH_SMS_OTP_LENGTH: '8' };
const textOf = (body: string) => /^Portcullis – (\d{8})$/.exec(body)?.[1];

const ENV = gatewayEnvs(sms.baseUrl);

/** What each gateway must receive for a code to `to` (digits), as the original builds the request. */
function expectedRequest(gateway: GatewayName, to: string, text: string): { path: string; auth: object; fields: object } {
  switch (gateway) {
    case 'twilio':
      return {
        path: '/2010-04-01/Accounts/AC123/Messages.json',
        auth: { username: 'AC123', password: 'secret' },
        fields: { To: `+${to}`, Channel: 'sms', From: 'MG123', Body: text },
      };
    case 'twilio_verify':
      return {
        path: '/v2/Services/VA1/Verifications',
        auth: { username: 'AC9', password: 'tok' },
        fields: { To: `+${to}`, Channel: 'sms' },
      };
    case 'messagebird':
      return {
        path: '/messages',
        auth: { accessKey: 'bird-key' },
        fields: { originator: 'Portcullis', body: text, recipients: to, type: 'sms', datacoding: 'unicode' },
      };
    case 'textlocal':
      return { path: '/send', auth: { apikey: 'tl-key' }, fields: { sender: 'PRTCLS', apikey: 'tl-key', message: text, numbers: to } };
    case 'vonage':
      return {
        path: '/sms/json',
        auth: { api_key: 'vn-key', api_secret: 'vn-secret' },
        fields: { from: 'Portcullis', to, text, api_key: 'vn-key', api_secret: 'vn-secret', type: 'unicode' },
      };
  }
}

/** Each gateway's usual refusal (the fake's real error shapes) and the original's words for it. */
const REFUSALS: Array<[GatewayName, FailureKind, RegExp]> = [
  [
    'twilio',
    'http',
    /^The 'To' number \+\d+ is not a valid phone number\. More information: https:\/\/www\.twilio\.com\/docs\/errors\/21211$/,
  ],
  ['twilio', 'status', /^twilio error: Unknown error 30008 for message SM[0-9a-f]{32}$/],
  ['twilio_verify', 'http', /^Max send attempts reached More information: https:\/\/www\.twilio\.com\/docs\/errors\/60203$/],
  ['messagebird', 'http', /^Not enough balance$/],
  ['messagebird', 'status', /^messagebird error: total sent count is 0$/],
  ['textlocal', 'status', /^textlocal error: Insufficient credits to send message \(code: 7\) message $/],
  [
    'textlocal',
    'template',
    /^textlocal error: Invalid template \(code: 80\) template message: \(the text sent, not repeated: it holds the one-time code\)$/,
  ],
  ['vonage', 'status', /^vonage error: Partner quota exceeded \(status: 9\) for message $/],
];

let nextNumber = 15550600000;
const phone = () => String(nextNumber++);

for (const gateway of Object.keys(ENV) as GatewayName[]) {
  t.test(`${gateway}: a phone sign-up's request, the code it carries, and the answers to its refusals`, async (t) => {
    const api = await startTestService({ ...phoneOn, ...template, ...ENV[gateway] });
    t.teardown(() => api.stop());
    const to = phone();
    const signup = await api.request('POST', '/signup', { body: { phone: `+${to}`, password: 'secret99' } });
    t.equal(signup.status, 200);
    const message = await sms.waitForMessage(to);
    t.match({ path: message.path, auth: message.auth, fields: message.fields }, expectedRequest(gateway, to, message.body));
    t.strictSame(message.fields, expectedRequest(gateway, to, message.body).fields, 'no other field');
    // Twilio Verify sends its own code, which only Twilio checks; the others carry ours, in the template.
    const code = gateway === 'twilio_verify' ? message.code : textOf(message.body);
    t.ok(code, `the code is in the text: ${message.body}`);
    const verified = await api.request('POST', '/verify', { body: { type: 'sms', phone: to, token: code } });
    t.equal(verified.status, 200, 'the code it carried confirms the number');

    for (const [name, kind, reason] of REFUSALS.filter(([g]) => g === gateway)) {
      const other = phone();
      sms.failNext(name, kind);
      const refused = await api.request('POST', '/signup', { body: { phone: `+${other}`, password: 'secret99' } });
      t.equal(refused.status, 422, `${kind}: 422`);
      t.equal(refused.body.error_code, 'sms_send_failed');
      t.match(
        refused.body.msg,
        new RegExp(`^Error sending confirmation OTP to provider: ${reason.source.slice(1)}`),
        `${kind}: ${refused.body.msg}`,
      );
      const none = await api.db.query('select 1 from users where phone = $1', [other]);
      t.equal(none.rowCount, 0, `${kind}: the refused send rolled the sign-up back`);
    }
  });
}

t.test('twilio: WhatsApp with a content template sends ContentVariables as the original writes them', async (t) => {
  const api = await startTestService({ ...phoneOn, ...ENV.twilio, AUTH_SMS_TWILIO_CONTENT_SID: 'HXtemplate' });
  t.teardown(() => api.stop());
  const to = phone();
  const otp = await api.request('POST', '/otp', { body: { phone: `+${to}`, channel: 'whatsapp' } });
  t.equal(otp.status, 200);
  const message = await sms.waitForMessage(to);
  const code = /^\{"1": "(\d{6})"\}$/.exec(message.fields.ContentVariables ?? '')?.[1];
  t.ok(code, `{"1": "<code>"}, a space after the colon, as the original's: ${message.fields.ContentVariables}`);
  t.strictSame(message.fields, {
    To: `whatsapp:+${to}`,
    Channel: 'whatsapp',
    From: 'MG123',
    ContentSid: 'HXtemplate',
    ContentVariables: `{"1": "${code}"}`,
  });
  const verified = await api.request('POST', '/verify', { body: { type: 'sms', phone: to, token: code } });
  t.equal(verified.status, 200);
});

t.test("SMS_PROVIDER naming no gateway: the original's 500s when a code is sent; WhatsApp refused up front", async (t) => {
  const api = await startTestService({
    ...phoneOn,
    AUTH_SMS_PROVIDER: 'Twilio', // not twilio: no gateway has that name
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_MFA_PHONE_ENROLL_ENABLED: 'true',
    AUTH_MFA_PHONE_VERIFY_ENABLED: 'true',
  });
  t.teardown(() => api.stop());
  const errorOf = (res: { status: number; body: any }) => ({ status: res.status, error_code: res.body?.error_code, msg: res.body?.msg });
  const before = sms.messages.length;

  const otp = await api.request('POST', '/otp', { body: { phone: `+${phone()}` } });
  t.same(errorOf(otp), { status: 500, error_code: 'unexpected_failure', msg: 'Unable to get SMS provider' }, 'internal/api/phone.go');
  t.type(otp.body.error_id, 'string', 'a 500 names the request');
  const signup = await api.request('POST', '/signup', { body: { phone: `+${phone()}`, password: 'secret99' } });
  t.same(errorOf(signup), { status: 500, error_code: 'unexpected_failure', msg: 'Unable to get SMS provider' });

  // The original allows whatsapp only for the names twilio and twilio_verify, before anything else.
  const invalidChannel = {
    status: 400,
    error_code: 'validation_failed',
    msg: "Invalid channel, supported values are 'sms' or 'whatsapp'. 'whatsapp' is only supported if Twilio or Twilio Verify is used as the provider.",
  };
  const whatsapp = await api.request('POST', '/otp', { body: { phone: `+${phone()}`, channel: 'whatsapp' } });
  t.same(errorOf(whatsapp), invalidChannel, 'POST /otp');

  const s = await signUp(api);
  const factor = await api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'phone', phone: `+${phone()}` } });
  t.equal(factor.status, 200);
  const challenge = await api.request('POST', `/factors/${factor.body.id}/challenge`, { token: s.access_token, body: {} });
  t.same(errorOf(challenge), { status: 500, error_code: 'unexpected_failure', msg: 'Failed to get SMS provider' }, 'internal/api/mfa.go');
  const overWhatsapp = await api.request('POST', `/factors/${factor.body.id}/challenge`, {
    token: s.access_token,
    body: { channel: 'whatsapp' },
  });
  t.same(errorOf(overWhatsapp), invalidChannel, 'an MFA challenge');
  t.equal(sms.messages.length, before, 'no gateway was called');
});

t.test("SMS_TEST_OTP_VALID_UNTIL: a test number's fixed code ends at that instant, as the original's now.Before(until)", async (t) => {
  const until = '2030-01-01T00:00:00Z';
  const at = Date.parse(until);
  const settings = { testOtp: { '15550600999': '424242' }, testOtpValidUntil: until };
  t.equal(testOtpFor(settings, '15550600999', at - 1), '424242', 'a millisecond before');
  t.equal(testOtpFor(settings, '15550600999', at), undefined, 'at the instant itself it no longer applies');
  t.equal(
    testOtpFor({ ...settings, testOtpValidUntil: '2030-01-01T02:00:00+02:00' }, '15550600999', at),
    undefined,
    'an offset names the same instant',
  );
  t.equal(testOtpFor({ ...settings, testOtpValidUntil: '' }, '15550600999', at), '424242', 'unset: for ever');
});

t.test(
  'SMS_TEST_OTP_VALID_UNTIL is read as RFC 3339, as the original reads it: a date alone or a time without zone stops start-up',
  async (t) => {
    const problems = (value: string) => {
      try {
        loadConfig({ env: { AUTH_SMS_TEST_OTP_VALID_UNTIL: value }, envFile: null });
      } catch (err) {
        if (err instanceof ConfigError) return err.problems;
        throw err;
      }
      return [];
    };
    for (const value of [
      '2030-01-01',
      '2030-01-01T00:00:00',
      '2030-01-01 00:00:00Z',
      'Tue, 01 Jan 2030 00:00:00 GMT',
      '2030-02-30T00:00:00Z',
    ]) {
      t.strictSame(
        problems(value),
        [`AUTH_SMS_TEST_OTP_VALID_UNTIL: "${value}" is not a time (use RFC 3339, like 2030-01-01T00:00:00Z)`],
        value,
      );
    }
    for (const value of ['2030-01-01T00:00:00Z', '2030-01-01T00:00:00.5+02:00', ''])
      t.strictSame(problems(value), [], `${value || 'empty'}: accepted`);
  },
);

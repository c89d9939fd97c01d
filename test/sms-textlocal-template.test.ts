// Textlocal refuses a text that matches none of the account's approved templates (its error 80). The
// original's error then repeats the text sent, one-time code included; ours must not, since the message
// is the client's 422 answer and goes to the request log (docs/differences.md#mail-and-sms).
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { signUp } from './helpers/accounts.js';
import { startSmsGatewayFake } from './helpers/sms.js';

const sms = await startSmsGatewayFake();
t.teardown(() => sms.close());

// A marker only the rendered text holds, to see whether any of it (the code sits right after) escapes.
const MARKER = 'Portcullis-sign-in-text';

t.test('textlocal: a refused template is answered and logged without the text sent or its code', async (t) => {
  const api = await startTestService({
    AUTH_EXTERNAL_PHONE_ENABLED: 'true',
    AUTH_SMS_PROVIDER: 'textlocal',
    AUTH_SMS_TEXTLOCAL_API_BASE_URL: sms.baseUrl,
    AUTH_SMS_TEXTLOCAL_API_KEY: 'tl-key',
    AUTH_SMS_TEXTLOCAL_SENDER: 'PRTCLS',
    AUTH_SMS_TEMPLATE: `${MARKER} {{ .Code }}`,
    AUTH_MFA_PHONE_TEMPLATE: `${MARKER} {{ .Code }}`,
    AUTH_MFA_PHONE_ENROLL_ENABLED: 'true',
    AUTH_MFA_PHONE_VERIFY_ENABLED: 'true',
    AUTH_MAILER_AUTOCONFIRM: 'true',
  });
  t.teardown(() => api.stop());

  sms.failNext('textlocal', 'template');
  const otp = await api.request('POST', '/otp', { body: { phone: '+15550700001' } });
  t.equal(otp.status, 422);
  t.equal(otp.body.error_code, 'sms_send_failed');
  t.match(otp.body.msg, /^Error sending confirmation OTP to provider: textlocal error: Invalid template \(code: 80\) template message/);
  t.notMatch(otp.body.msg, MARKER, `POST /otp: ${otp.body.msg}`);

  // An MFA challenge's code goes through the same gateway error.
  const s = await signUp(api);
  const factor = await api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'phone', phone: '+15550700002' } });
  t.equal(factor.status, 200);
  sms.failNext('textlocal', 'template');
  const challenge = await api.request('POST', `/factors/${factor.body.id}/challenge`, { token: s.access_token, body: {} });
  t.equal(challenge.status, 422);
  t.notMatch(challenge.body.msg, MARKER, `MFA challenge: ${challenge.body.msg}`);

  await api.stop();
  const leaked = api.logs().filter((line) => JSON.stringify(line).includes(MARKER));
  t.strictSame(leaked, [], 'no log line holds the text sent');
});

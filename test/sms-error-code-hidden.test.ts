// A gateway (or a proxy or impostor in its place) whose error text repeats the text sent must not carry the
// one-time code into the client's 422 sms_send_failed answer or the log: the code reads [code] there
// (docs/sms.md#gateways). Each gateway fake's 'echo' failure refuses with the text sent in its error.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { signUp } from './helpers/accounts.js';
import { gatewayEnvs, startSmsGatewayFake, type GatewayName } from './helpers/sms.js';

const sms = await startSmsGatewayFake();
t.teardown(() => sms.close());

// Twilio Verify makes and checks its codes itself: no text of ours to echo.
const { twilio_verify: _verify, ...ENV } = gatewayEnvs(sms.baseUrl);

let nextNumber = 14155557100;
const codeOf = (body: string) => /code (\d{8})$/.exec(body)?.[1] ?? '';

for (const [gateway, env] of Object.entries(ENV) as [GatewayName, Record<string, string>][]) {
  t.test(`${gateway}: an error text echoing the text sent does not leak the code`, async (t) => {
    const api = await startTestService({
      ...env,
      AUTH_EXTERNAL_PHONE_ENABLED: 'true',
      AUTH_MAILER_AUTOCONFIRM: 'true',
      AUTH_MFA_PHONE_ENROLL_ENABLED: 'true',
      AUTH_MFA_PHONE_VERIFY_ENABLED: 'true',
      AUTH_SMS_TEMPLATE: 'Sign-in code {{ .Code }}',
      AUTH_MFA_PHONE_TEMPLATE: 'MFA code {{ .Code }}',
      AUTH_SMS_OTP_LENGTH: '8',
      AUTH_MFA_PHONE_OTP_LENGTH: '8',
      AUTH_RATE_LIMIT_SMS_SENT: '1000',
    });
    t.teardown(() => api.stop());
    // The request's log line is written once its answer has gone: wait for it.
    const requestLine = async (path: string) => {
      for (let tries = 0; tries < 100; tries++) {
        const line = api.logs().find((l) => l.path === path && l.status === 422);
        if (line) return line;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`no log line for ${path}`);
    };
    const leaks = async (code: string, res: { text: string }, path: string) => {
      t.equal(code.length, 8, 'the fake saw the code sent');
      t.notOk(res.text.includes(code), 'the answer does not carry the code');
      t.match((await requestLine(path)).error, /code \[code\]/, "the request's log line has the error, the code hidden");
      t.notOk(
        api.logs().some((line) => JSON.stringify(line).includes(code)),
        'no log line carries the code',
      );
    };

    const phone = String(nextNumber++);
    sms.failNext(gateway, 'echo');
    const otp = await api.request('POST', '/otp', { body: { phone: `+${phone}` } });
    t.equal(otp.status, 422);
    t.equal(otp.body.error_code, 'sms_send_failed');
    t.match(otp.body.msg, /Sign-in code \[code\]/, "the gateway's words stay, the code hidden");
    const sent = await sms.waitForMessage(phone);
    await leaks(codeOf(sent.body), otp, '/otp');

    const s = await signUp(api);
    const mfaPhone = String(nextNumber++);
    const factor = await api.request('POST', '/factors', { token: s.access_token, body: { factor_type: 'phone', phone: `+${mfaPhone}` } });
    t.equal(factor.status, 200);
    sms.failNext(gateway, 'echo');
    const challenge = await api.request('POST', `/factors/${factor.body.id}/challenge`, { token: s.access_token, body: {} });
    t.equal(challenge.status, 422);
    t.equal(challenge.body.error_code, 'sms_send_failed');
    t.match(challenge.body.msg, /MFA code \[code\]/);
    const mfaSent = await sms.waitForMessage(mfaPhone);
    await leaks(codeOf(mfaSent.body), challenge, `/factors/${factor.body.id}/challenge`);
  });
}

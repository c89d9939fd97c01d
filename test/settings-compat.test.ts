// Moving over with the original's environment unchanged (docs/settings.md#ignored-settings): every
// AUTH_/GOTRUE_ variable no setting reads is named in one start-up warning; LOG_LEVEL takes the
// original's names in any case; a gateway with empty credentials starts and fails when sending; an
// explicit SMTP_MAX_FREQUENCY governs magic links and recovery; SMS_TEST_OTP_VALID_UNTIL ends test codes.
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../dist/server/config/load.js';
import { PRODUCTION_ENV } from './helpers/settings.js';
import { settingsBody } from '../dist/server/routes/settings.js';
import { startTestService } from './helpers/server.js';
import { startMailStack } from './helpers/passwordless.js';

const load = (env: Record<string, string>, envFile: string | null = null) => loadConfig({ env, envFile });

t.test('one warning names every ignored AUTH_/GOTRUE_ variable, from the environment and .env, sorted', async (t) => {
  const envFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'compat-')), '.env');
  writeFileSync(envFile, 'GOTRUE_EXPERIMENTAL_NOT_A_SETTING=true\nGOTRUE_SITE_URL=http://localhost:3000\n');
  const config = load(
    {
      GOTRUE_SCIM_BASE_PATH: '/scim/v2',
      GOTRUE_JWT_AUD: 'authenticated',
      AUTH_SITE_URI: 'http://typo.example',
      GOTRUE_EXTERNAL_GITHUB_ENABLED: 'false',
      AUTH_JWT_EXP: '3600',
      GOTRUE_PROFILER_ENABLED: 'true',
      API_EXTERNAL_URL: 'http://localhost:9999',
    },
    envFile,
  );
  t.strictSame(config.warnings, [
    'ignoring settings Portcullis does not know or support: AUTH_SITE_URI, GOTRUE_EXPERIMENTAL_NOT_A_SETTING, GOTRUE_PROFILER_ENABLED, GOTRUE_SCIM_BASE_PATH',
  ]);
  t.strictSame(load({ GOTRUE_SITE_URL: 'http://localhost:3000' }).warnings, [], 'none when every variable is read');
});

t.test('the service logs that warning once at start', async (t) => {
  const api = await startTestService({ GOTRUE_EXPERIMENTAL_NOT_A_SETTING: 'true', AUTH_SITE_URI: 'http://localhost:3000' });
  t.teardown(() => api.stop());
  const warnings = api.logs().filter((l) => l.level === 'warning' && String(l.msg).startsWith('ignoring settings'));
  t.strictSame(
    warnings.map((l) => l.msg),
    ['ignoring settings Portcullis does not know or support: AUTH_SITE_URI, GOTRUE_EXPERIMENTAL_NOT_A_SETTING'],
  );
});

t.test("LOG_LEVEL takes the original's level names in any case", async (t) => {
  for (const [given, level] of [
    ['warning', 'warn'],
    ['WARN', 'warn'],
    ['DEBUG', 'debug'],
    ['trace', 'trace'],
    ['Info', 'info'],
    ['PANIC', 'panic'],
  ]) {
    t.equal(load({ GOTRUE_LOG_LEVEL: given }).log.level, level, given);
  }
  const chatty = load({ GOTRUE_LOG_LEVEL: 'chatty' });
  t.equal(chatty.log.level, 'info', 'another name starts the service, as the original starts, at the default');
  t.match(chatty.warnings, [/^GOTRUE_LOG_LEVEL: "chatty" is none of panic, fatal, error, warn, info, debug, trace; logging at info$/]);
});

t.test('a bare LOG_LEVEL, which the original never reads, is left to the programs it is meant for', async (t) => {
  t.equal(load({ LOG_LEVEL: 'notice' }).log.level, 'info', 'a value no level has does not stop the start');
  t.equal(load({ LOG_LEVEL: 'debug' }).log.level, 'info', 'nor does one change the level');
  t.equal(load({ LOG_LEVEL: 'debug', GOTRUE_LOG_LEVEL: 'warn' }).log.level, 'warn');
});

t.test("a list setting's item the original would never match starts, is named, and matches nothing", async (t) => {
  t.same(load({ AUTH_MAILER_EXTERNAL_HOSTS: 'a.test, b.test:8443' }).mailer.externalHosts, ['a.test', 'b.test:8443']);
  const url = load({ AUTH_MAILER_EXTERNAL_HOSTS: 'a.test,https://b.test/' });
  t.same(url.mailer.externalHosts, ['a.test'], 'a URL is no X-Forwarded-Host');
  t.match(url.warnings, [/^AUTH_MAILER_EXTERNAL_HOSTS: "https:\/\/b.test\/" is no host name/]);
  const methods = load({ AUTH_JWT_VALID_METHODS: 'HS256,none' });
  t.same(methods.jwt.validMethods, ['HS256', 'none']);
  t.match(methods.warnings, [/^AUTH_JWT_VALID_METHODS: none is no algorithm Portcullis verifies/]);
});

t.test('an SMS gateway with empty credentials starts with a warning and fails only when sending', async (t) => {
  const env = { AUTH_EXTERNAL_PHONE_ENABLED: 'true', AUTH_SMS_PROVIDER: 'twilio', AUTH_SMS_TWILIO_ACCOUNT_SID: 'AC123' };
  t.strictSame(load(env).warnings, [
    'AUTH_SMS_PROVIDER is twilio but AUTH_SMS_TWILIO_AUTH_TOKEN, AUTH_SMS_TWILIO_MESSAGE_SERVICE_SID are empty: sending SMS will fail',
  ]);
  const api = await startTestService(env);
  t.teardown(() => api.stop());
  const res = await api.request('POST', '/otp', { body: { phone: '+15550001234' } });
  t.equal(res.status, 422);
  t.equal(res.body.error_code, 'sms_send_failed');
  t.match(res.body.msg, /twilio is not configured: AUTH_SMS_TWILIO_AUTH_TOKEN, AUTH_SMS_TWILIO_MESSAGE_SERVICE_SID empty/);
  const { rows } = await api.db.query('select count(*)::int as n from users');
  t.equal(rows[0].n, 0, 'the failed send left no user behind');
});

t.test('an explicit SMTP_MAX_FREQUENCY governs magic links and recovery mails, also below 60 s', async (t) => {
  const stack = await startMailStack({ AUTH_SMTP_MAX_FREQUENCY: '10', AUTH_MAILER_AUTOCONFIRM: 'true' });
  t.teardown(() => stack.stop());
  const { api, smtp } = stack;
  await api.request('POST', '/signup', { body: { email: 'ivy@example.com', password: 'ivy-password' } });
  t.equal((await api.request('POST', '/magiclink', { body: { email: 'ivy@example.com' } })).status, 200);
  await smtp.waitForMail('ivy@example.com');
  const soon = await api.request('POST', '/recover', { body: { email: 'ivy@example.com' } });
  t.equal(soon.status, 429, 'within the 10 s');
  t.match(soon.body.msg, /after (9|10) seconds/);
  // 30 s later: past SMTP_MAX_FREQUENCY though within the 60 s the default floor used to impose.
  await api.db.query("update users set recovery_sent_at = now() - interval '30 seconds' where email = 'ivy@example.com'");
  t.equal((await api.request('POST', '/recover', { body: { email: 'ivy@example.com' } })).status, 200);
});

t.test('SMS_TEST_OTP applies until SMS_TEST_OTP_VALID_UNTIL, then the number needs a real gateway', async (t) => {
  const base = { AUTH_EXTERNAL_PHONE_ENABLED: 'true', AUTH_SMS_TEST_OTP: '15550001234:123456' };
  const valid = await startTestService({ ...base, AUTH_SMS_TEST_OTP_VALID_UNTIL: '2999-01-01T00:00:00Z' });
  t.teardown(() => valid.stop());
  t.equal((await valid.request('POST', '/otp', { body: { phone: '+15550001234' } })).status, 200);
  const verified = await valid.request('POST', '/verify', { body: { type: 'sms', phone: '+15550001234', token: '123456' } });
  t.equal(verified.status, 200, 'the fixed code signs in');

  const expired = await startTestService({ ...base, AUTH_SMS_TEST_OTP_VALID_UNTIL: '2000-01-01T00:00:00Z' });
  t.teardown(() => expired.stop());
  const res = await expired.request('POST', '/otp', { body: { phone: '+15550001234' } });
  t.equal(res.status, 400);
  t.equal(res.body.error_code, 'phone_provider_disabled', 'no gateway and the test code has expired');
});

t.test("GET /settings lists the original's providers in its order, x and vercel_marketplace not among them", async (t) => {
  const config = load({
    ...PRODUCTION_ENV,
    GOTRUE_EXTERNAL_X_ENABLED: 'true',
    GOTRUE_EXTERNAL_X_CLIENT_ID: 'id',
    GOTRUE_EXTERNAL_X_SECRET: 'secret',
  });
  const { external } = settingsBody(config) as { external: Record<string, boolean> };
  t.strictSame(Object.keys(external), [
    'anonymous_users',
    'apple',
    'azure',
    'bitbucket',
    'discord',
    'facebook',
    'snapchat',
    'figma',
    'fly',
    'github',
    'gitlab',
    'google',
    'keycloak',
    'kakao',
    'linkedin',
    'linkedin_oidc',
    'notion',
    'spotify',
    'slack',
    'slack_oidc',
    'workos',
    'twitch',
    'twitter',
    'email',
    'phone',
    'zoom',
  ]);
});

t.test('code lengths outside 6–10 and a flow-state lifetime under 300 s start, corrected as the original corrects them', async (t) => {
  const read = (env: Record<string, string>) => {
    const config = load({ ...PRODUCTION_ENV, ...env });
    return {
      values: [config.mailer.otpLength, config.sms.otpLength, config.mfa.phone.otpLength, config.external.flowStateExpirySeconds],
      warnings: config.warnings.filter((w) => /as the original does$/.test(w)),
    };
  };
  t.strictSame(
    read({
      GOTRUE_MAILER_OTP_LENGTH: '4',
      GOTRUE_SMS_OTP_LENGTH: '12',
      GOTRUE_MFA_PHONE_OTP_LENGTH: '0',
      GOTRUE_EXTERNAL_FLOW_STATE_EXPIRY_DURATION: '60s',
    }),
    {
      values: [6, 6, 6, 300],
      warnings: [
        'GOTRUE_MAILER_OTP_LENGTH: 4 is outside 6–10; using 6, as the original does',
        'GOTRUE_SMS_OTP_LENGTH: 12 is outside 6–10; using 6, as the original does',
        'GOTRUE_MFA_PHONE_OTP_LENGTH: 0 is outside 6–10; using 6, as the original does',
        'GOTRUE_EXTERNAL_FLOW_STATE_EXPIRY_DURATION: 60 s is under 300 s; using 300 s, as the original does',
      ],
    },
  );
  // Values inside the bounds are kept, without a word.
  t.strictSame(read({ GOTRUE_MAILER_OTP_LENGTH: '8', GOTRUE_SMS_OTP_LENGTH: '10', GOTRUE_EXTERNAL_FLOW_STATE_EXPIRY_DURATION: '600s' }), {
    values: [8, 10, 6, 600],
    warnings: [],
  });
});

t.test('MFA lifetimes under 300 s (0 too) become 300 s, and an MFA phone interval of 0 becomes 60 s, as the original', async (t) => {
  const c = load({
    ...PRODUCTION_ENV,
    GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION: '60s',
    GOTRUE_MFA_FACTOR_EXPIRY_DURATION: '0',
    GOTRUE_MFA_PHONE_MAX_FREQUENCY: '0',
  });
  t.strictSame([c.mfa.challengeExpirySeconds, c.mfa.factorExpirySeconds, c.mfa.phone.maxFrequencySeconds], [300, 300, 60]);
  t.strictSame(
    c.warnings.filter((w) => /as the original does$/.test(w)),
    [
      'GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION: 60 s is under 300 s; using 300 s, as the original does',
      'GOTRUE_MFA_FACTOR_EXPIRY_DURATION: 0 s is under 300 s; using 300 s, as the original does',
      'GOTRUE_MFA_PHONE_MAX_FREQUENCY: 0 would let codes go out back to back; using 60 s, as the original does',
    ],
  );
  const kept = load({ ...PRODUCTION_ENV, GOTRUE_MFA_CHALLENGE_EXPIRY_DURATION: '10m', GOTRUE_MFA_PHONE_MAX_FREQUENCY: '5s' });
  t.strictSame([kept.mfa.challengeExpirySeconds, kept.mfa.phone.maxFrequencySeconds], [600, 5], 'values inside the bounds are kept');
});

t.test('captcha settings are judged only while captcha is on; a timeout of 0 is 10 s, as the original', async (t) => {
  const off = load({ ...PRODUCTION_ENV, GOTRUE_SECURITY_CAPTCHA_PROVIDER: 'recaptcha', GOTRUE_SECURITY_CAPTCHA_TIMEOUT: '0' });
  t.equal(off.security.captcha.enabled, false);
  t.equal(off.security.captcha.provider, 'hcaptcha', 'a leftover provider name is never read');
  t.equal(off.security.captcha.timeoutSeconds, 10);
  const on = { ...PRODUCTION_ENV, GOTRUE_SECURITY_CAPTCHA_ENABLED: 'true', GOTRUE_SECURITY_CAPTCHA_SECRET: 'shh' };
  t.throws(
    () => load({ ...on, GOTRUE_SECURITY_CAPTCHA_PROVIDER: 'recaptcha' }),
    /GOTRUE_SECURITY_CAPTCHA_PROVIDER: "recaptcha" is not hcaptcha or turnstile/,
  );
  const turnstile = load({ ...on, GOTRUE_SECURITY_CAPTCHA_PROVIDER: 'turnstile', GOTRUE_SECURITY_CAPTCHA_TIMEOUT: '0s' });
  t.strictSame([turnstile.security.captcha.provider, turnstile.security.captcha.timeoutSeconds], ['turnstile', 10]);
  t.equal(load({ ...on, GOTRUE_SECURITY_CAPTCHA_TIMEOUT: '3s' }).security.captcha.timeoutSeconds, 3);
});

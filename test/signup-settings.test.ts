// Sign-up under the settings that change it: DISABLE_SIGNUP, disabled providers, autoconfirm, a template
// server that is down, and the global email limit shared by every HTTP thread.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { startSmtpServer } from './helpers/smtp.js';
import { forgetPretendedSends } from './helpers/pretended-sends.js';
import { startTemplateServer, unusedPort } from './helpers/template-server.js';

const smtp = await startSmtpServer();
t.teardown(() => smtp.close());
const mail = { AUTH_SMTP_HOST: '127.0.0.1', AUTH_SMTP_PORT: String(smtp.port), AUTH_SMTP_ADMIN_EMAIL: 'noreply@example.com' };

t.test('DISABLE_SIGNUP and disabled providers', async (t) => {
  const api = await startTestService({ ...mail, AUTH_DISABLE_SIGNUP: 'true' });
  t.teardown(() => api.stop());
  const res = await api.request('POST', '/signup', { body: { email: 'a@example.com', password: 'secret99' } });
  t.strictSame(res.body, { code: 422, error_code: 'signup_disabled', msg: 'Signups not allowed for this instance' });
  // Anonymous sign-ins are off by default, and the original refuses that first (anonymous.test.ts has both on).
  const anon = await api.request('POST', '/signup', { body: {} });
  t.strictSame(anon.body, { code: 422, error_code: 'anonymous_provider_disabled', msg: 'Anonymous sign-ins are disabled' });

  const off = await startTestService({ ...mail, AUTH_EXTERNAL_EMAIL_ENABLED: 'false' });
  t.teardown(() => off.stop());
  t.strictSame((await off.request('POST', '/signup', { body: { email: 'a@example.com', password: 'secret99' } })).body, {
    code: 400,
    error_code: 'email_provider_disabled',
    msg: 'Email signups are disabled',
  });
  t.strictSame(
    (await off.request('POST', '/signup', { body: { phone: '15551234567', password: 'secret99' } })).body,
    { code: 400, error_code: 'phone_provider_disabled', msg: 'Phone signups are disabled' },
    'phone is off by default',
  );
  t.strictSame((await off.request('POST', '/token?grant_type=password', { body: { email: 'a@example.com', password: 'secret99' } })).body, {
    code: 422,
    error_code: 'email_provider_disabled',
    msg: 'Email logins are disabled',
  });
  t.strictSame((await off.request('POST', '/signup', { body: {} })).body, {
    code: 422,
    error_code: 'anonymous_provider_disabled',
    msg: 'Anonymous sign-ins are disabled',
  });
});

t.test('autoconfirm returns a session; a duplicate is 400 "User already registered"', async (t) => {
  const api = await startTestService({
    ...mail,
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_EXTERNAL_PHONE_ENABLED: 'true',
    AUTH_SMS_AUTOCONFIRM: 'true',
  });
  t.teardown(() => api.stop());
  const sent = smtp.mails.length;
  const res = await api.request('POST', '/signup', { body: { email: 'auto@example.com', password: 'secret99' } });
  t.equal(res.status, 200);
  t.type(res.body.access_token, 'string');
  t.type(res.body.user.email_confirmed_at, 'string');
  t.equal(smtp.mails.length, sent, 'no confirmation mail');
  const me = await api.request('GET', '/user', { token: res.body.access_token });
  t.equal(me.body.email, 'auto@example.com');
  for (const body of [
    { email: 'auto@example.com', password: 'secret99' },
    { phone: '15551234567', password: 'secret99' },
  ]) {
    await api.request('POST', '/signup', { body });
    const provider = 'email' in body ? 'email' : 'phone';
    const audited = async () =>
      (
        await api.db.query(
          `select count(*)::int as n from audit_log_entries where payload->>'action' = 'user_repeated_signup' and payload->'traits'->>'provider' = $1`,
          [provider],
        )
      ).rows[0].n as number;
    const before = await audited();
    const dup = await api.request('POST', '/signup', { body });
    t.strictSame(
      { status: dup.status, body: dup.body },
      { status: 400, body: { code: 400, error_code: 'user_already_exists', msg: 'User already registered' } },
    );
    // Refused, and audited all the same, as the original writes the entry before it refuses.
    t.equal(await audited(), before + 1, `${provider}: the repeated sign-up is audited`);
  }
  // The same answer for an address held in another audience (X-JWT-AUD), whose user this one cannot see.
  for (const body of [
    { email: 'auto@example.com', password: 'secret99' },
    { phone: '15551234567', password: 'secret99' },
  ]) {
    const dup = await api.request('POST', '/signup', { body, headers: { 'X-JWT-AUD': 'another-audience' } });
    t.strictSame(
      { status: dup.status, body: dup.body },
      { status: 400, body: { code: 400, error_code: 'user_already_exists', msg: 'User already registered' } },
    );
  }
  for (const [path, body] of [
    ['/otp', { email: 'auto@example.com' }],
    ['/magiclink', { email: 'auto@example.com' }],
    ['/otp', { phone: '15551234567' }],
  ] as const) {
    // Each as a first request: /otp's pretended link would refuse /magiclink's within the interval.
    await forgetPretendedSends(api);
    const res = await api.request('POST', path, { body, headers: { 'X-JWT-AUD': 'another-audience' } });
    t.strictSame({ status: res.status, body: res.body }, { status: 200, body: {} }, `${path}: nothing to send in that audience`);
  }
  t.equal(smtp.mails.length, sent, 'no mail');
  const settings = await api.request('GET', '/settings');
  t.match(settings.body, { autoconfirm: true, mailer_autoconfirm: true, phone_autoconfirm: true });
});

t.test('templates: a served template is used; when its server is down the built-in default is', async (t) => {
  const templates = await startTemplateServer();
  templates.set('/confirm.html', '<h1>Hello {{ .Email }}</h1><a href="{{ .ConfirmationURL }}">go</a> {{ .Token }}');
  t.teardown(() => templates.close());
  const api = await startTestService({
    ...mail,
    AUTH_MAILER_TEMPLATES_CONFIRMATION: `${templates.baseUrl}/confirm.html`,
    AUTH_MAILER_SUBJECTS_CONFIRMATION: 'Welcome aboard',
  });
  t.teardown(() => api.stop());
  await api.request('POST', '/signup', { body: { email: 'templated@example.com', password: 'secret99' } });
  const custom = await smtp.waitForMail('templated@example.com');
  t.equal(custom.subject, 'Welcome aboard');
  t.match(custom.html, /<h1>Hello templated@example.com<\/h1>/);
  t.match(custom.link, /\/verify\?token=[0-9a-f]{56}&type=signup&redirect_to=http:\/\/localhost:3000$/);

  const down = await startTestService({
    ...mail,
    AUTH_MAILER_TEMPLATES_CONFIRMATION: `http://127.0.0.1:${await unusedPort()}/confirm.html`,
  });
  t.teardown(() => down.stop());
  const res = await down.request('POST', '/signup', { body: { email: 'fallback@example.com', password: 'secret99' } });
  t.equal(res.status, 200, 'signup still works');
  const fallback = await smtp.waitForMail('fallback@example.com');
  t.equal(fallback.subject, 'Confirm Your Signup');
  t.match(fallback.html, /<h2>/, 'the built-in default template');
  const link = new URL(fallback.link!);
  t.equal((await down.request('GET', link.pathname + link.search)).status, 303, 'and its link works');
});

t.test('RATE_LIMIT_EMAIL_SENT holds across HTTP threads', async (t) => {
  const api = await startTestService({ ...mail, AUTH_HTTP_WORKERS: '2', AUTH_RATE_LIMIT_EMAIL_SENT: '3' });
  t.teardown(() => api.stop());
  const answers = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      api.request('POST', '/signup', { body: { email: `limited${i}@example.com`, password: 'secret99' } }),
    ),
  );
  const statuses = answers.map((a) => a.status).sort();
  t.same(statuses, [200, 200, 200, 429, 429, 429], 'exactly three mails, whichever thread took them');
  for (const refused of answers.filter((a) => a.status === 429)) {
    t.strictSame(refused.body, { code: 429, error_code: 'over_email_send_rate_limit', msg: 'email rate limit exceeded' });
  }
  const users = await api.db.query("select count(*) from users where email like 'limited%'");
  t.equal(Number(users.rows[0].count), 3, 'refused signups left nothing behind');
});

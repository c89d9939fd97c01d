// POST /signup, /otp, /magiclink and /recover driven as auth-js drives them, compared with the original's
// handlers (signup.go, otp.go, magic_link.go, recover.go, templatemailer.go): the template values each
// mail is rendered with, the PKCE flow state each creates, what `data` may set, and the refusals of each
// route when sign-ups or a provider are switched off. Account enumeration is test/enumeration.test.ts's.
import t from 'tap';
import { startMailStack, pkcePair, type MailStack } from './helpers/passwordless.js';
import { startTemplateServer } from './helpers/template-server.js';
import { authClient } from './helpers/auth-client.js';

const LIMITS = { AUTH_RATE_LIMIT_EMAIL_SENT: '1000', AUTH_RATE_LIMIT_SMS_SENT: '1000' };
const ALLOW = { AUTH_URI_ALLOW_LIST: 'https://app.example.com/**' };

// Every value a link mail's template may use, one per bracket, so a mail shows exactly what it was given.
const DUMP =
  'T=[{{ .Token }}] TH=[{{ .TokenHash }}] S=[{{ .SiteURL }}] R=[{{ .RedirectTo }}] D=[{{ .Data.plan }}] E=[{{ .Email }}] CU=[{{ .ConfirmationURL }}]';
const templates = await startTemplateServer();
for (const kind of ['confirmation', 'magic', 'recovery']) templates.set(`/${kind}`, DUMP);
const stack = await startMailStack(
  {
    ...LIMITS,
    ...ALLOW,
    AUTH_MAILER_TEMPLATES_CONFIRMATION: `${templates.baseUrl}/confirmation`,
    AUTH_MAILER_TEMPLATES_MAGIC_LINK: `${templates.baseUrl}/magic`,
    AUTH_MAILER_TEMPLATES_RECOVERY: `${templates.baseUrl}/recovery`,
  },
  { sms: true },
);
t.teardown(async () => {
  await stack.stop();
  await templates.close();
});

/** The bracketed values of a DUMP mail, the link's `&amp;` decoded. */
function valuesOf(html: string): Record<string, string> {
  return Object.fromEntries([...html.matchAll(/(\w+)=\[([^\]]*)\]/g)].map(([, k, v]) => [k, v.replaceAll('&amp;', '&')]));
}
const flows = async (userEmail: string) =>
  (
    await stack.api.db.query(
      `select provider_type, authentication_method, code_challenge_method from flow_state f join users u on u.id = f.user_id
      where u.email = $1 order by f.created_at`,
      [userEmail],
    )
  ).rows;
const allowResend = (email: string) =>
  stack.api.db.query(`update users set confirmation_sent_at = now() - interval '1 day', recovery_sent_at = null where email = $1`, [email]);

t.test('signUp with data and emailRedirectTo: data joins the identity, cannot replace its keys, and reaches the mail', async (t) => {
  const client = authClient(stack.api.url);
  const { data, error } = await client.signUp({
    email: 'Data.Keys@Example.com',
    password: 'secret99',
    options: {
      data: { plan: 'pro', sub: 'forged', email: 'forged@example.com', email_verified: true },
      emailRedirectTo: 'https://app.example.com/welcome?x=1',
    },
  });
  t.equal(error, null);
  t.equal(data.session, null);
  const user = data.user!;
  const expected = { sub: user.id, plan: 'pro', email: 'data.keys@example.com', email_verified: false, phone_verified: false };
  t.strictSame(user.user_metadata, expected);
  t.strictSame(
    user.identities?.map((i) => i.identity_data),
    [expected],
  );
  const values = valuesOf((await stack.smtp.waitForMail('data.keys@example.com')).html);
  t.match(values.T, /^\d{6}$/);
  t.match(values.TH, /^[0-9a-f]{56}$/);
  t.strictSame(
    { S: values.S, R: values.R, D: values.D, E: values.E },
    { S: 'http://localhost:3000', R: 'https://app.example.com/welcome?x=1', D: 'pro', E: 'data.keys@example.com' },
  );
  const link = new URL(values.CU);
  t.strictSame(
    [link.searchParams.get('token'), link.searchParams.get('type'), link.searchParams.get('redirect_to')],
    [values.TH, 'signup', values.R],
  );
});

t.test('PKCE sign-up: an email/signup flow state, a pkce_ token hash, and SITE_URL for a target not allowed', async (t) => {
  const client = authClient(stack.api.url, { flowType: 'pkce' });
  const { error } = await client.signUp({
    email: 'pkce.signup@example.com',
    password: 'secret99',
    options: { emailRedirectTo: 'https://evil.example.org/' },
  });
  t.equal(error, null);
  const values = valuesOf((await stack.smtp.waitForMail('pkce.signup@example.com')).html);
  t.match(values.TH, /^pkce_[0-9a-f]{56}$/);
  t.equal(values.R, 'http://localhost:3000');
  t.equal(new URL(values.CU).searchParams.get('token'), values.TH);
  // auth-js sends the method in lower case; the original stores it so, whatever case it was sent in.
  t.strictSame(await flows('pkce.signup@example.com'), [
    { provider_type: 'email', authentication_method: 'email/signup', code_challenge_method: 's256' },
  ]);
});

t.test('signInWithOtp: an unconfirmed address gets the confirmation, a confirmed one the magic link, each with its flow', async (t) => {
  const { challenge } = await pkcePair();
  const email = 'otp.flows@example.com';
  const first = await stack.api.request('POST', '/otp?redirect_to=https%3A%2F%2Fapp.example.com%2Fcb', {
    body: { email, data: { plan: 'otp' }, code_challenge: challenge, code_challenge_method: 'PLAIN' },
  });
  t.strictSame({ status: first.status, body: first.body }, { status: 200, body: {} });
  const confirmation = valuesOf((await stack.smtp.waitForMail(email)).html);
  t.strictSame(
    [new URL(confirmation.CU).searchParams.get('type'), confirmation.R, confirmation.D],
    ['signup', 'https://app.example.com/cb', 'otp'],
  );
  t.match(confirmation.TH, /^pkce_/);

  await stack.api.db.query(`update users set email_confirmed_at = now() where email = $1`, [email]);
  await allowResend(email);
  const client = authClient(stack.api.url, { flowType: 'pkce' });
  const { error } = await client.signInWithOtp({
    email,
    options: { emailRedirectTo: 'https://app.example.com/in', data: { plan: 'ignored' } },
  });
  t.equal(error, null);
  const magic = valuesOf((await stack.smtp.waitForMail(email)).html);
  t.strictSame([new URL(magic.CU).searchParams.get('type'), magic.R, magic.D], ['magiclink', 'https://app.example.com/in', 'otp']);
  t.match(magic.TH, /^pkce_/);
  t.strictSame(await flows(email), [
    { provider_type: 'email', authentication_method: 'email/signup', code_challenge_method: 'plain' },
    { provider_type: 'magiclink', authentication_method: 'magiclink', code_challenge_method: 's256' },
  ]);
  const again = await client.signInWithOtp({ email });
  t.strictSame([again.error?.status, again.error?.code], [429, 'over_email_send_rate_limit']);
  t.match(again.error?.message ?? '', /^For security purposes, you can only request this after \d+ seconds\.$/);
});

t.test('resetPasswordForEmail with PKCE: a recovery flow state and a pkce_ recovery link, for an unconfirmed user too', async (t) => {
  const email = 'recover.flow@example.com';
  await stack.api.request('POST', '/signup', { body: { email, password: 'secret99' } });
  await stack.smtp.waitForMail(email);
  const client = authClient(stack.api.url, { flowType: 'pkce' });
  const { error } = await client.resetPasswordForEmail(email.toUpperCase(), { redirectTo: 'https://app.example.com/reset#frag' });
  t.equal(error, null);
  const values = valuesOf((await stack.smtp.waitForMail(email)).html);
  const link = new URL(values.CU);
  t.strictSame([link.searchParams.get('type'), link.searchParams.get('redirect_to')], ['recovery', 'https://app.example.com/reset#frag']);
  t.match(values.TH, /^pkce_/);
  t.strictSame(await flows(email), [{ provider_type: 'recovery', authentication_method: 'recovery', code_challenge_method: 's256' }]);
});

t.test('phone sign-up by WhatsApp: the code goes by that channel, data joins a phone identity without an email', async (t) => {
  const client = authClient(stack.api.url);
  const { data, error } = await client.signUp({
    phone: '+14155550101',
    password: 'secret99',
    options: { data: { plan: 'x' }, channel: 'whatsapp' },
  });
  t.equal(error, null);
  t.equal(data.session, null);
  t.strictSame(data.user?.user_metadata, { sub: data.user?.id, plan: 'x', email_verified: false, phone_verified: false });
  const sms = await stack.sms!.waitForMessage('14155550101');
  t.strictSame([sms.channel, sms.fields.To], ['whatsapp', 'whatsapp:+14155550101']);
  const again = await client.signUp({ phone: '+14155550101', password: 'secret99' });
  t.strictSame([again.error?.status, again.error?.code], [429, 'over_sms_send_rate_limit']);
});

t.test('refusals by setting, route by route', async (t) => {
  const routes: Array<[string, string, unknown]> = [
    ['signup email', '/signup', { email: 'd1@example.com', password: 'secret99' }],
    ['signup phone', '/signup', { phone: '14155550120', password: 'secret99' }],
    ['signup weak', '/signup', { email: 'd1@example.com', password: 'a' }],
    ['otp email', '/otp', { email: 'd2@example.com' }],
    ['otp phone', '/otp', { phone: '14155550121' }],
    ['otp email, create_user false', '/otp', { email: 'd3@example.com', create_user: false }],
    ['magiclink', '/magiclink', { email: 'd4@example.com' }],
    ['recover', '/recover', { email: 'd5@example.com' }],
  ];
  const signupDisabled = [422, 'signup_disabled', 'Signups not allowed for this instance'];
  const weak = [422, 'weak_password', 'Password should be at least 6 characters.'];
  const otpDisabled = [422, 'otp_disabled', 'Signups not allowed for otp'];
  const emailLogins = [422, 'email_provider_disabled', 'Email logins are disabled'];
  const ok = [200];
  const settings: Array<[string, Record<string, string>, boolean, unknown[][]]> = [
    [
      'DISABLE_SIGNUP',
      { AUTH_DISABLE_SIGNUP: 'true' },
      true,
      [signupDisabled, signupDisabled, signupDisabled, signupDisabled, signupDisabled, otpDisabled, signupDisabled, ok],
    ],
    [
      'EXTERNAL_EMAIL_ENABLED=false',
      { AUTH_EXTERNAL_EMAIL_ENABLED: 'false' },
      true,
      [
        [400, 'email_provider_disabled', 'Email signups are disabled'],
        ok,
        weak,
        emailLogins,
        ok,
        otpDisabled,
        emailLogins,
        [400, 'email_provider_disabled', 'Email logins are disabled'],
      ],
    ],
    [
      'EXTERNAL_PHONE_ENABLED=false',
      { AUTH_EXTERNAL_PHONE_ENABLED: 'false' },
      false,
      [
        ok,
        [400, 'phone_provider_disabled', 'Phone signups are disabled'],
        weak,
        ok,
        [400, 'phone_provider_disabled', 'Unsupported phone provider'],
        otpDisabled,
        ok,
        ok,
      ],
    ],
  ];
  for (const [name, env, sms, expected] of settings) {
    const s: MailStack = await startMailStack({ ...LIMITS, ...env }, { sms });
    try {
      for (const [i, [label, path, body]] of routes.entries()) {
        const res = await s.api.request('POST', path, { body });
        const [status, code, msg] = expected[i];
        if (status === 200) t.equal(res.status, 200, `${name}: ${label}`);
        else t.strictSame([res.status, res.body.error_code, res.body.msg], [status, code, msg], `${name}: ${label}`);
      }
    } finally {
      await s.stop();
    }
  }
});

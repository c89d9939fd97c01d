// POST /signup over email and phone (REFERENCE §2.1) with real mail and the SMS gateway fake, and the
// confirmation through /verify.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { startSmtpServer } from './helpers/smtp.js';
import { startSmsGatewayFake } from './helpers/sms.js';
import { behindDeletion } from './helpers/row-lock.js';
import { adminToken } from './helpers/admin.js';
import { forgetPretendedSends } from './helpers/pretended-sends.js';

const smtp = await startSmtpServer();
const sms = await startSmsGatewayFake();
const api = await startTestService({
  AUTH_SMTP_HOST: '127.0.0.1',
  AUTH_SMTP_PORT: String(smtp.port),
  AUTH_SMTP_ADMIN_EMAIL: 'noreply@example.com',
  AUTH_SMTP_SENDER_NAME: 'Example',
  AUTH_PASSWORD_REQUIRED_CHARACTERS: 'abcdefghijklmnopqrstuvwxyz:0123456789',
  AUTH_EXTERNAL_PHONE_ENABLED: 'true',
  AUTH_SMS_PROVIDER: 'twilio',
  AUTH_SMS_TWILIO_API_BASE_URL: sms.baseUrl,
  AUTH_SMS_TWILIO_ACCOUNT_SID: 'AC123',
  AUTH_SMS_TWILIO_AUTH_TOKEN: 'tok',
  AUTH_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG1',
  AUTH_URI_ALLOW_LIST: 'https://app.example.com/**',
  // This file sends some 25 mails, and its concurrent sign-ups each take a send permit before they learn
  // they lost: the default 30 an hour left it at the edge. The global limit has tests of its own.
  AUTH_RATE_LIMIT_EMAIL_SENT: '1000',
});
t.teardown(async () => {
  await api.stop();
  await smtp.close();
  await sms.close();
});

const signup = (body: unknown, path = '/signup') => api.request('POST', path, { body });
const userCount = async (email: string) =>
  Number((await api.db.query('select count(*) from users where lower(email) = $1', [email])).rows[0].count);

t.test("validation errors, in the original's order", async (t) => {
  const cases: Array<[unknown, number, string, string]> = [
    [{ email: 'a@example.com' }, 400, 'validation_failed', 'Signup requires a valid password'],
    [{ email: 'a@example.com', password: 'a1'.repeat(37) }, 400, 'validation_failed', 'Password cannot be longer than 72 characters'],
    [
      { email: 'a@example.com', phone: '15551234567', password: 'secret99' },
      400,
      'validation_failed',
      'Only an email address or phone number should be provided on signup.',
    ],
    [{ email: 'not-an-email', password: 'secret99' }, 400, 'validation_failed', 'Unable to validate email address: invalid format'],
    // Trimmed, but sent: the original's format error, not "An email address is required".
    [{ email: '   ', password: 'secret99' }, 400, 'validation_failed', 'Unable to validate email address: invalid format'],
    [{ email: `${'x'.repeat(250)}@example.com`, password: 'secret99' }, 400, 'validation_failed', 'An email address is too long'],
    [{ phone: '+12', password: 'secret99' }, 400, 'validation_failed', 'Invalid phone number format (E.164 required)'],
    [
      { phone: '15551234567', password: 'secret99', channel: 'pigeon' },
      400,
      'validation_failed',
      "Invalid channel, supported values are 'sms' or 'whatsapp'. 'whatsapp' is only supported if Twilio or Twilio Verify is used as the provider.",
    ],
    [
      { email: 5, password: 'secret99' },
      400,
      'bad_json',
      'Could not parse request body as JSON: json: cannot unmarshal number into Go struct field SignupParams.email of type string',
    ],
    [
      { data: [], password: 'secret99' },
      400,
      'bad_json',
      'Could not parse request body as JSON: json: cannot unmarshal array into Go struct field SignupParams.data of type map[string]interface {}',
    ],
  ];
  for (const [body, status, code, msg] of cases) {
    const res = await signup(body);
    t.strictSame({ status: res.status, body: res.body }, { status, body: { code: status, error_code: code, msg } }, msg);
  }
});

t.test('a weak password is one 422 with every reason', async (t) => {
  const res = await signup({ email: 'weak@example.com', password: 'ABC' });
  t.equal(res.status, 422);
  t.strictSame(res.body, {
    code: 422,
    error_code: 'weak_password',
    msg: 'Password should be at least 6 characters. Password should contain at least one character of each: abcdefghijklmnopqrstuvwxyz, 0123456789.',
    weak_password: { reasons: ['length', 'characters'] },
  });
  t.equal(res.headers.get('x-sb-error-code'), 'weak_password');
  t.equal(await userCount('weak@example.com'), 0);
});

t.test('email signup: user answered, confirmation mail sent, link confirms and signs in', async (t) => {
  const res = await signup({ email: 'Alice@Example.com', password: 'secret99', data: { plan: 'pro' } });
  t.equal(res.status, 200);
  const user = res.body;
  t.match(user, {
    aud: 'authenticated',
    role: 'authenticated',
    email: 'alice@example.com',
    phone: '',
    app_metadata: { provider: 'email', providers: ['email'] },
    user_metadata: { plan: 'pro', sub: user.id, email: 'alice@example.com', email_verified: false, phone_verified: false },
    is_anonymous: false,
  });
  t.type(user.confirmation_sent_at, 'string');
  t.notOk('email_confirmed_at' in user, 'not confirmed yet');
  t.equal(user.identities.length, 1);
  t.match(user.identities[0], { id: user.id, user_id: user.id, provider: 'email', email: 'alice@example.com' });

  const mail = await smtp.waitForMail('alice@example.com');
  t.equal(mail.subject, 'Confirm Your Signup');
  t.equal(mail.fromAddress, 'noreply@example.com');
  t.equal(mail.fromName, 'Example');
  const link = new URL(mail.link!);
  t.equal(link.origin, api.url);
  t.equal(link.pathname, '/verify');
  t.equal(link.searchParams.get('type'), 'signup');
  t.equal(link.searchParams.get('redirect_to'), 'http://localhost:3000');
  t.match(link.searchParams.get('token'), /^[0-9a-f]{56}$/);
  t.match(mail.text, /\b\d{6}\b/, 'the mail carries the numeric code too');
  const stored = await api.db.query('select token_hash from one_time_tokens where user_id = $1', [user.id]);
  t.not(stored.rows[0].token_hash, link.searchParams.get('token'), 'only a hash of the link token is stored');

  const early = await api.request('POST', '/token?grant_type=password', { body: { email: 'alice@example.com', password: 'secret99' } });
  t.strictSame(early.body, { code: 400, error_code: 'email_not_confirmed', msg: 'Email not confirmed' });

  const verified = await api.request('GET', link.pathname + link.search);
  t.equal(verified.status, 303);
  const location = new URL(verified.headers.get('location')!);
  t.equal(location.origin + location.pathname, 'http://localhost:3000/');
  const fragment = new URLSearchParams(location.hash.slice(1));
  t.same([...fragment.keys()], ['access_token', 'expires_at', 'expires_in', 'refresh_token', 'sb', 'token_type', 'type'], 'sorted keys');
  t.equal(fragment.get('type'), 'signup');
  t.equal(fragment.get('token_type'), 'bearer');
  t.equal(fragment.get('expires_in'), '3600');
  const me = await api.request('GET', '/user', { token: fragment.get('access_token')! });
  t.equal(me.status, 200);
  t.type(me.body.email_confirmed_at, 'string');
  t.equal(me.body.user_metadata.email_verified, true);

  const again = await api.request('GET', link.pathname + link.search);
  t.equal(again.status, 303);
  t.equal(
    new URL(again.headers.get('location')!).hash,
    '#error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired&sb=',
    'a link works once',
  );

  const login = await api.request('POST', '/token?grant_type=password', { body: { email: 'ALICE@example.com', password: 'secret99' } });
  t.equal(login.status, 200, 'emails match case-insensitively');
});

t.test('redirect_to: allowed targets are kept, others fall back to SITE_URL', async (t) => {
  await signup({ email: 'redirect-ok@example.com', password: 'secret99' }, '/signup?redirect_to=https://app.example.com/welcome');
  const ok = new URL((await smtp.waitForMail('redirect-ok@example.com')).link!);
  t.equal(ok.searchParams.get('redirect_to'), 'https://app.example.com/welcome');
  await signup({ email: 'redirect-bad@example.com', password: 'secret99' }, '/signup?redirect_to=https://evil.example.net/steal');
  const bad = new URL((await smtp.waitForMail('redirect-bad@example.com')).link!);
  t.equal(bad.searchParams.get('redirect_to'), 'http://localhost:3000');
  const followed = await api.request('GET', ok.pathname + ok.search);
  t.match(followed.headers.get('location'), /^https:\/\/app\.example\.com\/welcome#access_token=/);
});

t.test('POST /verify with the code returns the session and its type', async (t) => {
  await signup({ email: 'code@example.com', password: 'secret99' });
  const code = (await smtp.waitForMail('code@example.com')).text.match(/\b(\d{6})\b/)![1];
  const wrong = await api.request('POST', '/verify', {
    body: { type: 'signup', email: 'code@example.com', token: code === '000000' ? '111111' : '000000' },
  });
  t.strictSame(wrong.body, { code: 403, error_code: 'otp_expired', msg: 'Token has expired or is invalid' });
  const res = await api.request('POST', '/verify', { body: { type: 'signup', email: 'Code@example.com', token: code } });
  t.equal(res.status, 200);
  t.equal(res.body.type, 'signup');
  t.same(Object.keys(res.body).sort(), ['access_token', 'expires_at', 'expires_in', 'refresh_token', 'token_type', 'type', 'user']);
});

t.test('duplicate of a confirmed user: a fabricated user of the same shape without identities, nothing sent', async (t) => {
  const real = await signup({ email: 'dup@example.com', password: 'secret99' });
  const link = new URL((await smtp.waitForMail('dup@example.com')).link!);
  await api.request('GET', link.pathname + link.search);
  const before = smtp.mails.length;
  // Each repeat as the first one after the interval: one within it is refused (its pretended send).
  const again = async (password: string) => {
    await forgetPretendedSends(api);
    return signup({ email: 'dup@example.com', password });
  };
  const fake = await again('other-pass1');
  t.equal(fake.status, 200);
  t.not(fake.body.id, real.body.id, 'a fabricated id');
  t.same(Object.keys(fake.body).sort(), Object.keys(real.body).sort(), 'the same keys as a real answer');
  t.strictSame(fake.body.identities, [], 'no identities: the signal auth-js documents for an existing address');
  t.same(Object.keys(fake.body.user_metadata).sort(), Object.keys(real.body.user_metadata).sort());
  // Times as a real answer's, which come from the database with microseconds: a fabricated user with
  // milliseconds only (three digits at most) would give itself away. One in a thousand has a fraction of
  // three digits or fewer by chance; three in a row, one in a billion.
  const fakes = [fake, await again('other-pass2'), await again('other-pass3')];
  t.ok(
    fakes.some((f) => /\.\d{4,6}Z$/.test(f.body.created_at as string)),
    `fabricated times carry microseconds: ${fakes.map((f) => f.body.created_at).join(', ')}`,
  );
  // And one time in all three, as in a real first answer (the same transaction's time).
  const sameTimes = (b: Record<string, unknown>) => b.created_at === b.updated_at && b.created_at === b.confirmation_sent_at;
  t.ok(sameTimes(real.body), `a real answer's times: ${real.body.created_at}, ${real.body.updated_at}, ${real.body.confirmation_sent_at}`);
  t.ok(fakes.every((f) => sameTimes(f.body)));
  t.equal(smtp.mails.length, before, 'no mail');
  t.equal(await userCount('dup@example.com'), 1);
  const audit = await api.db.query("select count(*) from audit_log_entries where payload->>'action' = 'user_repeated_signup'");
  t.equal(Number(audit.rows[0].count), 3, 'audited, each time');
});

t.test("an address held as another user's identity email is that user's duplicate, as the original", async (t) => {
  const owner = await signup({ email: 'own-b2@example.com', password: 'secret99' });
  await api.db.query('update users set email_confirmed_at = now() where id = $1', [owner.body.id]);
  await api.db.query(`insert into identities (provider_id, user_id, identity_data, provider) values ('gh-b', $1, $2, 'github')`, [
    owner.body.id,
    { sub: 'gh-b', email: 'gh-b@example.com' },
  ]);
  const before = smtp.mails.length;
  const res = await signup({ email: 'gh-b@example.com', password: 'secret99' });
  t.equal(res.status, 200);
  t.strictSame(res.body.identities, [], "the confirmed duplicate's answer");
  t.equal(await userCount('gh-b@example.com'), 0, 'no new user');
  t.equal(smtp.mails.length, before, 'nothing sent');
  const audit = await api.db.query(
    "select count(*) from audit_log_entries where payload->>'action' = 'user_repeated_signup' and payload->>'actor_id' = $1",
    [owner.body.id],
  );
  t.equal(Number(audit.rows[0].count), 1);
});

t.test('metadata at sign-up as the original: data joins the identity under keys it lacks, user_metadata is the same', async (t) => {
  const res = await signup({ email: 'meta@example.com', password: 'secret99', data: { full_name: 'A', email_verified: true, gone: null } });
  t.equal(res.status, 200);
  const identity = res.body.identities[0].identity_data;
  t.strictSame(identity, {
    sub: res.body.id,
    email: 'meta@example.com',
    email_verified: false,
    phone_verified: false,
    full_name: 'A',
    gone: null,
  });
  t.strictSame(res.body.user_metadata, {
    sub: res.body.id,
    email: 'meta@example.com',
    email_verified: false,
    phone_verified: false,
    full_name: 'A',
  });
  const phone = await signup({ phone: '+14155550190', password: 'secret99', data: { full_name: 'P' } });
  t.equal(phone.status, 200, phone.text);
  t.strictSame(
    phone.body.identities[0].identity_data,
    { sub: phone.body.id, email_verified: false, phone_verified: false, full_name: 'P' },
    'no phone key',
  );
  t.strictSame(phone.body.user_metadata, phone.body.identities[0].identity_data);
});

t.test('duplicate of an unconfirmed user re-sends within the frequency limit', async (t) => {
  const first = await signup({ email: 'pending@example.com', password: 'secret99' });
  await smtp.waitForMail('pending@example.com');
  const soon = await signup({ email: 'pending@example.com', password: 'secret99' });
  t.equal(soon.status, 429);
  t.equal(soon.body.error_code, 'over_email_send_rate_limit');
  t.match(soon.body.msg, /^For security purposes, you can only request this after (899|900) seconds\.$/);
  await api.db.query("update users set confirmation_sent_at = now() - interval '901 seconds' where id = $1", [first.body.id]);
  const later = await signup({ email: 'pending@example.com', password: 'different9' });
  t.equal(later.status, 200);
  t.equal(later.body.id, first.body.id, 'the same, real user');
  await smtp.waitForMail('pending@example.com');
});

t.test("a repeated sign-up of an unconfirmed address shows only that provider's identity, never the account's others", async (t) => {
  const first = await signup({ email: 'pending-linked@example.com', password: 'secret99' });
  await smtp.waitForMail('pending-linked@example.com');
  await api.db.query(
    `insert into identities (provider_id, user_id, identity_data, provider) values ('gh-4711', $1, '{"sub": "gh-4711", "name": "Private Name"}', 'github')`,
    [first.body.id],
  );
  await api.db.query("update users set confirmation_sent_at = now() - interval '901 seconds' where id = $1", [first.body.id]);
  const again = await signup({ email: 'pending-linked@example.com', password: 'secret99' });
  t.equal(again.status, 200);
  t.same(
    again.body.identities.map((i: { provider: string }) => i.provider),
    ['email'],
  );
  t.notMatch(JSON.stringify(again.body), 'Private Name');

  // An account an OAuth sign-in made, its address unverified by the provider: no email identity at all.
  const { rows } = await api.db.query(
    `insert into users (aud, role, email, raw_app_meta_data, raw_user_meta_data, confirmation_sent_at)
     values ('authenticated', 'authenticated', 'oauth-pending@example.com', '{"provider": "github", "providers": ["github"]}',
             '{"name": "Provider Claim", "email": "oauth-pending@example.com"}', now() - interval '1 hour') returning id`,
  );
  await api.db.query(
    `insert into identities (provider_id, user_id, identity_data, provider) values ('gh-4712', $1, '{"sub": "gh-4712", "name": "Provider Claim"}', 'github')`,
    [rows[0].id],
  );
  const oauthMade = await signup({ email: 'oauth-pending@example.com', password: 'secret99' });
  t.equal(oauthMade.status, 200);
  t.equal(oauthMade.body.id, rows[0].id);
  t.same(oauthMade.body.identities, [], 'no identity of another provider');
  t.same(oauthMade.body.user_metadata, {}, "none of the provider's claims");
});

t.test('simultaneous signups of one address create one user and never a 500', async (t) => {
  const answers = await Promise.all(Array.from({ length: 8 }, () => signup({ email: 'race@example.com', password: 'secret99' })));
  // A request that loses the insert race answers with the winner's user; one that starts after the
  // winner committed is a re-send inside the frequency limit (429), as a sequential duplicate would be.
  t.ok(
    answers.every((a) => a.status === 200 || a.status === 429),
    'only 200 or 429',
  );
  const created = answers.filter((a) => a.status === 200);
  t.ok(created.length >= 1);
  t.equal(new Set(created.map((a) => a.body.id)).size, 1, 'every success names the one user');
  for (const refused of answers.filter((a) => a.status === 429)) t.equal(refused.body.error_code, 'over_email_send_rate_limit');
  t.equal(await userCount('race@example.com'), 1);
  const mails = smtp.mails.filter((m) => m.to === 'race@example.com');
  t.equal(mails.length, 1, 'one confirmation mail');
});

t.test("an address held in another audience (X-JWT-AUD): a duplicate's answers, never a 500, nothing sent or written", async (t) => {
  // The unique indexes on email and phone span audiences, while users are looked up within one: the insert
  // finds the address taken by a user the request's audience cannot see.
  const real = await signup({ email: 'other-aud@example.com', password: 'secret99' });
  t.equal(real.status, 200);
  await smtp.waitForMail('other-aud@example.com');
  const headers = { 'X-JWT-AUD': 'another-audience' };
  const mails = smtp.mails.length;
  const users = await api.db.query('select count(*) from users');
  const audit = await api.db.query('select count(*) from audit_log_entries');
  for (const body of [
    { email: 'other-aud@example.com', password: 'secret99' },
    { email: 'OTHER-AUD@example.com', password: 'secret99' },
  ]) {
    // Each as a first request: a repeat within the interval is refused (send-interval-enumeration.test.ts).
    await forgetPretendedSends(api);
    const res = await api.request('POST', '/signup', { body, headers });
    t.equal(res.status, 200, 'a fabricated user, as for a confirmed duplicate');
    t.not(res.body.id, real.body.id);
    t.equal(res.body.aud, 'another-audience');
    t.strictSame(res.body.identities, []);
  }
  for (const path of ['/otp', '/magiclink']) {
    await forgetPretendedSends(api);
    const res = await api.request('POST', path, { body: { email: 'other-aud@example.com' }, headers });
    t.strictSame({ status: res.status, body: res.body }, { status: 200, body: {} }, `${path}: the usual answer`);
  }
  t.equal(smtp.mails.length, mails, 'no mail');
  t.same((await api.db.query('select count(*) from users')).rows, users.rows, 'no user');
  t.same(
    (await api.db.query('select count(*) from audit_log_entries')).rows,
    audit.rows,
    'no audit entry naming a user the audience cannot see',
  );

  await signup({ phone: '15557650000', password: 'secret99' });
  await sms.waitForMessage('+15557650000');
  const messages = sms.messages.length;
  const phone = await api.request('POST', '/signup', { body: { phone: '15557650000', password: 'secret99' }, headers });
  t.equal(phone.status, 200);
  t.strictSame(phone.body.identities, []);
  await forgetPretendedSends(api);
  const otp = await api.request('POST', '/otp', { body: { phone: '15557650000' }, headers });
  t.strictSame({ status: otp.status, body: otp.body }, { status: 200, body: {} });
  t.equal(sms.messages.length, messages, 'no SMS');
  t.equal(Number((await api.db.query("select count(*) from users where phone = '15557650000'")).rows[0].count), 1);
});

t.test('a repeated sign-up whose user is deleted meanwhile signs the address up anew, never a 500', async (t) => {
  for (const soft of [false, true]) {
    const email = `deleted-at-resignup-${soft ? 'soft' : 'hard'}@example.com`;
    const first = await signup({ email, password: 'secret99' });
    await smtp.waitForMail(email);
    // The repeat finds the unconfirmed user, then waits for its row behind an admin's deletion.
    const again = await behindDeletion(api, first.body.id, soft, () => signup({ email, password: 'secret99' }));
    const label = soft ? 'soft-deleted' : 'deleted';
    t.equal(again.status, 200, label);
    t.not(again.body.id, first.body.id, `${label}: a new user`);
    t.equal(again.body.email, email);
    t.equal(await userCount(email), 1, `${label}: the one live user holding the address`);
    await smtp.waitForMail(email);
  }
});

t.test('a mail that cannot be sent fails the request and leaves no user behind', async (t) => {
  smtp.failNext(554, 'mailbox unavailable');
  const res = await signup({ email: 'bounce@example.com', password: 'secret99' });
  t.equal(res.status, 500);
  t.equal(res.body.error_code, 'unexpected_failure');
  t.equal(res.body.msg, 'Error sending confirmation email');
  t.type(res.body.error_id, 'string');
  t.equal(await userCount('bounce@example.com'), 0);
});

t.test('phone signup: SMS through the gateway, then POST /verify type sms', async (t) => {
  const res = await signup({ phone: '+1 555 123 4567', password: 'secret99' });
  t.equal(res.status, 200);
  t.equal(res.body.phone, '15551234567', 'stored as E.164 digits');
  t.match(res.body.app_metadata, { provider: 'phone', providers: ['phone'] });
  const message = await sms.waitForMessage('+15551234567');
  t.equal(message.gateway, 'twilio');
  const code = message.body.match(/^Your code is (\d{6})$/)![1];
  const wrong = await api.request('POST', '/verify', {
    body: { type: 'sms', phone: '15551234567', token: code === '123456' ? '654321' : '123456' },
  });
  t.strictSame(wrong.body, { code: 403, error_code: 'otp_expired', msg: 'Token has expired or is invalid' });
  const ok = await api.request('POST', '/verify', { body: { type: 'sms', phone: '+15551234567', token: code } });
  t.equal(ok.status, 200);
  t.notOk('type' in ok.body, 'the phone variant has no type');
  t.type(ok.body.user.phone_confirmed_at, 'string');
  const login = await api.request('POST', '/token?grant_type=password', { body: { phone: '+15551234567', password: 'secret99' } });
  t.equal(login.status, 200);
});

t.test('a failing SMS gateway is 422 sms_send_failed and leaves no user', async (t) => {
  sms.failNext('twilio');
  const res = await signup({ phone: '+15557654321', password: 'secret99' });
  t.equal(res.status, 422);
  t.equal(res.body.error_code, 'sms_send_failed');
  t.match(res.body.msg, /^Error sending confirmation OTP to provider: /);
  const rows = await api.db.query("select count(*) from users where phone = '15557654321'");
  t.equal(Number(rows.rows[0].count), 0);
});

t.test('a confirmation link expires after MAILER_OTP_EXP (default one day)', async (t) => {
  const res = await signup({ email: 'late@example.com', password: 'secret99' });
  const link = new URL((await smtp.waitForMail('late@example.com')).link!);
  await api.db.query("update one_time_tokens set created_at = now() - interval '86401 seconds' where user_id = $1", [res.body.id]);
  const late = await api.request('GET', link.pathname + link.search);
  t.equal(
    new URL(late.headers.get('location')!).hash,
    '#error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired&sb=',
  );
  const post = await api.request('POST', '/verify', { body: { type: 'signup', token_hash: link.searchParams.get('token') } });
  t.strictSame(post.body, { code: 403, error_code: 'otp_expired', msg: 'Email link is invalid or has expired' });
  const user = await api.db.query('select email_confirmed_at from users where id = $1', [res.body.id]);
  t.equal(user.rows[0].email_confirmed_at, null, 'still unconfirmed');
});

const actions = async (userId: string) =>
  (
    await api.db.query(
      `select payload ->> 'action' as action, payload -> 'traits' as traits from audit_log_entries
                         where payload ->> 'actor_id' = $1 order by created_at, payload ->> 'action'`,
      [userId],
    )
  ).rows;

t.test("the audit trail of sign-ups left to confirm, as the original's: confirmation requested, then signed up at /verify", async (t) => {
  const first = await signup({ email: 'audited-pending@example.com', password: 'secret99' });
  t.equal(first.status, 200);
  await smtp.waitForMail('audited-pending@example.com');
  t.same(await actions(first.body.id), [{ action: 'user_confirmation_requested', traits: { provider: 'email' } }]);
  await api.db.query("update users set confirmation_sent_at = now() - interval '901 seconds' where id = $1", [first.body.id]);
  t.equal((await signup({ email: 'audited-pending@example.com', password: 'secret99' })).status, 200);
  await smtp.waitForMail('audited-pending@example.com');
  t.same(
    (await actions(first.body.id)).map((r) => r.action),
    ['user_confirmation_requested', 'user_confirmation_requested'],
    'a repeat for the pending address is one more request, never a second sign-up',
  );
  const phone = await signup({ phone: '15557654321', password: 'secret99' });
  t.equal(phone.status, 200);
  t.same(await actions(phone.body.id), [{ action: 'user_confirmation_requested', traits: { provider: 'phone' } }]);
});

t.test('an autoconfirmed phone sign-up is signed up with its channel, then logged in', async (t) => {
  const auto = await startTestService({
    AUTH_EXTERNAL_PHONE_ENABLED: 'true',
    AUTH_SMS_AUTOCONFIRM: 'true',
    AUTH_SMS_PROVIDER: 'twilio',
    AUTH_SMS_TWILIO_API_BASE_URL: sms.baseUrl,
    AUTH_SMS_TWILIO_ACCOUNT_SID: 'AC123',
    AUTH_SMS_TWILIO_AUTH_TOKEN: 'tok',
    AUTH_SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG1',
  });
  t.teardown(() => auto.stop());
  const res = await auto.request('POST', '/signup', { body: { phone: '15550001111', password: 'secret99' } });
  t.equal(res.status, 200);
  t.ok(res.body.access_token);
  const { rows } = await auto.db.query(
    `select payload ->> 'action' as action, payload -> 'traits' as traits from audit_log_entries
      where payload ->> 'actor_id' = $1 order by payload ->> 'action' desc`,
    [res.body.user.id],
  );
  t.same(rows, [
    { action: 'user_signedup', traits: { provider: 'phone', channel: 'sms' } },
    { action: 'login', traits: { provider: 'phone' } },
  ]);
});

t.test("a sign-up with an invited address learns nothing of the invitation's data", async (t) => {
  const invited = await api.request('POST', '/invite', {
    token: await adminToken(),
    body: { email: 'invited-secret@example.com', data: { org: 'acme', plan: 'enterprise' } },
  });
  t.equal(invited.status, 200);
  await smtp.waitForMail('invited-secret@example.com');
  await api.db.query("update users set confirmation_sent_at = now() - interval '901 seconds' where id = $1", [invited.body.id]);
  const res = await signup({ email: 'invited-secret@example.com', password: 'secret99' });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.id, invited.body.id);
  t.same(res.body.user_metadata, {}, 'no metadata the admin attached');
  t.same(res.body.identities, [], 'no identities');
  await smtp.waitForMail('invited-secret@example.com');
});

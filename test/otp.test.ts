// POST /otp (REFERENCE §2.4): email → the magic link of /magiclink; phone → an SMS code through the
// gateway fake; create_user as the decisions table says.
import t from 'tap';
import { startMailStack, linkOf, codeOf } from './helpers/passwordless.js';
import { adminToken } from './helpers/admin.js';
import { behindDeletion } from './helpers/row-lock.js';

const stack = await startMailStack({}, { sms: true });
const { api, smtp } = stack;
const sms = stack.sms!;
t.teardown(() => stack.stop());

const smsCode = (body: string) => /(\d{6})/.exec(body)![1];

t.test('email: a new address is signed up with data and gets the confirmation mail with link and code', async (t) => {
  const res = await api.request('POST', '/otp', { body: { email: 'otto@example.com', data: { name: 'Otto' } } });
  t.equal(res.status, 200);
  t.strictSame(res.body, {});
  const mail = await smtp.waitForMail('otto@example.com');
  t.equal(linkOf(mail).type, 'signup');
  const verified = await api.request('POST', '/verify', { body: { type: 'email', email: 'otto@example.com', token: codeOf(mail) } });
  t.equal(verified.status, 200);
  t.equal(verified.body.user.user_metadata.name, 'Otto');
  t.ok(verified.body.user.email_confirmed_at);
});

t.test('email: a confirmed user gets a magic link whose code verifies as type email', async (t) => {
  const res = await api.request('POST', '/otp', { body: { email: 'otto@example.com', create_user: false } });
  t.equal(res.status, 200);
  const mail = await smtp.waitForMail('otto@example.com');
  t.equal(mail.subject, 'Your Magic Link');
  const verified = await api.request('POST', '/verify', { body: { type: 'email', email: 'otto@example.com', token: codeOf(mail) } });
  t.equal(verified.status, 200);
  t.equal(verified.body.type, 'email');
});

t.test('create_user false with an unknown address: 422 otp_disabled and nothing sent', async (t) => {
  const before = smtp.mails.length;
  const res = await api.request('POST', '/otp', { body: { email: 'stranger@example.com', create_user: false } });
  t.equal(res.status, 422);
  t.strictSame(res.body, { code: 422, error_code: 'otp_disabled', msg: 'Signups not allowed for otp' });
  const phone = await api.request('POST', '/otp', { body: { phone: '+15550001111', create_user: false } });
  t.strictSame(phone.body, { code: 422, error_code: 'otp_disabled', msg: 'Signups not allowed for otp' });
  for (const address of [{ email: 'not-an-address' }, { phone: '12' }]) {
    const malformed = await api.request('POST', '/otp', { body: { ...address, create_user: false } });
    t.strictSame(
      malformed.body,
      { code: 422, error_code: 'otp_disabled', msg: 'Signups not allowed for otp' },
      'a malformed address names nobody',
    );
  }
  t.equal(smtp.mails.length, before);
  t.equal((await api.db.query("select 1 from users where email = 'stranger@example.com' or phone = '15550001111'")).rowCount, 0);
});

t.test('phone: a new number is signed up silently; the SMS code confirms it', async (t) => {
  const res = await api.request('POST', '/otp', { body: { phone: '+1 555 000 2222' } });
  t.equal(res.status, 200);
  t.strictSame(res.body, {});
  const message = await sms.waitForMessage('15550002222');
  const verified = await api.request('POST', '/verify', { body: { type: 'sms', phone: '+15550002222', token: smsCode(message.body) } });
  t.equal(verified.status, 200);
  t.equal(verified.body.user.phone, '15550002222');
  t.ok(verified.body.user.phone_confirmed_at);
  t.notOk('type' in verified.body, 'phone verifications return no type');
});

t.test('phone: a confirmed user gets a code and the gateway message id', async (t) => {
  await api.db.query("update users set confirmation_sent_at = now() - interval '1 hour' where phone = '15550002222'");
  const res = await api.request('POST', '/otp', { body: { phone: '+15550002222', create_user: false } });
  t.equal(res.status, 200);
  const message = await sms.waitForMessage('15550002222');
  t.strictSame(res.body, { message_id: message.id });
  const { rows } = await api.db.query(
    `select payload from audit_log_entries a join users u on u.id::text = a.payload->>'actor_id' where u.phone = '15550002222' order by a.created_at`,
  );
  t.match(rows.at(-1).payload, { action: 'user_recovery_requested', traits: { channel: 'sms' } }, 'with its channel, as the original');
  const again = await api.request('POST', '/otp', { body: { phone: '+15550002222' } });
  t.equal(again.status, 429);
  t.equal(again.body.error_code, 'over_sms_send_rate_limit');
  const verified = await api.request('POST', '/verify', { body: { type: 'sms', phone: '+15550002222', token: smsCode(message.body) } });
  t.equal(verified.status, 200);
});

t.test('phone: a user deleted while the request waits for its row: the number is signed up, as an unknown one is', async (t) => {
  const admin = await adminToken();
  for (const soft of [false, true]) {
    const phone = soft ? '15550009992' : '15550009991';
    const created = await api.request('POST', '/admin/users', { token: admin, body: { phone, phone_confirm: true } });
    const id = created.body.id;
    // The deletion waits for the row first; /otp, past its lookup, behind it.
    const res = await behindDeletion(api, id, soft, () => api.request('POST', '/otp', { body: { phone } }));
    t.strictSame([res.status, res.body], [200, {}], soft ? 'soft-deleted' : 'deleted');
    await sms.waitForMessage(phone);
    t.equal(sms.messages.filter((m) => m.to.endsWith(phone)).length, 1, 'the code an unknown number gets');
    const users = await api.db.query('select id, phone_confirmed_at from users where phone = $1', [phone]);
    t.equal(users.rowCount, 1, 'one new user holds the number');
    t.not(users.rows[0].id, id);
    t.equal(users.rows[0].phone_confirmed_at, null);
  }
});

t.test('phone: a number is kept as typed, a trunk 0 too, so rows read as the original wrote them', async (t) => {
  const res = await api.request('POST', '/otp', { body: { phone: '+44 020 7946 0999' } });
  t.equal(res.status, 200, res.text);
  const message = await sms.waitForMessage('4402079460999');
  const { rows } = await api.db.query("select phone from users where phone like '44%'");
  t.same(rows, [{ phone: '4402079460999' }], 'not rewritten to 442079460999 by the phone library');
  const verified = await api.request('POST', '/verify', { body: { type: 'sms', phone: '+4402079460999', token: smsCode(message.body) } });
  t.equal(verified.status, 200, verified.text);
});

t.test('phone: a number the original stored that libphonenumber finds impossible still signs in, but none is signed up', async (t) => {
  const admin = await adminToken();
  const created = await api.request('POST', '/admin/users', {
    token: admin,
    body: { phone: '+15550003333', password: 'Secret-password-1', phone_confirm: true },
  });
  t.equal(created.status, 200, created.text);
  // As an adopted row of the original holds it: its only check is 2–15 digits.
  await api.db.query("update users set phone = '1234567890', confirmation_sent_at = now() - interval '1 hour' where id = $1", [
    created.body.id,
  ]);
  const signedIn = await api.request('POST', '/token?grant_type=password', {
    body: { phone: '+1234567890', password: 'Secret-password-1' },
  });
  t.equal(signedIn.status, 200, signedIn.text);
  t.equal(signedIn.body.user.id, created.body.id);

  const otp = await api.request('POST', '/otp', { body: { phone: '+1234567890', create_user: false } });
  t.equal(otp.status, 200, otp.text);
  const message = await sms.waitForMessage('1234567890');
  const verified = await api.request('POST', '/verify', { body: { type: 'sms', phone: '1234567890', token: smsCode(message.body) } });
  t.equal(verified.status, 200, verified.text);
  t.equal(verified.body.user.id, created.body.id);

  for (const path of ['/otp', '/signup']) {
    const fresh = await api.request('POST', path, { body: { phone: '+1987654320', password: 'Secret-password-1' } });
    t.same(
      [fresh.status, fresh.body.msg],
      [400, 'Invalid phone number format (E.164 required)'],
      `${path}: no new user gets an impossible number`,
    );
  }
});

t.test('autoconfirm: an unconfirmed user gets one code or link, as the original, and using it confirms the address', async (t) => {
  const auto = await startMailStack({ AUTH_SMS_AUTOCONFIRM: 'true', AUTH_MAILER_AUTOCONFIRM: 'true' }, { sms: true });
  t.teardown(() => auto.stop());
  const fresh = await auto.api.request('POST', '/otp', { body: { phone: '+15550006666' } });
  t.equal(fresh.status, 200, fresh.text);
  const first = await auto.sms!.waitForMessage('15550006666');
  t.strictSame(fresh.body, { message_id: first.id }, 'a new number is confirmed by its sign-up, then sent its code');
  // An unconfirmed user, as one from before autoconfirm was switched on.
  await auto.api.db.query("update users set phone_confirmed_at = null, confirmation_sent_at = null where phone = '15550006666'");
  const texts = auto.sms!.messages.length;
  const again = await auto.api.request('POST', '/otp', { body: { phone: '+15550006666' } });
  t.equal(again.status, 200, again.text);
  const code = await auto.sms!.waitForMessage('15550006666');
  t.strictSame(again.body, { message_id: code.id }, 'not a 429 for a second send');
  t.equal(auto.sms!.messages.length, texts + 1, 'one code');
  const verified = await auto.api.request('POST', '/verify', { body: { type: 'sms', phone: '15550006666', token: smsCode(code.body) } });
  t.equal(verified.status, 200, verified.text);
  t.ok(verified.body.user.phone_confirmed_at, 'the code confirms the number');

  const signedUp = await auto.api.request('POST', '/signup', { body: { email: 'late@example.com', password: 'Secret-password-1' } });
  t.equal(signedUp.status, 200, signedUp.text);
  // Sent a confirmation a moment ago: the magic link's interval is its own, as the original counts it.
  await auto.api.db.query("update users set email_confirmed_at = null, confirmation_sent_at = now() where email = 'late@example.com'");
  const mails = auto.smtp.mails.length;
  const link = await auto.api.request('POST', '/otp', { body: { email: 'late@example.com' } });
  t.equal(link.status, 200, link.text);
  const mail = await auto.smtp.waitForMail('late@example.com');
  t.equal(mail.subject, 'Your Magic Link');
  t.equal(auto.smtp.mails.length, mails + 1, 'the magic link alone, no confirmation beside it');
  const used = await auto.api.request('POST', '/verify', { body: { type: 'email', email: 'late@example.com', token: codeOf(mail) } });
  t.equal(used.status, 200, used.text);
  t.ok(used.body.user.email_confirmed_at, 'following it confirms the address');
});

t.test("validation errors in the original's order", async (t) => {
  const cases: Array<[unknown, number, string, string]> = [
    [
      { email: 'a@example.com', phone: '+15550003333' },
      400,
      'validation_failed',
      'Only an email address or phone number should be provided',
    ],
    [{ email: 'a@example.com', channel: 'sms' }, 400, 'validation_failed', 'Channel should only be specified with Phone OTP'],
    [{}, 400, 'validation_failed', 'One of email or phone must be set'],
    [
      { email: 'a@example.com', code_challenge_method: 's256' },
      400,
      'validation_failed',
      'PKCE flow requires code_challenge_method and code_challenge',
    ],
    [{ phone: '12' }, 400, 'validation_failed', 'Invalid phone number format (E.164 required)'],
    [{ email: 'bad' }, 400, 'validation_failed', 'Unable to validate email address: invalid format'],
    [
      { phone: '+15550003333', channel: 'pigeon' },
      400,
      'validation_failed',
      "Invalid channel, supported values are 'sms' or 'whatsapp'. 'whatsapp' is only supported if Twilio or Twilio Verify is used as the provider.",
    ],
  ];
  for (const [body, status, code, msg] of cases) {
    const res = await api.request('POST', '/otp', { body });
    t.strictSame({ status: res.status, body: res.body }, { status, body: { code: status, error_code: code, msg } }, JSON.stringify(body));
  }
});

t.test('phone provider off: 400 phone_provider_disabled "Unsupported phone provider"', async (t) => {
  const off = await (await import('./helpers/server.js')).startTestService();
  t.teardown(() => off.stop());
  const res = await off.request('POST', '/otp', { body: { phone: '+15550004444' } });
  t.strictSame(res.body, { code: 400, error_code: 'phone_provider_disabled', msg: 'Unsupported phone provider' });
});

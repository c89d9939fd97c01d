// POST /resend (REFERENCE §2.7, SPEC transitions table): signup, sms, email_change and phone_change codes
// are sent again (mails and SMS received here); unknown users and nothing pending answer {} and send nothing.
import t from 'tap';
import { startMailStack } from './helpers/passwordless.js';
import { uniqueEmail } from './helpers/accounts.js';
import { codeIn, confirmedUser, PASSWORD, pathOf } from './helpers/users.js';

const stack = await startMailStack({ AUTH_RATE_LIMIT_EMAIL_SENT: '1000', AUTH_RATE_LIMIT_SMS_SENT: '1000' }, { sms: true });
const { api, smtp } = stack;
const sms = stack.sms!;
t.teardown(() => stack.stop());

const resend = (body: unknown) => api.request('POST', '/resend', { body });
const age = (userId: string, column: string) =>
  api.db.query(`update users set ${column} = now() - interval '1 day' where id = $1`, [userId]);
const bad = (msg: string) => ({ code: 400, error_code: 'validation_failed', msg });

t.test("the original's validation messages", async (t) => {
  t.strictSame(
    (await resend({ type: 'recovery', email: 'a@example.com' })).body,
    bad('Missing one of these types: signup, email_change, sms, phone_change'),
  );
  t.strictSame((await resend({ type: 'signup', phone: '+14155550100' })).body, bad('Type provided requires an email address'));
  t.strictSame((await resend({ type: 'sms', email: 'a@example.com' })).body, bad('Type provided requires a phone number'));
  t.strictSame(
    (await resend({ type: 'email_change', email: 'a@example.com', phone: '+14155550100' })).body,
    bad('Only an email address or phone number should be provided.'),
  );
  t.strictSame((await resend({ type: 'email_change' })).body, bad('Missing email address or phone number'));
  // PKCE fields are read for the mail types only, and before the address, as the original reads them.
  const pkce = { code_challenge: 'short', code_challenge_method: 's256' };
  t.strictSame((await resend({ type: 'signup', ...pkce })).body, bad('code challenge has to be between 43 and 128 characters'));
  t.strictSame((await resend({ type: 'sms', phone: '+14155550197', ...pkce })).body, {}, 'a phone type ignores them');
});

t.test('unknown users and confirmed addresses answer {} and nothing is sent', async (t) => {
  const before = smtp.mails.length + sms.messages.length;
  t.strictSame((await resend({ type: 'signup', email: uniqueEmail('nobody') })).body, {});
  t.strictSame((await resend({ type: 'sms', phone: '+14155550199' })).body, {});
  t.strictSame((await resend({ type: 'email_change', email: uniqueEmail('nobody') })).body, {});
  t.strictSame((await resend({ type: 'phone_change', phone: '+14155550198' })).body, {});
  const confirmed = await confirmedUser(api);
  const mailsNow = smtp.mails.length + sms.messages.length;
  t.strictSame((await resend({ type: 'signup', email: confirmed.user.email })).body, {}, 'confirmed: nothing to resend');
  t.strictSame((await resend({ type: 'email_change', email: confirmed.user.email })).body, {}, 'no pending change');
  t.equal(smtp.mails.length + sms.messages.length, mailsNow, 'no mail or SMS');
  t.ok(mailsNow - before <= 1, "only the confirmed user's own signup mail");
});

t.test('signup: a new confirmation mail whose link confirms; frequency applies', async (t) => {
  const email = uniqueEmail('pending');
  const signup = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
  await smtp.waitForMail(email);
  const tooSoon = await resend({ type: 'signup', email });
  t.equal(tooSoon.status, 429);
  t.equal(tooSoon.body.error_code, 'over_email_send_rate_limit');
  await age(signup.body.id, 'confirmation_sent_at');
  t.strictSame((await resend({ type: 'signup', email })).body, {});
  const mail = await smtp.waitForMail(email);
  t.match(mail.link, /type=signup/);
  const followed = await api.request('GET', pathOf(mail.link!));
  t.match(followed.headers.get('location'), /#access_token=/);
});

t.test("sms: a new code, with the gateway's message id", async (t) => {
  const phone = '14155550111';
  const signup = await api.request('POST', '/signup', { body: { phone: `+${phone}`, password: PASSWORD } });
  await sms.waitForMessage(phone);
  await age(signup.body.id, 'confirmation_sent_at');
  const res = await resend({ type: 'sms', phone: `+${phone}` });
  const message = await sms.waitForMessage(phone);
  t.strictSame(res.body, { message_id: message.id });
  const { rows } = await api.db.query(`select payload from audit_log_entries where payload->>'actor_id' = $1 order by created_at`, [
    signup.body.id,
  ]);
  t.equal(rows.at(-1).payload.action, 'user_recovery_requested', 'audited as the original audits a resent phone code');
  const verified = await api.request('POST', '/verify', { body: { type: 'sms', phone: `+${phone}`, token: codeIn(message.body) } });
  t.equal(verified.status, 200);
});

t.test('email_change: both mails again, by the current address; the new one finds no one, as the original', async (t) => {
  const s = await confirmedUser(api);
  const newEmail = uniqueEmail('change');
  await api.request('PUT', '/user', { token: s.access_token, body: { email: newEmail } });
  const changeMail = (to: string) => smtp.waitForMail((m) => m.to === to && m.subject === 'Confirm Email Change');
  await changeMail(newEmail);
  await changeMail(s.user.email);
  await age(s.user.id, 'email_change_sent_at');
  const before = smtp.mails.length;
  t.strictSame((await resend({ type: 'email_change', email: newEmail })).body, {});
  t.equal(smtp.mails.length, before, 'nothing sent for the pending address');
  t.strictSame((await resend({ type: 'email_change', email: s.user.email })).body, {});
  const toNew = await changeMail(newEmail);
  const toCurrent = await changeMail(s.user.email);
  await api.request('GET', pathOf(toNew.link!));
  const done = await api.request('GET', pathOf(toCurrent.link!));
  t.match(done.headers.get('location'), /#access_token=/, 'the resent links complete the change');
  const row = await api.db.query('select email from users where id = $1', [s.user.id]);
  t.equal(row.rows[0].email, newEmail);
});

t.test('phone_change: the code again to the new number, asked for by the current one', async (t) => {
  const s = await confirmedUser(api);
  const current = '14155550121';
  await api.db.query('update users set phone = $2, phone_confirmed_at = now() where id = $1', [s.user.id, current]);
  const phone = '14155550122';
  await api.request('PUT', '/user', { token: s.access_token, body: { phone: `+${phone}` } });
  await sms.waitForMessage(phone);
  await age(s.user.id, 'phone_change_sent_at');
  const before = sms.messages.length;
  t.strictSame((await resend({ type: 'phone_change', phone: `+${phone}` })).body, {}, 'the pending number finds no one');
  t.equal(sms.messages.length, before, 'nothing sent');
  const res = await resend({ type: 'phone_change', phone: `+${current}` });
  const message = await sms.waitForMessage(phone);
  t.strictSame(res.body, { message_id: message.id });
  const ok = await api.request('POST', '/verify', { body: { type: 'phone_change', phone: `+${phone}`, token: codeIn(message.body) } });
  t.equal(ok.body.user.phone, phone);
});

// EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES: with a list set, mail goes to listed addresses only (labels and case
// aside). Anything else is 400 email_address_not_authorized before a token is issued or a mail sent, and the
// request leaves nothing behind; a notification to such an address is skipped and the change stands.
import t from 'tap';
import { adminToken } from './helpers/admin.js';
import { authClient } from './helpers/auth-client.js';
import { signIn } from './helpers/accounts.js';
import { startTestService, type TestService } from './helpers/server.js';
import { startSmtpServer } from './helpers/smtp.js';

const smtp = await startSmtpServer();
t.teardown(() => smtp.close());

let api: TestService;
t.before(async () => {
  api = await startTestService({
    AUTH_SMTP_HOST: '127.0.0.1',
    AUTH_SMTP_PORT: String(smtp.port),
    AUTH_SMTP_ADMIN_EMAIL: 'noreply@example.com',
    AUTH_SMTP_MAX_FREQUENCY: '1ms',
    AUTH_EXTERNAL_EMAIL_AUTHORIZED_ADDRESSES: 'team@example.com,Boss@Example.com,old-team@example.com,chief@example.com',
    AUTH_MAILER_NOTIFICATIONS_PASSWORD_CHANGED_ENABLED: 'true',
  });
});
t.teardown(() => api.stop());

const refused = (address: string) => ({
  code: 400,
  error_code: 'email_address_not_authorized',
  msg: `Email address "${address}" cannot be used as it is not authorized`,
});
const mailsTo = (address: string) => smtp.mails.filter((m) => m.envelopeTo.includes(address)).length;
const usersWith = async (email: string) =>
  Number((await api.db.query('select count(*) from users where email = $1', [email])).rows[0].count);

/** A confirmed user made by the admin API, which sends no mail, so any address can hold one. */
async function confirmedUser(email: string): Promise<string> {
  const res = await api.request('POST', '/admin/users', {
    body: { email, password: 'Secret-password-1', email_confirm: true },
    headers: { authorization: `Bearer ${await adminToken()}` },
  });
  if (res.status !== 200) throw new Error(`admin create failed: ${res.text}`);
  return (await signIn(api, email)).access_token;
}

t.test('listed addresses get their mail, with a +label and in any case', async (t) => {
  t.equal(
    (await api.request('POST', '/signup', { body: { email: 'team+signup@example.com', password: 'Secret-password-1' } })).status,
    200,
  );
  t.ok(await smtp.waitForMail('team+signup@example.com'));
  t.equal((await api.request('POST', '/magiclink', { body: { email: 'BOSS@example.com' } })).status, 200);
  t.ok(await smtp.waitForMail('boss@example.com'));
});

t.test('sign-up, magic link and OTP to another address are refused and leave nothing behind', async (t) => {
  const client = authClient(api.url);
  const { error } = await client.signUp({ email: 'stranger@example.com', password: 'Secret-password-1' });
  t.match(error, { status: 400, code: 'email_address_not_authorized' }, 'auth-js reads the refusal');
  t.strictSame(
    (await api.request('POST', '/signup', { body: { email: 'stranger@example.com', password: 'Secret-password-1' } })).body,
    refused('stranger@example.com'),
  );
  t.strictSame(
    (await api.request('POST', '/otp', { body: { email: 'otp-stranger@example.com' } })).body,
    refused('otp-stranger@example.com'),
  );
  t.strictSame((await api.request('POST', '/magiclink', { body: { email: 'team@example.org' } })).body, refused('team@example.org'));
  for (const email of ['stranger@example.com', 'otp-stranger@example.com', 'team@example.org']) {
    t.equal(await usersWith(email), 0, `no user left for ${email}`);
    t.equal(mailsTo(email), 0, `no mail to ${email}`);
  }
});

t.test('an email change is refused, before either mail, when the new or the current address is not listed', async (t) => {
  const team = await confirmedUser('team@example.com');
  const toStranger = await api.request('PUT', '/user', {
    body: { email: 'stranger2@example.com' },
    headers: { authorization: `Bearer ${team}` },
  });
  t.strictSame(toStranger.body, refused('stranger2@example.com'));

  // A user from before the list (made by the admin here) cannot be written to, so a secure change cannot start.
  const outsider = await confirmedUser('outsider@example.net');
  const toChief = await api.request('PUT', '/user', {
    body: { email: 'chief@example.com' },
    headers: { authorization: `Bearer ${outsider}` },
  });
  t.strictSame(toChief.body, refused('outsider@example.net'));

  const pending = await api.db.query(
    "select email, email_change from users where email in ('team@example.com', 'outsider@example.net') order by email",
  );
  t.strictSame(
    pending.rows.map((r) => [r.email, r.email_change]),
    [
      ['outsider@example.net', null],
      ['team@example.com', null],
    ],
    'no change pending',
  );
  for (const address of ['stranger2@example.com', 'chief@example.com', 'team@example.com', 'outsider@example.net']) {
    t.equal(mailsTo(address), 0, `no mail to ${address}`);
  }
});

t.test('a notification to an unlisted address is skipped and the change stands', async (t) => {
  const outsider = await confirmedUser('outsider2@example.net');
  const res = await api.request('PUT', '/user', { body: { password: 'New-password-2' }, headers: { authorization: `Bearer ${outsider}` } });
  t.equal(res.status, 200);
  t.equal(
    (await api.request('POST', '/token?grant_type=password', { body: { email: 'outsider2@example.net', password: 'New-password-2' } }))
      .status,
    200,
  );
  t.equal(mailsTo('outsider2@example.net'), 0);

  // The same change for a listed address is notified: the skip above is the list's doing.
  const listed = await confirmedUser('old-team@example.com');
  t.equal(
    (await api.request('PUT', '/user', { body: { password: 'New-password-2' }, headers: { authorization: `Bearer ${listed}` } })).status,
    200,
  );
  t.match((await smtp.waitForMail('old-team@example.com')).subject, /password/i);
});

// SMTP_USER / SMTP_PASS never cross the network in a plaintext SMTP session (docs/one-time-codes-and-mail.md#delivery).
// The relay here is a real SMTP server without STARTTLS that accepts any login, as a misconfigured relay
// (or one whose STARTTLS a man in the middle strips) would. It listens on 127.0.0.2: a loopback address,
// but not one of the names the original (Go's smtp.PlainAuth) trusts with a password in clear.
import t, { type Test } from 'tap';
import { loadConfig } from '../dist/server/config/load.js';
import { createMailer, type MailVars } from '../dist/server/delivery/mail/mailer.js';
import { captureLog } from './helpers/log.js';
import { startSmtpServer } from './helpers/smtp.js';
import { startTestService } from './helpers/server.js';
import { PASSWORD } from './helpers/users.js';

const relay = await startSmtpServer({ host: '127.0.0.2' });
const local = await startSmtpServer();
t.teardown(async () => {
  await relay.close();
  await local.close();
});

const vars: MailVars = {
  SiteURL: 'http://localhost:3000',
  Email: '',
  ConfirmationURL: '',
  Token: '123456',
  TokenHash: 'h',
  RedirectTo: '',
  Data: {},
};

function mailer(t: Test, host: string, port: number, login: Record<string, string>) {
  const config = loadConfig({
    env: {
      AUTH_SMTP_HOST: host,
      AUTH_SMTP_PORT: String(port),
      AUTH_SMTP_ADMIN_EMAIL: 'admin@portcullis.test',
      AUTH_SITE_URL: 'http://localhost:3000',
      AUTH_API_EXTERNAL_URL: 'http://localhost:9999',
      ...login,
    },
    envFile: null,
  });
  const m = createMailer(config, captureLog().log);
  t.teardown(() => m.close());
  return m;
}

const LOGIN = { AUTH_SMTP_USER: 'mailer', AUTH_SMTP_PASS: 's3cret' };

t.test('a login to a remote relay that offers no STARTTLS is never sent: the mail fails instead', async (t) => {
  await t.rejects(mailer(t, '127.0.0.2', relay.port, LOGIN).send('magicLink', 'remote@example.com', vars), { name: 'MailSendError' });
  t.strictSame(relay.logins, [], 'the relay never saw the password');
  t.equal(relay.mails.length, 0);
});

t.test('without a login there is nothing to protect: the mail goes, as before', async (t) => {
  await mailer(t, '127.0.0.2', relay.port, {}).send('magicLink', 'no-login@example.com', vars);
  t.equal((await relay.waitForMail('no-login@example.com')).auth, null);
});

t.test('a relay on localhost may take the login in clear, as the original allows', async (t) => {
  await mailer(t, '127.0.0.1', local.port, LOGIN).send('magicLink', 'local@example.com', vars);
  t.same((await local.waitForMail('local@example.com')).auth, { username: 'mailer', password: 's3cret' });
});

t.test('a sign-up whose mail cannot go is the failed send’s 500 and leaves no user', async (t) => {
  const api = await startTestService({
    AUTH_SMTP_HOST: '127.0.0.2',
    AUTH_SMTP_PORT: String(relay.port),
    AUTH_SMTP_ADMIN_EMAIL: 'noreply@example.com',
    AUTH_MAILER_AUTOCONFIRM: 'false',
    ...LOGIN,
  });
  t.teardown(() => api.stop());
  const email = 'plaintext-signup@example.com';
  const res = await api.request('POST', '/signup', { body: { email, password: PASSWORD } });
  t.same([res.status, res.body.error_code, res.body.msg], [500, 'unexpected_failure', 'Error sending confirmation email']);
  t.equal((await api.db.query('select 1 from users where email = $1', [email])).rowCount, 0);
  t.strictSame(relay.logins, []);
});

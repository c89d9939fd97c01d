// End to end through the official client: signUp → the confirmation link → signInWithPassword → getUser.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { startSmtpServer } from './helpers/smtp.js';
import { authClient } from './helpers/auth-client.js';

const smtp = await startSmtpServer();
const api = await startTestService({
  AUTH_SMTP_HOST: '127.0.0.1',
  AUTH_SMTP_PORT: String(smtp.port),
  AUTH_SMTP_ADMIN_EMAIL: 'noreply@example.com',
});
t.teardown(async () => {
  await api.stop();
  await smtp.close();
});

t.test('signUp, confirm, signInWithPassword, getUser', async (t) => {
  const client = authClient(api.url);
  const signedUp = await client.signUp({ email: 'e2e@example.com', password: 'secret-e2e-1', options: { data: { name: 'E2E' } } });
  t.equal(signedUp.error, null);
  t.equal(signedUp.data.session, null, 'no session before confirmation');
  t.equal(signedUp.data.user?.email, 'e2e@example.com');

  const early = await client.signInWithPassword({ email: 'e2e@example.com', password: 'secret-e2e-1' });
  t.equal(early.error?.code, 'email_not_confirmed', 'auth-js reads the error code');
  t.equal(early.error?.message, 'Email not confirmed');
  t.equal(early.error?.status, 400);

  const link = new URL((await smtp.waitForMail('e2e@example.com')).link!);
  const confirmed = await fetch(link, { redirect: 'manual' });
  t.equal(confirmed.status, 303);

  const wrong = await client.signInWithPassword({ email: 'e2e@example.com', password: 'not-the-password' });
  t.equal(wrong.error?.code, 'invalid_credentials');
  t.equal(wrong.error?.message, 'Invalid login credentials');

  const signedIn = await client.signInWithPassword({ email: 'e2e@example.com', password: 'secret-e2e-1' });
  t.equal(signedIn.error, null);
  t.ok(signedIn.data.session?.access_token);
  t.equal(signedIn.data.user?.user_metadata.name, 'E2E');

  const { data, error } = await client.getUser();
  t.equal(error, null);
  t.equal(data.user?.email, 'e2e@example.com');
  t.ok(data.user?.email_confirmed_at);
  t.equal(data.user?.identities?.[0]?.provider, 'email');
});

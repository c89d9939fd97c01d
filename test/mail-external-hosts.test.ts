// MAILER_EXTERNAL_HOSTS (docs/one-time-codes-and-mail.md#links): one deployment behind several public
// host names. A request whose X-Forwarded-Host is listed gets mail links on https://<that host>, from
// every kind of mail and from /admin/generate_link; an unlisted host, or none, keeps API_EXTERNAL_URL, so
// a client cannot send another user's links to a host of its choosing.
import t from 'tap';
import { startMailStack } from './helpers/passwordless.js';
import { adminToken } from './helpers/admin.js';
import { mailLinkBase } from '../dist/server/delivery/mail/link-base.js';
import { emailData } from '../dist/server/hooks/send-email.js';

const EXTERNAL = 'https://auth.example.com/auth/v1';

t.test('the base: a listed X-Forwarded-Host over https; http only for localhost when the proxy says so', async (t) => {
  const config = { api: { externalUrl: EXTERNAL }, mailer: { externalHosts: ['auth.tenant-a.test', 'localhost:8080', 'localhost'] } };
  const base = (headers?: Record<string, string>) => mailLinkBase(config as never, { headers });
  t.equal(base(), EXTERNAL);
  t.equal(base({ 'x-forwarded-host': 'auth.tenant-a.test' }), 'https://auth.tenant-a.test');
  t.equal(
    base({ 'x-forwarded-host': 'auth.tenant-a.test', 'x-forwarded-proto': 'http' }),
    'https://auth.tenant-a.test',
    'https for any other host',
  );
  t.equal(base({ 'x-forwarded-host': 'AUTH.tenant-a.test' }), EXTERNAL, 'compared exactly, as the original');
  t.equal(base({ 'x-forwarded-host': 'evil.test' }), EXTERNAL, 'an unlisted host is ignored');
  t.equal(base({ host: 'auth.tenant-a.test' }), EXTERNAL, 'the Host header does not count');
  t.equal(base({ 'x-forwarded-host': 'localhost', 'x-forwarded-proto': 'http' }), 'http://localhost');
  t.equal(
    base({ 'x-forwarded-host': 'localhost:8080', 'x-forwarded-proto': 'http' }),
    'https://localhost:8080',
    'only the bare name localhost',
  );
  const unlisted = { api: config.api, mailer: { externalHosts: [] } };
  t.equal(mailLinkBase(unlisted as never, { headers: { 'x-forwarded-host': 'auth.tenant-a.test' } }), EXTERNAL, 'nothing listed: never');
  t.equal(
    emailData({ config } as never, { headers: { 'x-forwarded-host': 'auth.tenant-a.test' } }, 'magicLink', {}).site_url,
    'https://auth.tenant-a.test',
    "the send email hook's site_url is the same base",
  );
});

t.test('a service with two public hosts', async (t) => {
  const stack = await startMailStack({
    AUTH_API_EXTERNAL_URL: EXTERNAL,
    AUTH_MAILER_EXTERNAL_HOSTS: 'auth.tenant-a.test,auth.tenant-b.test',
    AUTH_SMTP_MAX_FREQUENCY: '1s',
  });
  const { api, smtp } = stack;
  t.teardown(() => stack.stop());
  const signUp = async (email: string, headers: Record<string, string>) => {
    const res = await api.request('POST', '/signup', { body: { email, password: 'Secret-password-1' }, headers });
    t.equal(res.status, 200);
    return (await smtp.waitForMail(email)).link ?? '';
  };

  t.ok(
    (await signUp('tenant-a@example.com', { 'x-forwarded-host': 'auth.tenant-a.test' })).startsWith(
      'https://auth.tenant-a.test/verify?token=',
    ),
  );
  t.ok(
    (await signUp('tenant-b@example.com', { 'x-forwarded-host': 'auth.tenant-b.test' })).startsWith(
      'https://auth.tenant-b.test/verify?token=',
    ),
  );
  t.ok((await signUp('spoofed@example.com', { 'x-forwarded-host': 'evil.test' })).startsWith('https://auth.example.com/verify?token='));
  t.ok((await signUp('plain@example.com', {})).startsWith('https://auth.example.com/verify?token='));

  await api.db.query('update users set email_confirmed_at = now() where email = $1', ['tenant-a@example.com']);
  const recover = await api.request('POST', '/recover', {
    body: { email: 'tenant-a@example.com' },
    headers: { 'x-forwarded-host': 'auth.tenant-b.test' },
  });
  t.equal(recover.status, 200);
  const recovery = (await smtp.waitForMail('tenant-a@example.com')).link ?? '';
  t.ok(recovery.startsWith('https://auth.tenant-b.test/verify?token='), 'the host of the request that asked, not of the sign-up');
  t.match(recovery, /type=recovery/);

  const generated = await api.request('POST', '/admin/generate_link', {
    token: await adminToken(),
    body: { type: 'magiclink', email: 'tenant-b@example.com' },
    headers: { 'x-forwarded-host': 'auth.tenant-a.test' },
  });
  t.equal(generated.status, 200);
  t.ok(String(generated.body.action_link).startsWith('https://auth.tenant-a.test/verify?token='), 'generate_link too');
});

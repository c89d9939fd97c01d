// /magiclink under other configurations: disabled providers, DISABLE_SIGNUP, MAILER_AUTOCONFIRM.
import t from 'tap';
import { startMailStack, linkOf } from './helpers/passwordless.js';

t.test('email provider off, magic links off', async (t) => {
  const stack = await startMailStack({ AUTH_EXTERNAL_EMAIL_ENABLED: 'false' });
  t.teardown(() => stack.stop());
  const off = await stack.api.request('POST', '/magiclink', { body: { email: 'a@example.com' } });
  t.equal(off.status, 422);
  t.strictSame(off.body, { code: 422, error_code: 'email_provider_disabled', msg: 'Email logins are disabled' });
});

t.test('magic links off', async (t) => {
  const stack = await startMailStack({ AUTH_EXTERNAL_EMAIL_MAGIC_LINK_ENABLED: 'false' });
  t.teardown(() => stack.stop());
  const off = await stack.api.request('POST', '/magiclink', { body: { email: 'a@example.com' } });
  t.strictSame(off.body, { code: 422, error_code: 'email_provider_disabled', msg: 'Login with magic link is disabled' });
});

t.test('DISABLE_SIGNUP: unknown address refused, confirmed user still gets a link', async (t) => {
  const stack = await startMailStack({ AUTH_DISABLE_SIGNUP: 'true' });
  t.teardown(() => stack.stop());
  const refused = await stack.api.request('POST', '/magiclink', { body: { email: 'nobody@example.com' } });
  t.equal(refused.status, 422);
  t.strictSame(refused.body, { code: 422, error_code: 'signup_disabled', msg: 'Signups not allowed for this instance' });
  await stack.api.db.query(`insert into users (aud, role, email, email_confirmed_at, raw_app_meta_data)
    values ('authenticated', 'authenticated', 'known@example.com', now(), '{"provider":"email","providers":["email"]}')`);
  t.equal((await stack.api.request('POST', '/magiclink', { body: { email: 'known@example.com' } })).status, 200);
  t.equal((await stack.smtp.waitForMail('known@example.com')).subject, 'Your Magic Link');
});

t.test('MAILER_AUTOCONFIRM: an unknown address is signed up confirmed and gets a real magic link', async (t) => {
  const stack = await startMailStack({ AUTH_MAILER_AUTOCONFIRM: 'true' });
  t.teardown(() => stack.stop());
  t.equal((await stack.api.request('POST', '/magiclink', { body: { email: 'auto@example.com' } })).status, 200);
  const mail = await stack.smtp.waitForMail('auto@example.com');
  t.equal(mail.subject, 'Your Magic Link');
  t.equal(linkOf(mail).type, 'magiclink');
  const {
    rows: [user],
  } = await stack.api.db.query('select id, email_confirmed_at from users where email = $1', ['auto@example.com']);
  t.ok(user.email_confirmed_at);
  const sessions = await stack.api.db.query('select count(*)::int as n from sessions where user_id = $1', [user.id]);
  t.equal(sessions.rows[0].n, 0, 'no session that nobody receives: the link is what signs the user in');
  const audit = await stack.api.db.query(
    `select count(*)::int as n from audit_log_entries where payload->>'action' = 'user_signedup'
    and payload->>'actor_id' = $1`,
    [user.id],
  );
  t.equal(audit.rows[0].n, 1, 'the sign-up is still audited');
});

// POST /recover (REFERENCE §2.6): a recovery mail whose link signs the user in with type=recovery, so the
// app can show a password form; unknown addresses get the same 200 {}.
import t from 'tap';
import { startMailStack, linkOf, codeOf, fragmentOf, insertUser } from './helpers/passwordless.js';
import { behindDeletion } from './helpers/row-lock.js';

const stack = await startMailStack({ AUTH_RATE_LIMIT_EMAIL_SENT: '6' });
const { api, smtp } = stack;
t.teardown(() => stack.stop());

await api.request('POST', '/signup', { body: { email: 'rose@example.com', password: 'old-password' } });
await smtp.waitForMail('rose@example.com');
await api.db.query('update users set email_confirmed_at = now() where email = $1', ['rose@example.com']);
const allowRecovery = () => api.db.query("update users set recovery_sent_at = now() - interval '1 hour' where email = 'rose@example.com'");

t.test('a recovery mail whose link redirects with a session and type=recovery', async (t) => {
  const res = await api.request('POST', '/recover?redirect_to=http://localhost:3000/reset', { body: { email: 'rose@example.com' } });
  t.equal(res.status, 200);
  t.strictSame(res.body, {});
  const mail = await smtp.waitForMail('rose@example.com');
  t.equal(mail.subject, 'Reset Your Password');
  const link = linkOf(mail);
  t.equal(link.type, 'recovery');
  const followed = await api.request('GET', link.path);
  t.equal(followed.status, 303);
  const location = followed.headers.get('location')!;
  t.ok(location.startsWith('http://localhost:3000/reset#'));
  const fragment = fragmentOf(location);
  t.equal(fragment.type, 'recovery');
  t.equal(fragment.token_type, 'bearer');
  const me = await api.request('GET', '/user', { token: fragment.access_token });
  t.equal(me.status, 200);
  t.equal(me.body.email, 'rose@example.com');
  const again = await api.request('GET', link.path);
  t.equal(fragmentOf(again.headers.get('location')).error_code, 'otp_expired', 'the link works once');
});

t.test('the recovery code works with POST /verify type=recovery and returns type', async (t) => {
  await allowRecovery();
  await api.request('POST', '/recover', { body: { email: 'rose@example.com' } });
  const code = codeOf(await smtp.waitForMail('rose@example.com'));
  const res = await api.request('POST', '/verify', { body: { type: 'recovery', email: 'rose@example.com', token: code } });
  t.equal(res.status, 200);
  t.equal(res.body.type, 'recovery');
  t.equal(res.body.user.email, 'rose@example.com');
});

t.test('a second recovery mail within the interval is 429', async (t) => {
  await allowRecovery();
  t.equal((await api.request('POST', '/recover', { body: { email: 'rose@example.com' } })).status, 200);
  await smtp.waitForMail('rose@example.com');
  const again = await api.request('POST', '/recover', { body: { email: 'rose@example.com' } });
  t.equal(again.status, 429);
  t.equal(again.body.error_code, 'over_email_send_rate_limit');
  t.match(again.body.msg, /^For security purposes, you can only request this after \d+ seconds\.$/);
});

t.test('an unknown address: 200 {}, no mail, no user, but the same send bookkeeping', async (t) => {
  const before = smtp.mails.length;
  const {
    rows: [{ count: sentBefore }],
  } = await api.db.query("select count from rate_limits where key = 'email_sent'");
  const res = await api.request('POST', '/recover', { body: { email: 'ghost@example.com' } });
  t.equal(res.status, 200);
  t.strictSame(res.body, {});
  const {
    rows: [{ count: sentAfter }],
  } = await api.db.query("select count from rate_limits where key = 'email_sent'");
  t.equal(sentAfter, sentBefore + 1, 'an unknown address takes a send slot like a known one');
  t.equal(smtp.mails.length, before);
  t.equal((await api.db.query('select 1 from users where email = $1', ['ghost@example.com'])).rowCount, 0);
});

t.test('with the global email budget spent, known and unknown addresses get the same 429', async (t) => {
  await allowRecovery();
  let unknown;
  // A new unknown address each time: one asked again within SMTP_MAX_FREQUENCY is refused by its interval.
  let n = 0;
  do {
    unknown = await api.request('POST', '/recover', { body: { email: `ghost-${++n}@example.com` } });
  } while (unknown.status === 200);
  const known = await api.request('POST', '/recover', { body: { email: 'rose@example.com' } });
  t.equal(unknown.status, 429);
  t.strictSame(known.body, unknown.body);
  t.strictSame(known.body, { code: 429, error_code: 'over_email_send_rate_limit', msg: 'email rate limit exceeded' });
});

t.test('validation errors', async (t) => {
  const empty = await api.request('POST', '/recover', { body: {} });
  t.strictSame(empty.body, { code: 400, error_code: 'validation_failed', msg: 'Password recovery requires an email' });
  const bad = await api.request('POST', '/recover', { body: { email: 'nope' } });
  t.strictSame(bad.body, { code: 400, error_code: 'validation_failed', msg: 'Unable to validate email address: invalid format' });
  const pkce = await api.request('POST', '/recover', { body: { email: 'rose@example.com', code_challenge: 'x'.repeat(43) } });
  t.strictSame(pkce.body, {
    code: 400,
    error_code: 'validation_failed',
    msg: 'PKCE flow requires code_challenge_method and code_challenge',
  });
});

t.test('email provider off: 400 email_provider_disabled', async (t) => {
  const off = await (await import('./helpers/server.js')).startTestService({ AUTH_EXTERNAL_EMAIL_ENABLED: 'false' });
  t.teardown(() => off.stop());
  const res = await off.request('POST', '/recover', { body: { email: 'rose@example.com' } });
  t.equal(res.status, 400);
  t.strictSame(res.body, { code: 400, error_code: 'email_provider_disabled', msg: 'Email logins are disabled' });
});

t.test('a user deleted while its recovery request waits for it: answered as an unknown address, bookkeeping and all', async (t) => {
  // The test before spent the global budget; a fresh one, so that the permits below are seen to be taken.
  await api.db.query("delete from rate_limits where key = 'email_sent'");
  const emailSent = async () => (await api.db.query("select count from rate_limits where key = 'email_sent'")).rows[0]?.count ?? 0;
  const recover = (email: string) => api.request('POST', '/recover', { body: { email } });
  const refusal = (res: { status: number; body: Record<string, unknown> }) => [
    res.status,
    res.body.error_code,
    String(res.body.msg).replace(/\d+/, 'N'),
  ];
  t.strictSame([(await recover('ghost-repeat@example.com')).status], [200]);
  const unknownRepeat = refusal(await recover('ghost-repeat@example.com'));
  t.strictSame(unknownRepeat, [429, 'over_email_send_rate_limit', 'For security purposes, you can only request this after N seconds.']);
  for (const soft of [false, true]) {
    const what = soft ? 'soft-deleted' : 'deleted';
    const email = `gone-${soft ? 'soft' : 'hard'}@example.com`;
    const id = await insertUser(api.db, { email, confirmed: true });
    const sentBefore = await emailSent();
    // /recover finds the user, then waits for its row (held here) while an admin deletes the user.
    const res = await behindDeletion(api, id, soft, () => recover(email));
    t.strictSame([res.status, res.body], [200, {}], what);
    t.equal(await emailSent(), sentBefore + 1, `${what}: a send permit taken, as for an unknown address`);
    t.strictSame(refusal(await recover(email)), unknownRepeat, `${what}: a repeat gets an unknown address's 429`);
    t.equal(await emailSent(), sentBefore + 1, `${what}: the refused repeat takes no permit`);
  }
  t.equal(smtp.mails.filter((m) => m.to.startsWith('gone-') || !m.to.includes('@')).length, 0, 'no mail');
});

t.test('RATE_LIMIT_EMAIL_SENT=0 turns mail off even under MAILER_AUTOCONFIRM, as the original', async (t) => {
  const off = await startMailStack({ AUTH_RATE_LIMIT_EMAIL_SENT: '0', AUTH_MAILER_AUTOCONFIRM: 'true' });
  t.teardown(() => off.stop());
  const signedUp = await off.api.request('POST', '/signup', { body: { email: 'quiet@example.com', password: 'Secret-password-1' } });
  t.equal(signedUp.status, 200, 'an autoconfirmed sign-up sends nothing');
  for (const [path, body] of [
    ['/recover', { email: 'quiet@example.com' }],
    ['/magiclink', { email: 'quiet@example.com' }],
  ] as const) {
    const res = await off.api.request('POST', path, { body });
    t.strictSame(res.body, { code: 429, error_code: 'over_email_send_rate_limit', msg: 'email rate limit exceeded' }, path);
  }
  t.equal(off.smtp.mails.length, 0);
});

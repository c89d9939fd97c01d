// POST /invite (REFERENCE §2.13, §7.5): the invited user, the invite mail over real SMTP, accepting it
// through GET /verify type=invite and setting a password, re-inviting a pending address, and the refusals.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { startSmtpServer } from './helpers/smtp.js';
import { startMailStack } from './helpers/passwordless.js';
import { adminToken, fragmentOf } from './helpers/admin.js';
import { behindDeletion, inOrderBehindUserLock } from './helpers/row-lock.js';

const smtp = await startSmtpServer();
const api = await startTestService({
  AUTH_SMTP_HOST: '127.0.0.1',
  AUTH_SMTP_PORT: String(smtp.port),
  AUTH_SMTP_ADMIN_EMAIL: 'admin@example.com',
});
t.teardown(async () => {
  await api.stop();
  await smtp.close();
});
const admin = await adminToken();
const SITE = 'http://localhost:3000';

const invite = (body: unknown, query = '') => api.request('POST', `/invite${query}`, { token: admin, body });
const follow = (link: string) => {
  const u = new URL(link);
  return api.request('GET', u.pathname + u.search);
};

t.test('invite: the user with invited_at, the mail, and the link that signs them in with type=invite', async (t) => {
  const res = await invite({ email: 'Invitee@Example.com', data: { team: 'red' } });
  t.equal(res.status, 200);
  const u = res.body;
  t.match(u, {
    id: /^[0-9a-f-]{36}$/,
    email: 'invitee@example.com',
    invited_at: String,
    confirmation_sent_at: String,
    user_metadata: { team: 'red' },
    app_metadata: { provider: 'email', providers: ['email'] },
    identities: [{ provider: 'email' }],
  });
  t.notOk('email_confirmed_at' in u);
  t.equal(u.invited_at, u.confirmation_sent_at);

  const mail = await smtp.waitForMail('invitee@example.com');
  t.equal(mail.subject, 'You have been invited');
  t.match(mail.link, new RegExp(`^${api.url}/verify\\?token=[0-9a-f]{56}&type=invite&redirect_to=${SITE}$`));

  const accepted = await follow(mail.link!);
  t.equal(accepted.status, 303);
  const fragment = fragmentOf(accepted.headers.get('location'));
  t.equal(fragment.type, 'invite', 'the app is told to show a set-password form');
  const me = await api.request('GET', '/user', { token: fragment.access_token });
  t.equal(me.status, 200);
  t.equal(me.body.id, u.id);
  t.ok(me.body.email_confirmed_at, 'accepting confirms the address');
  const { rows } = await api.db.query('select encrypted_password from users where id = $1', [u.id]);
  t.equal(rows[0].encrypted_password, null, 'no password until the user sets one');
  // As the original: following an invite link is a sign-up by email (invite_accepted is its OAuth invite's).
  const audit = await api.db.query(
    `select payload from audit_log_entries where payload ->> 'actor_id' = $1 and payload ->> 'action' in ('user_signedup', 'invite_accepted')`,
    [u.id],
  );
  t.strictSame(
    audit.rows.map((r: any) => [r.payload.action, r.payload.traits]),
    [['user_signedup', { provider: 'email' }]],
    'accepting is audited as a sign-up by email',
  );
  const set = await api.request('PUT', '/user', { token: fragment.access_token, body: { password: 'chosen-pass-1' } });
  t.equal(set.status, 200, 'the invited user sets a password');
  const login = await api.request('POST', '/token?grant_type=password', {
    body: { email: 'invitee@example.com', password: 'chosen-pass-1' },
  });
  t.equal(login.status, 200, 'and signs in with it');

  const again = await invite({ email: 'invitee@example.com' });
  t.strictSame(
    [again.status, again.body],
    [422, { code: 422, error_code: 'email_exists', msg: 'A user with this email address has already been registered' }],
  );
});

t.test("the invited user's metadata is the admin's data alone; its identity carries none of it, as the original", async (t) => {
  const res = await invite({ email: 'invited-meta@example.com', data: { team: 'blue', email_verified: true } });
  t.strictSame(res.body.user_metadata, { team: 'blue', email_verified: true });
  t.strictSame(res.body.identities[0].identity_data, {
    sub: res.body.id,
    email: 'invited-meta@example.com',
    email_verified: false,
    phone_verified: false,
  });
});

t.test('re-inviting a pending address reuses the user and replaces the link; redirect_to is honoured', async (t) => {
  const first = await invite({ email: 'pending@example.com' });
  const firstMail = await smtp.waitForMail('pending@example.com');
  const second = await invite({ email: 'pending@example.com' }, `?redirect_to=${encodeURIComponent(`${SITE}/onboard`)}`);
  t.equal(second.status, 200);
  t.equal(second.body.id, first.body.id);
  const secondMail = await smtp.waitForMail('pending@example.com');
  t.match(secondMail.link, /&redirect_to=http:\/\/localhost:3000\/onboard$/);
  const stale = await follow(firstMail.link!);
  t.equal(fragmentOf(stale.headers.get('location')).error_code, 'otp_expired', 'the first link was replaced');
  const fresh = await follow(secondMail.link!);
  t.ok(fresh.headers.get('location')!.startsWith(`${SITE}/onboard#`));
  t.equal(fragmentOf(fresh.headers.get('location')).type, 'invite');
});

t.test('re-inviting while the invite link is being followed: one after the other, never a deadlock (500)', async (t) => {
  const first = await invite({ email: 'racing@example.com' });
  const mail = await smtp.waitForMail('racing@example.com');
  // The link's verification waits for the user's row (held here) first, the second invite behind it: it then
  // finds the address confirmed.
  const [followed, res] = await inOrderBehindUserLock(api.db, first.body.id, [
    () => follow(mail.link!),
    () => invite({ email: 'racing@example.com' }),
  ]);
  t.equal(fragmentOf(followed.headers.get('location')).type, 'invite');
  t.strictSame([res.status, res.body.error_code], [422, 'email_exists']);
});

t.test('re-inviting a pending address while an admin deletes its user invites a new user, whose link works', async (t) => {
  // Under MAILER_AUTOCONFIRM an invite takes no send permit, so its first attempt runs to the end instead
  // of starting over (and looking the address up again) once it has a permit.
  const stack = await startMailStack({ AUTH_MAILER_AUTOCONFIRM: 'true' });
  t.teardown(() => stack.stop());
  const inviteThere = (email: string) => stack.api.request('POST', '/invite', { token: admin, body: { email } });
  for (const soft of [true, false]) {
    const email = `deleted-${soft ? 'soft' : 'hard'}@example.com`;
    const first = await inviteThere(email);
    await stack.smtp.waitForMail(email);
    // The invite finds the pending user, then waits for its row (held here) behind the deletion.
    const res = await behindDeletion(stack.api, first.body.id, soft, () => inviteThere(email));
    t.equal(res.status, 200, soft ? 'soft-deleted' : 'deleted');
    t.not(res.body.id, first.body.id, 'not the deleted user');
    t.equal(res.body.email, email);
    const link = new URL((await stack.smtp.waitForMail(email)).link!);
    const followed = await stack.api.request('GET', link.pathname + link.search);
    t.equal(fragmentOf(followed.headers.get('location')).type, 'invite', 'the new link signs the invitee in');
  }
});

t.test('re-inviting a pending address an admin moves to another meanwhile invites a new user, not the moved one', async (t) => {
  // MAILER_AUTOCONFIRM: one attempt, as above, so that nothing but the check under the lock sees the move.
  const stack = await startMailStack({ AUTH_MAILER_AUTOCONFIRM: 'true' });
  t.teardown(() => stack.stop());
  const from = 'moving-from@example.com';
  const to = 'moving-to@example.com';
  const first = await stack.api.request('POST', '/invite', { token: admin, body: { email: from } });
  await stack.smtp.waitForMail(from);
  // The invite finds the pending user by its address, then waits for its row behind an admin's change of it.
  const [moved, res] = await inOrderBehindUserLock(stack.api.db, first.body.id, [
    () => stack.api.request('PUT', `/admin/users/${first.body.id}`, { token: admin, body: { email: to } }),
    () => stack.api.request('POST', '/invite', { token: admin, body: { email: from } }),
  ]);
  t.equal(moved.status, 200);
  t.equal(res.status, 200);
  t.not(res.body.id, first.body.id, 'not the user that left the address');
  t.equal(res.body.email, from);
  const link = new URL((await stack.smtp.waitForMail(from)).link!);
  const followed = await stack.api.request('GET', link.pathname + link.search);
  const session = fragmentOf(followed.headers.get('location'));
  const me = await stack.api.request('GET', '/user', { token: session.access_token });
  t.strictSame([me.body.id, me.body.email], [res.body.id, from], 'the link signs the invitee into the new user');
  const left = await stack.api.db.query('select email, email_confirmed_at from users where id = $1', [first.body.id]);
  t.strictSame(left.rows[0], { email: to, email_confirmed_at: null }, 'the moved user keeps its address, unconfirmed');
});

t.test('a refused delivery leaves nothing behind', async (t) => {
  smtp.failNext(550, 'No such mailbox');
  const res = await invite({ email: 'bounce@example.com' });
  t.strictSame([res.status, res.body.error_code, res.body.msg], [500, 'unexpected_failure', 'Error sending invite email']);
  const { rows } = await api.db.query(`select count(*)::int as n from users where email = 'bounce@example.com'`);
  t.equal(rows[0].n, 0);
});

t.test('bad email is a 400; the invite is audited as the admin', async (t) => {
  const bad = await invite({ email: 'not-an-email' });
  t.strictSame(
    [bad.status, bad.body],
    [400, { code: 400, error_code: 'validation_failed', msg: 'Unable to validate email address: invalid format' }],
  );
  const { rows } = await api.db.query(
    `select payload from audit_log_entries where payload ->> 'action' = 'user_invited' and payload -> 'traits' ->> 'user_email' = 'invitee@example.com'`,
  );
  t.equal(rows.length, 1);
  t.match(rows[0].payload, { actor_id: '00000000-0000-0000-0000-000000000000', actor_username: 'service_role', log_type: 'team' });
});

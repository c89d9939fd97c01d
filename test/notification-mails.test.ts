// The account-change notifications (docs/one-time-codes-and-mail.md#account-change-notifications), received
// by a real SMTP server: each of the seven sent when its MAILER_NOTIFICATIONS_<X>_ENABLED is on, to the
// right address with the right subject and variables; none by default; a refused or stalled send leaves the
// completed change standing and answered 200, without holding the user's row; the send email hook gets them
// with the original's email_action_type and fields.
import t from 'tap';
import { startMailStack, linkOf } from './helpers/passwordless.js';
import { startGithubFake } from './helpers/github.js';
import { REDIRECT_URI, startOidcProvider } from './helpers/oidc-provider.js';
import { callback, providerEnv, githubEnv } from './helpers/oauth.js';
import { authClient } from './helpers/auth-client.js';
import { signIn, uniqueEmail } from './helpers/accounts.js';
import { codeIn, confirmedUser, PASSWORD } from './helpers/users.js';
import { verifiedTotp } from './helpers/mfa.js';
import { startHookServer } from './helpers/hook-server.js';
import { startTestService } from './helpers/server.js';
import { startTemplateServer } from './helpers/template-server.js';
import type { CapturedMail } from './helpers/smtp.js';

const ALL_ON = Object.fromEntries(
  [
    'PASSWORD_CHANGED',
    'EMAIL_CHANGED',
    'PHONE_CHANGED',
    'IDENTITY_LINKED',
    'IDENTITY_UNLINKED',
    'MFA_FACTOR_ENROLLED',
    'MFA_FACTOR_UNENROLLED',
  ].map((x) => [`AUTH_MAILER_NOTIFICATIONS_${x}_ENABLED`, 'true']),
);
const SUBJECTS = {
  password: 'Your password was changed',
  email: 'Your email address was changed',
  phone: 'Your phone number was changed',
  linked: 'A new sign-in method was linked to your account',
  unlinked: 'A sign-in method was removed from your account',
  enrolled: 'A new verification method was added to your account',
  unenrolled: 'A verification method was removed from your account',
};

const gh = await startGithubFake();
const google = await startOidcProvider();
const stack = await startMailStack(
  {
    ...ALL_ON,
    ...githubEnv(gh),
    ...providerEnv('google', { clientId: google.clientId, secret: google.clientSecret, redirectUri: REDIRECT_URI, url: google.issuer }),
    AUTH_SECURITY_MANUAL_LINKING_ENABLED: 'true',
    AUTH_RATE_LIMIT_EMAIL_SENT: '1000',
    AUTH_RATE_LIMIT_SMS_SENT: '1000',
    // Long enough for a mail on a loaded CI machine; the stalled-relay test below waits it out once.
    AUTH_SEND_TIMEOUT: '5',
  },
  { sms: true },
);
const { api, smtp } = stack;
const sms = stack.sms!;
t.teardown(async () => {
  await stack.stop();
  await gh.stop();
  await google.stop();
});

const notification = (to: string, subject: string) =>
  smtp.waitForMail((m) => m.to.toLowerCase() === to.toLowerCase() && m.subject === subject);
const put = (token: string, body: unknown) => api.request('PUT', '/user', { token, body });

t.test('password changed (auth-js updateUser): to the user, and the new password works', async (t) => {
  const s = await confirmedUser(api);
  const auth = authClient(api.url);
  t.equal((await auth.setSession({ access_token: s.access_token, refresh_token: s.refresh_token })).error, null);
  const { error } = await auth.updateUser({ password: 'Another-password-2' });
  t.equal(error, null);
  const mail = await notification(s.user.email, SUBJECTS.password);
  t.match(mail.html, s.user.email, 'the template has the Email');
  t.equal(mail.link, null, 'a notification carries no link');
  await signIn(api, s.user.email, 'Another-password-2');
});

t.test('password changed in a recovery session (recover, follow the link, PUT /user)', async (t) => {
  const s = await confirmedUser(api);
  t.equal((await api.request('POST', '/recover', { body: { email: s.user.email } })).status, 200);
  const recovery = await smtp.waitForMail((m) => m.to === s.user.email && /type=recovery/.test(m.link ?? ''));
  const verified = await api.request('POST', '/verify', { body: { type: 'recovery', token_hash: linkOf(recovery).token } });
  t.equal(verified.status, 200, verified.text);
  t.equal((await put(verified.body.access_token, { password: 'Recovered-password-3' })).status, 200);
  await notification(s.user.email, SUBJECTS.password);
});

t.test('email changed: to the old address, once the change is complete, with OldEmail and Email', async (t) => {
  const s = await confirmedUser(api);
  const newEmail = uniqueEmail('moved');
  t.equal((await put(s.access_token, { email: newEmail })).status, 200);
  const toOld = await smtp.waitForMail((m) => m.to === s.user.email && m.subject === 'Confirm Email Change');
  const toNew = await smtp.waitForMail((m) => m.to === newEmail && m.subject === 'Confirm Email Change');
  const first = await api.request('POST', '/verify', { body: { type: 'email_change', token_hash: linkOf(toOld).token } });
  t.equal(first.status, 200);
  t.notOk(
    smtp.mails.some((m) => m.subject === SUBJECTS.email && m.to === s.user.email),
    'the first half of a secure change changes nothing yet',
  );
  const second = await api.request('POST', '/verify', { body: { type: 'email_change', token_hash: linkOf(toNew).token } });
  t.equal(second.status, 200, second.text);
  const mail = await notification(s.user.email, SUBJECTS.email);
  t.match(mail.text, `from ${s.user.email} to ${newEmail}`);
});

t.test('phone changed: to the email, with OldPhone and Phone; the first phone identity is a linked sign-in method', async (t) => {
  const s = await confirmedUser(api);
  await api.db.query(`update users set phone = '14155550170', phone_confirmed_at = now() where id = $1`, [s.user.id]);
  t.equal((await put(s.access_token, { phone: '+14155550171' })).status, 200);
  const message = await sms.waitForMessage('14155550171');
  const ok = await api.request('POST', '/verify', { body: { type: 'phone_change', phone: '+14155550171', token: codeIn(message.body) } });
  t.equal(ok.status, 200, ok.text);
  const mail = await notification(s.user.email, SUBJECTS.phone);
  t.match(mail.text, 'from 14155550170 to 14155550171');
  const linked = await notification(s.user.email, SUBJECTS.linked);
  t.match(linked.text, 'with phone');
});

t.test('identity linked (manual linking through GitHub) and unlinked', async (t) => {
  const s = await confirmedUser(api);
  gh.users.set(4242, {
    id: 4242,
    login: 'notified',
    name: 'Notified',
    avatar_url: 'https://avatars.example.test/4242',
    emails: [{ email: 'notified-elsewhere@example.com', primary: true, verified: true, visibility: null }],
  });
  const start = await api.request('GET', '/user/identities/authorize?provider=github&skip_http_redirect=true', { token: s.access_token });
  t.equal(start.status, 200, start.text);
  gh.approveAs = 4242;
  const done = await callback(api, await gh.approve(start.body.url));
  t.equal(done.status, 302);
  const linked = await notification(s.user.email, SUBJECTS.linked);
  t.match(linked.text, 'with github');

  const identity = (await api.db.query(`select id from identities where user_id = $1 and provider = 'github'`, [s.user.id])).rows[0];
  const unlink = await api.request('DELETE', `/user/identities/${identity.id}`, { token: s.access_token });
  t.equal(unlink.status, 200, unlink.text);
  const unlinked = await notification(s.user.email, SUBJECTS.unlinked);
  t.match(unlinked.text, 'github can no longer be used');
  const audit = await api.db.query(
    `select payload->>'action' as action, payload->>'log_type' as log_type, payload->'traits'->>'identity_id' as identity_id, ip_address
       from audit_log_entries where payload->>'actor_id' = $1 and payload->>'action' like 'identity_%' order by created_at`,
    [s.user.id],
  );
  t.same(
    audit.rows,
    ['identity_linked', 'identity_unlinked'].map((action) => ({
      action,
      log_type: 'user',
      identity_id: identity.id,
      ip_address: '127.0.0.1',
    })),
    'the manual link and the unlink are audited with the identity and the address',
  );
});

t.test(
  'identity linked by id_token (auth-js linkIdentity); unlinking the identity the email came from tells the old address',
  async (t) => {
    const s = await confirmedUser(api);
    const auth = authClient(api.url);
    await auth.setSession({ access_token: s.access_token, refresh_token: s.refresh_token });
    const token = await google.signIdToken({ sub: `gs-${s.user.id}`, email: 'google-side@example.com', email_verified: true });
    const { error } = await auth.linkIdentity({ provider: 'google', token });
    t.equal(error, null);
    t.match((await notification(s.user.email, SUBJECTS.linked)).text, 'with google');

    const emailIdentity = (await auth.getUserIdentities()).data!.identities.find((i) => i.provider === 'email')!;
    t.equal((await auth.unlinkIdentity(emailIdentity)).error, null);
    const row = (await api.db.query('select email from users where id = $1', [s.user.id])).rows[0];
    t.equal(row.email, 'google-side@example.com', 'the email moved to the remaining identity');
    const mail = await notification(s.user.email, SUBJECTS.unlinked);
    t.match(mail.text, `email can no longer be used to sign in to your account ${s.user.email}`);
  },
);

t.test('MFA factor enrolled (on its first verification only) and unenrolled', async (t) => {
  const s = await confirmedUser(api);
  const { factor, session } = await verifiedTotp(api, s.access_token);
  const enrolled = await notification(s.user.email, SUBJECTS.enrolled);
  t.match(enrolled.text, 'A totp verification method has been added');
  const gone = await api.request('DELETE', `/factors/${factor.id}`, { token: session.access_token });
  t.equal(gone.status, 200, gone.text);
  const unenrolled = await notification(s.user.email, SUBJECTS.unenrolled);
  t.match(unenrolled.text, 'A totp verification method has been removed');
  t.equal(smtp.mails.filter((m) => m.to === s.user.email && m.subject === SUBJECTS.enrolled).length, 1);
});

t.test('a refused send: the password change stands and is answered 200', async (t) => {
  const s = await confirmedUser(api);
  const other = await signIn(api, s.user.email);
  smtp.failNext(550, 'Mailbox unavailable');
  const res = await put(s.access_token, { password: 'Refused-mail-password-4' });
  t.equal(res.status, 200, res.text);
  await signIn(api, s.user.email, 'Refused-mail-password-4');
  t.equal(
    (await api.request('POST', '/token?grant_type=refresh_token', { body: { refresh_token: other.refresh_token } })).status,
    400,
    'the other sessions ended with it',
  );
  t.notOk(smtp.mails.some((m) => m.to === s.user.email && m.subject === SUBJECTS.password));
  // The refusal went to the notification: the next mail is accepted.
  t.equal((await api.request('POST', '/recover', { body: { email: s.user.email } })).status, 200);
  await smtp.waitForMail((m) => m.to === s.user.email && /type=recovery/.test(m.link ?? ''));
});

t.test('a stalled mail server: 200 after SEND_TIMEOUT, the change committed and the user not held meanwhile', async (t) => {
  const s = await confirmedUser(api);
  smtp.stall();
  t.teardown(() => smtp.release());
  let settled = false;
  const pending = put(s.access_token, { password: 'Stalled-mail-password-5' }).finally(() => (settled = true));
  while (smtp.held === 0) await new Promise((resolve) => setImmediate(resolve));
  // The notification waits on SMTP; the change is committed and the row free for the next request.
  await signIn(api, s.user.email, 'Stalled-mail-password-5');
  const meta = await put(s.access_token, { data: { during: 'the stalled send' } });
  t.equal(meta.status, 200);
  t.notOk(settled, 'the password change was still waiting for its notification');
  const res = await pending;
  t.equal(res.status, 200, res.text);
});

t.test('off by default: a password change, an email change and an MFA factor send no notification', async (t) => {
  const quiet = await startMailStack({ AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_MAILER_SECURE_EMAIL_CHANGE_ENABLED: 'false' });
  t.teardown(() => quiet.stop());
  const signup = await quiet.api.request('POST', '/signup', { body: { email: uniqueEmail('quiet'), password: PASSWORD } });
  const s = signup.body;
  t.equal((await quiet.api.request('PUT', '/user', { token: s.access_token, body: { password: 'Quiet-password-6' } })).status, 200);
  const { factor, session } = await verifiedTotp(quiet.api, s.access_token);
  t.equal((await quiet.api.request('DELETE', `/factors/${factor.id}`, { token: session.access_token })).status, 200);
  const moved = uniqueEmail('quiet-moved');
  t.equal((await quiet.api.request('PUT', '/user', { token: s.access_token, body: { email: moved } })).status, 200);
  const change = await quiet.smtp.waitForMail(moved);
  t.equal((await quiet.api.request('POST', '/verify', { body: { type: 'email_change', token_hash: linkOf(change).token } })).status, 200);
  // Each send is awaited before its answer, so whatever was sent has arrived by now.
  t.same(
    quiet.smtp.mails.map((m: CapturedMail) => m.subject),
    ['Confirm Email Change'],
    'only the email change confirmation',
  );
});

t.test(
  'own subjects and templates (MAILER_SUBJECTS_/MAILER_TEMPLATES_<X>_NOTIFICATION); a phone taken at once under SMS_AUTOCONFIRM',
  async (t) => {
    const templates = await startTemplateServer();
    templates.set('/phone.html', '<p>{{ .Data.name }}: {{ .OldPhone }} &rarr; {{ .Phone }} on {{ .SiteURL }}</p>');
    const own = await startMailStack(
      {
        AUTH_MAILER_NOTIFICATIONS_PHONE_CHANGED_ENABLED: 'true',
        AUTH_MAILER_SUBJECTS_PHONE_CHANGED_NOTIFICATION: 'New number for {{ .Email }}',
        AUTH_MAILER_TEMPLATES_PHONE_CHANGED_NOTIFICATION: `${templates.baseUrl}/phone.html`,
        AUTH_SMS_AUTOCONFIRM: 'true',
      },
      { sms: true },
    );
    t.teardown(async () => {
      await own.stop();
      await templates.close();
    });
    const s = await confirmedUser(own.api);
    await own.api.db.query(`update users set phone = '14155550180', phone_confirmed_at = now() where id = $1`, [s.user.id]);
    const res = await own.api.request('PUT', '/user', {
      token: s.access_token,
      body: { phone: '+14155550181', data: { name: 'Ana <A>' } },
    });
    t.equal(res.status, 200, res.text);
    t.equal(res.body.phone, '14155550181', 'taken at once');
    const mail = await own.smtp.waitForMail((m) => m.to === s.user.email && m.subject.startsWith('New number'));
    t.equal(mail.subject, `New number for ${s.user.email}`);
    t.equal(mail.html.trim(), '<p>Ana &lt;A&gt;: 14155550180 &rarr; 14155550181 on http://localhost:3000</p>');
    t.equal(own.sms!.messages.length, 0, 'no SMS: the number was confirmed by SMS_AUTOCONFIRM');
  },
);

t.test('the send email hook gets the notifications with their email_action_type and fields', async (t) => {
  const hooks = await startHookServer();
  hooks.on('/send-email', () => ({ body: {} }));
  const hooked = await startTestService({
    ...ALL_ON,
    AUTH_MAILER_AUTOCONFIRM: 'true',
    AUTH_HOOK_SEND_EMAIL_ENABLED: 'true',
    AUTH_HOOK_SEND_EMAIL_URI: `${hooks.url}/send-email`,
    AUTH_HOOK_SEND_EMAIL_SECRETS: hooks.secret,
  });
  t.teardown(async () => {
    await hooked.stop();
    await hooks.close();
  });
  const email = uniqueEmail('hooked');
  const s = (await hooked.request('POST', '/signup', { body: { email, password: PASSWORD } })).body;
  t.equal((await hooked.request('PUT', '/user', { token: s.access_token, body: { password: 'Hooked-password-7' } })).status, 200);
  const { factor, session } = await verifiedTotp(hooked, s.access_token);
  t.equal((await hooked.request('DELETE', `/factors/${factor.id}`, { token: session.access_token })).status, 200);
  const datas = hooks
    .callsTo('/send-email')
    .filter((c) => c.payload.user.email === email)
    .map((c) => c.payload.email_data);
  t.same(
    datas.map((d) => d.email_action_type),
    ['password_changed_notification', 'mfa_factor_enrolled_notification', 'mfa_factor_unenrolled_notification'],
  );
  t.match(datas[1], { factor_type: 'totp', token: '', token_hash: '', old_email: '', old_phone: '', provider: '' });
  t.equal(datas[2].factor_type, 'totp');

  // An email change (one token under MAILER_AUTOCONFIRM): the notification names the old address.
  const moved = uniqueEmail('hooked-moved');
  t.equal((await hooked.request('PUT', '/user', { token: s.access_token, body: { email: moved } })).status, 200);
  const change = hooks.callsTo('/send-email').at(-1)!.payload.email_data;
  t.equal(change.email_action_type, 'email_change');
  const done = await hooked.request('POST', '/verify', { body: { type: 'email_change', token_hash: change.token_hash } });
  t.equal(done.status, 200, done.text);
  const changed = hooks.callsTo('/send-email').at(-1)!.payload;
  t.match(changed, { user: { email: moved }, email_data: { email_action_type: 'email_changed_notification', old_email: email } });

  // A failing hook is logged, not answered: the change stands.
  hooks.once('/send-email', { status: 500, body: { error: { message: 'down' } } });
  t.equal((await hooked.request('PUT', '/user', { token: s.access_token, body: { password: 'Hooked-password-8' } })).status, 200);
  await signIn(hooked, moved, 'Hooked-password-8');
});

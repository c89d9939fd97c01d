// EXPERIMENTAL_CREATE_EMAIL_IDENTITY_ON_PASSWORD_SET_ENABLED (docs/users-and-audit.md#email-identity-on-first-password):
// a user who signed up through an OAuth provider (the real OIDC provider of test/helpers) and sets a first
// password with the real auth-js client, or is given one by an admin, gets the email identity and can then
// sign in with email and password; the cases that must add nothing (setting off, unconfirmed email, phone
// only, a password changed rather than set, an identity already there, SSO, anonymous, an empty password,
// a request that fails later) are each checked over HTTP and in the database.
import t from 'tap';
import bcrypt from 'bcryptjs';
import { startTestService, type TestService } from './helpers/server.js';
import { startMailStack } from './helpers/passwordless.js';
import { startOidcProvider, REDIRECT_URI } from './helpers/oidc-provider.js';
import { authClient } from './helpers/auth-client.js';
import { callback, fragmentOf, providerEnv } from './helpers/oauth.js';
import { adminToken } from './helpers/admin.js';
import { uniqueEmail } from './helpers/accounts.js';
import { codeIn, pathOf } from './helpers/users.js';

const FLAG = 'AUTH_EXPERIMENTAL_CREATE_EMAIL_IDENTITY_ON_PASSWORD_SET_ENABLED';
const NEW_PASSWORD = 'First-password-1';

const google = await startOidcProvider();
const googleEnv = providerEnv('google', {
  clientId: google.clientId,
  secret: google.clientSecret,
  redirectUri: REDIRECT_URI,
  url: google.issuer,
});
// On, without autoconfirm: an unverified provider email still signs in (unconfirmed), email changes need
// one confirmation, and SMS codes reach the fake gateway.
const stack = await startMailStack(
  {
    ...googleEnv,
    [FLAG]: 'true',
    AUTH_MAILER_ALLOW_UNVERIFIED_EMAIL_SIGN_INS: 'true',
    AUTH_MAILER_SECURE_EMAIL_CHANGE_ENABLED: 'false',
    AUTH_RATE_LIMIT_EMAIL_SENT: '1000',
    AUTH_RATE_LIMIT_SMS_SENT: '1000',
  },
  { sms: true },
);
const { api, smtp } = stack;
const sms = stack.sms!;
// On, with autoconfirm and anonymous sign-in (autoconfirm cannot be combined with unverified sign-ins).
const anonApi = await startTestService({ [FLAG]: 'true', AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true', AUTH_MAILER_AUTOCONFIRM: 'true' });
// The default: off.
const offApi = await startTestService(googleEnv);
t.teardown(async () => {
  await stack.stop();
  await anonApi.stop();
  await offApi.stop();
  await google.stop();
});
const admin = await adminToken();

let nextSub = 0;
/** Signs up through Google with auth-js (implicit flow); the client holds the session. */
async function googleUser(service: TestService, verified = true) {
  const sub = `gs-${process.pid}-${++nextSub}`;
  const email = uniqueEmail('google');
  google.accounts.set(sub, { sub, email, email_verified: verified, name: 'Gia G' });
  const auth = authClient(service.url);
  const { data } = await auth.signInWithOAuth({ provider: 'google', options: { skipBrowserRedirect: true } });
  const toProvider = await fetch(data.url!, { redirect: 'manual' });
  const { location } = await callback(service, await google.signIn(toProvider.headers.get('location')!, sub));
  const f = fragmentOf(location);
  if (!f.access_token) throw new Error(`OAuth sign-up failed: ${location.href}`);
  const set = await auth.setSession({ access_token: f.access_token, refresh_token: f.refresh_token });
  if (set.error) throw set.error;
  return { auth, email, sub, id: set.data.user!.id };
}

const identitiesOf = async (service: TestService, userId: string) =>
  (
    await service.db.query('select provider, provider_id, identity_data, email from identities where user_id = $1 order by created_at', [
      userId,
    ])
  ).rows;
/** app_metadata's provider and providers (tap's match would let a longer providers array pass). */
const providersOf = async (service: TestService, userId: string) => {
  const meta = (await service.db.query('select raw_app_meta_data from users where id = $1', [userId])).rows[0].raw_app_meta_data;
  return { provider: meta.provider, providers: meta.providers };
};
const hasPassword = async (service: TestService, userId: string) =>
  !!(await service.db.query('select encrypted_password from users where id = $1', [userId])).rows[0].encrypted_password;
const adminPut = (service: TestService, userId: string, body: unknown) =>
  service.request('PUT', `/admin/users/${userId}`, { token: admin, body });

t.test('PUT /user: a first password adds the email identity, listed by auth-js, and email+password signs in', async (t) => {
  const u = await googleUser(api);
  const before = await u.auth.getUser();
  const { data, error } = await u.auth.updateUser({ password: NEW_PASSWORD });
  t.equal(error, null);
  t.strictSame(
    data.user?.identities?.map((i) => i.provider),
    ['google', 'email'],
    'the answer lists the new identity',
  );

  const listed = await u.auth.getUserIdentities();
  t.equal(listed.error, null);
  const email = listed.data!.identities.find((i) => i.provider === 'email')!;
  t.equal(email.id, u.id, 'an email identity is keyed by the user id');
  t.equal(email.user_id, u.id);
  t.strictSame(email.identity_data, { sub: u.id, email: u.email, email_verified: true, phone_verified: false });
  const rows = await identitiesOf(api, u.id);
  t.equal(rows.length, 2);
  t.match(rows[0], { provider: 'google', provider_id: u.sub, email: u.email });
  t.strictSame(rows[1], {
    provider: 'email',
    provider_id: u.id,
    identity_data: { sub: u.id, email: u.email, email_verified: true, phone_verified: false },
    email: u.email,
  });
  t.strictSame(await providersOf(api, u.id), { provider: 'google', providers: ['google', 'email'] });
  t.strictSame(data.user?.user_metadata, before.data.user?.user_metadata, 'user_metadata is left alone');

  const audit = await api.db.query(
    `select payload->>'action' as action from audit_log_entries where payload->>'actor_id' = $1 and payload->>'log_type' = 'user' order by created_at`,
    [u.id],
  );
  t.strictSame(
    audit.rows.map((r) => r.action),
    ['user_updated_password', 'user_modified'],
    "no audit entry beyond the request's own",
  );

  const fresh = authClient(api.url);
  const signedIn = await fresh.signInWithPassword({ email: u.email, password: NEW_PASSWORD });
  t.equal(signedIn.error, null);
  t.equal(signedIn.data.user?.id, u.id, 'the same account');
  t.strictSame(signedIn.data.user?.app_metadata.providers, ['google', 'email']);
});

t.test('PUT /admin/users: a first password adds the identity; the password then signs in', async (t) => {
  const u = await googleUser(api);
  const res = await adminPut(api, u.id, { password: NEW_PASSWORD });
  t.equal(res.status, 200);
  t.strictSame(
    res.body.identities.map((i: { provider: string }) => i.provider),
    ['google', 'email'],
  );
  t.strictSame((await identitiesOf(api, u.id))[1], {
    provider: 'email',
    provider_id: u.id,
    identity_data: { sub: u.id, email: u.email, email_verified: true, phone_verified: false },
    email: u.email,
  });
  t.strictSame(await providersOf(api, u.id), { provider: 'google', providers: ['google', 'email'] });
  t.equal((await authClient(api.url).signInWithPassword({ email: u.email, password: NEW_PASSWORD })).error, null);
});

t.test('PUT /admin/users: email_confirm in the same request confirms the address first, then the identity follows', async (t) => {
  const u = await googleUser(api, false);
  const res = await adminPut(api, u.id, { password: NEW_PASSWORD, email_confirm: true });
  t.equal(res.status, 200);
  t.ok(res.body.email_confirmed_at);
  const rows = await identitiesOf(api, u.id);
  t.strictSame(
    rows.map((i) => i.provider),
    ['google', 'email'],
  );
  t.match(rows[1].identity_data, { email: u.email, email_verified: true });
});

t.test('PUT /admin/users: a new email with the password makes one email identity, of the new address', async (t) => {
  const u = await googleUser(api);
  const newEmail = uniqueEmail('admin-new');
  const res = await adminPut(api, u.id, { password: NEW_PASSWORD, email: newEmail, email_confirm: true });
  t.equal(res.status, 200);
  const emails = (await identitiesOf(api, u.id)).filter((i) => i.provider === 'email');
  t.equal(emails.length, 1);
  t.equal(emails[0].email, newEmail);
});

t.test("PUT /admin/users: the request's own app_metadata providers win over the derived list", async (t) => {
  const u = await googleUser(api);
  const res = await adminPut(api, u.id, { password: NEW_PASSWORD, app_metadata: { providers: ['chosen'], plan: 'pro' } });
  t.equal(res.status, 200);
  t.strictSame(res.body.app_metadata, { provider: 'google', providers: ['chosen'], plan: 'pro' });
  t.equal((await identitiesOf(api, u.id)).length, 2, 'the identity is still added');
});

t.test('an email nobody confirmed gets no identity; the password is still set', async (t) => {
  const u = await googleUser(api, false);
  const { error } = await u.auth.updateUser({ password: NEW_PASSWORD });
  t.equal(error, null);
  t.ok(await hasPassword(api, u.id));
  t.strictSame(
    (await identitiesOf(api, u.id)).map((i) => i.provider),
    ['google'],
  );
  t.strictSame(await providersOf(api, u.id), { provider: 'google', providers: ['google'] });
});

t.test('a phone-only user has no email to make an identity of', async (t) => {
  const phone = '14155550177';
  const auth = authClient(api.url);
  t.equal((await auth.signInWithOtp({ phone })).error, null);
  const message = await sms.waitForMessage(phone);
  const verified = await auth.verifyOtp({ phone, token: codeIn(message.body), type: 'sms' });
  t.equal(verified.error, null);
  const id = verified.data.user!.id;
  t.equal((await auth.updateUser({ password: NEW_PASSWORD })).error, null);
  t.ok(await hasPassword(api, id));
  t.strictSame(
    (await identitiesOf(api, id)).map((i) => i.provider),
    ['phone'],
  );
});

t.test("the request's email is not used: only a pending change, and confirming it updates the same identity", async (t) => {
  const u = await googleUser(api);
  const requested = uniqueEmail('requested');
  const { error } = await u.auth.updateUser({ password: NEW_PASSWORD, email: requested });
  t.equal(error, null);
  t.strictSame(
    (await identitiesOf(api, u.id)).map((i) => [i.provider, i.email]),
    [
      ['google', u.email],
      ['email', u.email],
    ],
  );
  const mail = await smtp.waitForMail((m) => m.to === requested && m.subject === 'Confirm Email Change');
  t.equal((await api.request('GET', pathOf(mail.link!))).status, 303);
  const emails = (await identitiesOf(api, u.id)).filter((i) => i.provider === 'email');
  t.equal(emails.length, 1, 'no second email identity');
  t.equal(emails[0].email, requested);
});

t.test('a password changed, not set for the first time, adds nothing (an imported hash is a password too)', async (t) => {
  const u = await googleUser(api);
  const imported = await adminPut(api, u.id, { password_hash: bcrypt.hashSync('imported-password-1', 4) });
  t.equal(imported.status, 200);
  t.strictSame(
    (await identitiesOf(api, u.id)).map((i) => i.provider),
    ['google'],
    'password_hash is not a first password',
  );
  // A password set by an admin ends the user's sessions (docs/api.md#put-adminusersuser_id): signed in again with it.
  t.equal((await u.auth.signInWithPassword({ email: u.email, password: 'imported-password-1' })).error, null);
  t.equal((await u.auth.updateUser({ password: NEW_PASSWORD })).error, null);
  t.equal((await adminPut(api, u.id, { password: 'Third-password-1' })).status, 200);
  t.strictSame(
    (await identitiesOf(api, u.id)).map((i) => i.provider),
    ['google'],
  );
  t.strictSame(await providersOf(api, u.id), { provider: 'google', providers: ['google'] });
});

t.test('an email identity already there is left as it is', async (t) => {
  const email = uniqueEmail('has-identity');
  const made = await api.request('POST', '/admin/users', { token: admin, body: { email, email_confirm: true } });
  t.equal(made.status, 200);
  await api.db.query(`update identities set identity_data = identity_data || '{"test": "untouched"}' where user_id = $1`, [made.body.id]);
  const before = await identitiesOf(api, made.body.id);
  t.equal((await adminPut(api, made.body.id, { password: NEW_PASSWORD })).status, 200);
  t.strictSame(await identitiesOf(api, made.body.id), before);
});

t.test('POST /admin/users with a password makes its one email identity, as it always did', async (t) => {
  const email = uniqueEmail('created');
  const made = await api.request('POST', '/admin/users', { token: admin, body: { email, password: NEW_PASSWORD, email_confirm: true } });
  t.equal(made.status, 200);
  t.strictSame(
    (await identitiesOf(api, made.body.id)).map((i) => [i.provider, i.email]),
    [['email', email]],
  );
});

t.test('an empty password is refused and adds nothing', async (t) => {
  const u = await googleUser(api);
  const res = await api.request('PUT', '/user', { token: (await u.auth.getSession()).data.session!.access_token, body: { password: '' } });
  t.equal(res.status, 422);
  t.equal(res.body.error_code, 'weak_password');
  t.equal((await adminPut(api, u.id, { password: '' })).status, 422);
  t.strictSame(
    (await identitiesOf(api, u.id)).map((i) => i.provider),
    ['google'],
  );
});

t.test('an SSO user given a password by an admin gets no identity', async (t) => {
  const u = await googleUser(api);
  await api.db.query('update users set is_sso_user = true where id = $1', [u.id]);
  t.equal((await adminPut(api, u.id, { password: NEW_PASSWORD })).status, 200);
  t.ok(await hasPassword(api, u.id));
  t.strictSame(
    (await identitiesOf(api, u.id)).map((i) => i.provider),
    ['google'],
  );
});

t.test('a request that fails after the password leaves neither password nor identity', async (t) => {
  const u = await googleUser(api);
  smtp.failNext(550, 'No such mailbox');
  const { error } = await u.auth.updateUser({ password: NEW_PASSWORD, email: uniqueEmail('bounces') });
  t.ok(error, 'the email change mail failed');
  t.notOk(await hasPassword(api, u.id));
  t.strictSame(
    (await identitiesOf(api, u.id)).map((i) => i.provider),
    ['google'],
  );
  t.strictSame(await providersOf(api, u.id), { provider: 'google', providers: ['google'] });
});

t.test('an anonymous user who gives an email and a password gets one email identity, from the address', async (t) => {
  const auth = authClient(anonApi.url);
  const anon = await auth.signInAnonymously();
  t.equal(anon.error, null);
  const email = uniqueEmail('was-anon');
  const { data, error } = await auth.updateUser({ email, password: NEW_PASSWORD });
  t.equal(error, null);
  t.equal(data.user?.is_anonymous, false);
  t.strictSame(
    (await identitiesOf(anonApi, anon.data.user!.id)).map((i) => [i.provider, i.email]),
    [['email', email]],
  );
});

t.test('setting off (the default): the password is set, no identity is added, by either route', async (t) => {
  const u = await googleUser(offApi);
  t.equal((await u.auth.updateUser({ password: NEW_PASSWORD })).error, null);
  const v = await googleUser(offApi);
  t.equal((await adminPut(offApi, v.id, { password: NEW_PASSWORD })).status, 200);
  for (const user of [u, v]) {
    t.ok(await hasPassword(offApi, user.id));
    t.strictSame(
      (await identitiesOf(offApi, user.id)).map((i) => i.provider),
      ['google'],
    );
    t.strictSame(await providersOf(offApi, user.id), { provider: 'google', providers: ['google'] });
  }
});

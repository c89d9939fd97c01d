// Identities and anonymous users driven as auth-js drives them (signInAnonymously, getUserIdentities,
// linkIdentity, unlinkIdentity, updateUser), each answer checked against the original's (internal/api/
// anonymous.go, identity.go, verify.go): what the user, its identities and its access token's is_anonymous
// say after every step. GitHub is played by the shared fake; mail goes to a real SMTP server.
import t from 'tap';
import { startMailStack, linkOf } from './helpers/passwordless.js';
import { startGithubFake, githubPerson } from './helpers/github.js';
import { callback, fragmentOf, queryOf, githubEnv } from './helpers/oauth.js';
import { authClient } from './helpers/auth-client.js';
import { confirmedUser } from './helpers/users.js';

const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());
const gh = await startGithubFake();
const stack = await startMailStack({
  ...githubEnv(gh),
  AUTH_SECURITY_MANUAL_LINKING_ENABLED: 'true',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
});
const { api, smtp } = stack;
t.teardown(async () => {
  await stack.stop();
  await gh.stop();
});

/** auth-js linkIdentity for GitHub, approved by the fake as `githubId`: the callback's final redirect. */
async function linkGithub(auth: ReturnType<typeof authClient>, githubId: number): Promise<URL> {
  gh.approveAs = githubId;
  const { data, error } = await auth.linkIdentity({ provider: 'github', options: { skipBrowserRedirect: true } });
  if (error) throw error;
  return (await callback(api, await gh.approve(data.url))).location;
}

t.test('signInAnonymously: an anonymous session (aal1, amr anonymous) whose user has no identity', async (t) => {
  const auth = authClient(api.url);
  const { data, error } = await auth.signInAnonymously({ options: { data: { theme: 'dark' } } });
  t.equal(error, null);
  t.match(data.user, {
    is_anonymous: true,
    role: 'authenticated',
    email: '',
    phone: '',
    app_metadata: {},
    user_metadata: { theme: 'dark' },
  });
  const claims = claimsOf(data.session!.access_token);
  t.match(claims, { is_anonymous: true, role: 'authenticated', aal: 'aal1' });
  t.strictSame(
    claims.amr.map((a: { method: string }) => a.method),
    ['anonymous'],
  );
  t.strictSame((await auth.getUserIdentities()).data, { identities: [] });
  const anyId = '6a3b6f1e-5e4c-4a43-9a0e-9f8f1a1b2c3d';
  t.strictSame((await api.request('DELETE', `/user/identities/${anyId}`, { token: data.session!.access_token })).body, {
    code: 422,
    error_code: 'single_identity_not_deletable',
    msg: 'User must have at least 1 identity after unlinking',
  });
});

t.test('an anonymous user linking a verified GitHub account: permanent with its address, also after a refresh', async (t) => {
  const auth = authClient(api.url);
  const anon = await auth.signInAnonymously();
  gh.users.set(101, githubPerson(101, 'Linked-Anon@example.com'));
  const f = fragmentOf(await linkGithub(auth, 101));
  t.match(claimsOf(f.access_token), { sub: anon.data.user!.id, is_anonymous: false, email: 'linked-anon@example.com' });
  const me = (await api.request('GET', '/user', { token: f.access_token })).body;
  t.match(me, { is_anonymous: false, email: 'linked-anon@example.com', app_metadata: { provider: 'github', providers: ['github'] } });
  t.ok(me.email_confirmed_at);
  const [identity] = me.identities;
  t.strictSame(
    Object.keys(identity),
    ['identity_id', 'id', 'user_id', 'identity_data', 'provider', 'last_sign_in_at', 'created_at', 'updated_at', 'email'],
    "the original's members and order",
  );
  t.match(identity, {
    id: '101',
    provider: 'github',
    email: 'linked-anon@example.com',
    identity_data: { sub: '101', email_verified: true },
  });
  // The session the anonymous sign-in started says so too once refreshed.
  const { data } = await auth.refreshSession();
  t.equal(claimsOf(data.session!.access_token).is_anonymous, false);
});

t.test(
  'an unverified GitHub address: 422 email_not_confirmed, and confirming it by the mail leaves the user anonymous, as the original',
  async (t) => {
    const auth = authClient(api.url);
    const anon = await auth.signInAnonymously();
    gh.users.set(102, githubPerson(102, 'unverified-anon@example.com', false));
    const refused = fragmentOf(await linkGithub(auth, 102));
    t.equal(refused.error_code, 'email_not_confirmed');
    t.equal(refused.error_description, 'Unverified email with github. A confirmation email has been sent to your github email');
    const mail = await smtp.waitForMail('unverified-anon@example.com');
    t.equal(linkOf(mail).type, 'signup');
    const verified = await api.request('GET', linkOf(mail).path);
    const session = fragmentOf(new URL(verified.headers.get('location')!));
    // The original's signup confirmation does not touch is_anonymous (only an email or phone change's does).
    t.match(claimsOf(session.access_token), { email: 'unverified-anon@example.com', is_anonymous: true });
    const { rows } = await api.db.query('select email_confirmed_at, is_anonymous from users where id = $1', [anon.data.user!.id]);
    t.ok(rows[0].email_confirmed_at);
    t.equal(rows[0].is_anonymous, true);
  },
);

t.test('linking a GitHub identity already linked: to the same user, to another user', async (t) => {
  gh.users.set(103, githubPerson(103, 'twice@example.com'));
  const owner = authClient(api.url);
  const s = await confirmedUser(api);
  await owner.setSession({ access_token: s.access_token, refresh_token: s.refresh_token });
  t.ok(fragmentOf(await linkGithub(owner, 103)).access_token);
  const again = queryOf(await linkGithub(owner, 103));
  t.match(again, { error_code: 'identity_already_exists', error_description: 'Identity is already linked' });
  const other = authClient(api.url);
  const o = await confirmedUser(api);
  await other.setSession({ access_token: o.access_token, refresh_token: o.refresh_token });
  const taken = queryOf(await linkGithub(other, 103));
  t.match(taken, { error_code: 'identity_already_exists', error_description: 'Identity is already linked to another user' });
});

t.test('unlinkIdentity: another user’s identity, a malformed id, then the email identity the email came from', async (t) => {
  gh.users.set(104, githubPerson(104, 'second-address@example.com'));
  gh.users.set(105, githubPerson(105, 'someone-else@example.com'));
  const auth = authClient(api.url);
  const s = await confirmedUser(api, 'primary-address@example.com');
  await auth.setSession({ access_token: s.access_token, refresh_token: s.refresh_token });
  await linkGithub(auth, 104);
  const stranger = authClient(api.url);
  await stranger.signInAnonymously();
  await linkGithub(stranger, 105);
  const strangers = (await stranger.getUserIdentities()).data!.identities;
  t.match((await auth.unlinkIdentity(strangers[0])).error, { status: 422, code: 'identity_not_found', message: "Identity doesn't exist" });
  const malformed = await api.request('DELETE', '/user/identities/not-a-uuid', { token: s.access_token });
  t.strictSame(malformed.body, { code: 404, error_code: 'validation_failed', msg: 'identity_id must be an UUID' });

  const identities = (await auth.getUserIdentities()).data!.identities;
  t.strictSame(identities.map((i) => i.provider).sort(), ['email', 'github']);
  const { data, error } = await auth.unlinkIdentity(identities.find((i) => i.provider === 'email')!);
  t.equal(error, null);
  t.strictSame(data, {});
  const me = (await api.request('GET', '/user', { token: s.access_token })).body;
  t.equal(me.email, 'second-address@example.com', "the remaining identity's address becomes the email");
  t.ok(me.email_confirmed_at, 'GitHub verified it');
  t.strictSame(me.app_metadata, { provider: 'github', providers: ['github'] });
  const last = (await auth.unlinkIdentity(me.identities[0])).error;
  t.match(last, { status: 422, code: 'single_identity_not_deletable' });
});

t.test('an anonymous user converting with updateUser({email}): email_change mail, permanent once it is confirmed', async (t) => {
  const auth = authClient(api.url);
  const anon = await auth.signInAnonymously();
  const { data, error } = await auth.updateUser({ email: 'converted@example.com' });
  t.equal(error, null);
  t.match(data.user, { email: '', new_email: 'converted@example.com', is_anonymous: true });
  const mail = await smtp.waitForMail('converted@example.com');
  t.equal(linkOf(mail).type, 'email_change');
  const verified = await api.request('GET', linkOf(mail).path);
  const session = fragmentOf(new URL(verified.headers.get('location')!));
  t.match(claimsOf(session.access_token), {
    is_anonymous: false,
    email: 'converted@example.com',
    app_metadata: { provider: 'email', providers: ['email'] },
  });
  const { data: refreshed } = await auth.refreshSession();
  t.match(claimsOf(refreshed.session!.access_token), { sub: anon.data.user!.id, is_anonymous: false });
});

t.test('MAILER_AUTOCONFIRM / SMS_AUTOCONFIRM: the address is taken at once, app_metadata left as it was', async (t) => {
  const auto = await startMailStack(
    { AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true', AUTH_MAILER_AUTOCONFIRM: 'true', AUTH_SMS_AUTOCONFIRM: 'true' },
    { sms: true },
  );
  t.teardown(() => auto.stop());
  const byEmail = authClient(auto.api.url);
  await byEmail.signInAnonymously();
  const email = await byEmail.updateUser({ email: 'Auto-Converted@example.com' });
  t.match(email.data.user, { email: 'auto-converted@example.com', is_anonymous: false, app_metadata: {} });
  t.strictSame(
    email.data.user?.identities?.map((i) => i.provider),
    ['email'],
  );
  const { data } = await byEmail.refreshSession();
  t.match(claimsOf(data.session!.access_token), { is_anonymous: false, app_metadata: {} });

  const byPhone = authClient(auto.api.url);
  await byPhone.signInAnonymously();
  const phone = await byPhone.updateUser({ phone: '+15555550123' });
  t.match(phone.data.user, { phone: '15555550123', is_anonymous: false, app_metadata: {} });
  t.ok(phone.data.user?.phone_confirmed_at);
});

t.test('manual linking off: both identity routes 404 manual_linking_disabled, auth-js reads the code', async (t) => {
  const off = await startMailStack({ AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true' });
  t.teardown(() => off.stop());
  const auth = authClient(off.api.url);
  const { data } = await auth.signInAnonymously();
  const link = await auth.linkIdentity({ provider: 'github', options: { skipBrowserRedirect: true } });
  t.match(link, {
    data: { provider: 'github', url: null },
    error: { status: 404, code: 'manual_linking_disabled', message: 'Manual linking is disabled' },
  });
  // Checked before the identity id is read, as the original's route middleware does.
  const unlink = await off.api.request('DELETE', '/user/identities/not-a-uuid', { token: data.session!.access_token });
  t.strictSame(unlink.body, { code: 404, error_code: 'manual_linking_disabled', msg: 'Manual linking is disabled' });
});

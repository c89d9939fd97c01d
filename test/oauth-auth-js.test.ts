// External sign-in driven by the real @supabase/auth-js client, as an app does it: signInWithOAuth (implicit
// and PKCE with exchangeCodeForSession), signInWithIdToken, linkIdentity (by redirect and by id_token),
// getUserIdentities and unlinkIdentity. The browser's part is played over HTTP: the URL auth-js returns
// (skipBrowserRedirect) is followed to the provider, and the provider's answer is replayed at /callback.
import t from 'tap';
import { createHash } from 'node:crypto';
import { startTestService } from './helpers/server.js';
import { startGithubFake } from './helpers/github.js';
import { startOidcProvider, REDIRECT_URI } from './helpers/oidc-provider.js';
import { authClient } from './helpers/auth-client.js';
import { callback, fragmentOf, providerEnv, githubEnv } from './helpers/oauth.js';

const gh = await startGithubFake();
const google = await startOidcProvider();
const api = await startTestService({
  ...githubEnv(gh),
  ...providerEnv('google', { clientId: google.clientId, secret: google.clientSecret, redirectUri: REDIRECT_URI, url: google.issuer }),
  AUTH_SECURITY_MANUAL_LINKING_ENABLED: 'true',
  AUTH_EXTERNAL_ANONYMOUS_USERS_ENABLED: 'true',
  AUTH_MAILER_AUTOCONFIRM: 'true',
  AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
});
t.teardown(async () => {
  await api.stop();
  await gh.stop();
  await google.stop();
});

gh.users.set(7, {
  id: 7,
  login: 'sam',
  name: 'Sam S',
  avatar_url: 'https://avatars.example.test/7',
  emails: [{ email: 'sam@example.com', primary: true, verified: true, visibility: 'public' }],
});
google.accounts.set('gs-1', { sub: 'gs-1', email: 'pia@example.com', email_verified: true, name: 'Pia P' });

/** The browser following auth-js's /authorize URL: the service's 302 to the provider. */
async function providerUrlOf(authorizeUrl: string): Promise<string> {
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) throw new Error(`/authorize answered ${res.status}: ${await res.text()}`);
  return location;
}

t.test('signInWithOAuth (implicit): the session arrives in the fragment and the client adopts it', async (t) => {
  const auth = authClient(api.url);
  const { data, error } = await auth.signInWithOAuth({
    provider: 'github',
    options: { redirectTo: 'https://app.example.test/home', skipBrowserRedirect: true },
  });
  t.equal(error, null);
  t.match(data.url, `${api.url}/authorize?provider=github`);
  gh.approveAs = 7;
  const { location } = await callback(api, await gh.approve(await providerUrlOf(data.url!)));
  t.equal(location.origin + location.pathname, 'https://app.example.test/home');
  const f = fragmentOf(location);
  const set = await auth.setSession({ access_token: f.access_token, refresh_token: f.refresh_token });
  t.equal(set.error, null);
  const { data: user } = await auth.getUser();
  t.equal(user.user?.email, 'sam@example.com');
  t.equal(user.user?.app_metadata.provider, 'github');
});

t.test('signInWithOAuth (PKCE): ?code= then exchangeCodeForSession, with provider_token', async (t) => {
  const auth = authClient(api.url, { flowType: 'pkce' });
  const { data } = await auth.signInWithOAuth({ provider: 'google', options: { skipBrowserRedirect: true, scopes: 'openid' } });
  t.match(data.url, 'code_challenge=');
  const { location } = await callback(api, await google.signIn(await providerUrlOf(data.url!), 'gs-1'));
  const code = location.searchParams.get('code');
  t.ok(code, location.href);
  const exchanged = await auth.exchangeCodeForSession(code!);
  t.equal(exchanged.error, null);
  t.equal(exchanged.data.user?.email, 'pia@example.com');
  t.ok(exchanged.data.session?.provider_token, 'the provider token comes with the pkce grant');
  t.equal((await auth.getUser()).data.user?.email, 'pia@example.com');
});

t.test('MAILER_AUTOCONFIRM confirms an address Google did not verify, and user_metadata says so as the original writes it', async (t) => {
  const auth = authClient(api.url);
  const token = await google.signIdToken({ sub: 'gs-unverified-auto', email: 'auto-unverified@example.com', email_verified: false });
  const { data, error } = await auth.signInWithIdToken({ provider: 'google', token });
  t.equal(error, null);
  t.ok(data.user?.email_confirmed_at);
  t.equal(data.user?.user_metadata.email_verified, true);
  t.equal(data.user?.identities?.[0].identity_data?.email_verified, false, 'the identity keeps what the provider said');
});

t.test('signInWithIdToken: a Google id_token with its nonce', async (t) => {
  const auth = authClient(api.url);
  const nonce = 'n-0123456789';
  const token = await google.signIdToken({
    sub: 'gs-2',
    email: 'ida@example.com',
    email_verified: true,
    nonce: createHash('sha256').update(nonce).digest('hex'),
  });
  const { data, error } = await auth.signInWithIdToken({ provider: 'google', token, nonce });
  t.equal(error, null);
  t.equal(data.user?.email, 'ida@example.com');
  const wrong = await auth.signInWithIdToken({ provider: 'google', token, nonce: 'not-the-nonce' });
  t.equal(wrong.error?.message, 'Nonces mismatch');
  t.equal(wrong.error?.status, 400);
});

t.test('linkIdentity, getUserIdentities, unlinkIdentity', async (t) => {
  const auth = authClient(api.url, { flowType: 'pkce' });
  const signed = await auth.signUp({ email: 'linker@example.com', password: 'Secret-password-1' });
  t.equal(signed.error, null);
  gh.users.set(8, {
    id: 8,
    login: 'linker-gh',
    name: 'Linker',
    avatar_url: 'https://avatars.example.test/8',
    emails: [{ email: 'linker-elsewhere@example.com', primary: true, verified: true, visibility: null }],
  });
  const { data, error } = await auth.linkIdentity({ provider: 'github', options: { skipBrowserRedirect: true } });
  t.equal(error, null);
  t.match(data.url, `${gh.base}/login/oauth/authorize?`);
  gh.approveAs = 8;
  const { location } = await callback(api, await gh.approve(data.url!));
  const linked = await auth.exchangeCodeForSession(location.searchParams.get('code')!);
  t.equal(linked.error, null, location.href);
  t.equal(linked.data.user?.email, 'linker@example.com', 'still the same account');

  const identities = await auth.getUserIdentities();
  t.same(identities.data?.identities.map((i) => i.provider).sort(), ['email', 'github']);
  const githubIdentity = identities.data!.identities.find((i) => i.provider === 'github')!;
  const unlinked = await auth.unlinkIdentity(githubIdentity);
  t.equal(unlinked.error, null);
  await auth.refreshSession();
  const after = await auth.getUserIdentities();
  t.same(
    after.data?.identities.map((i) => i.provider),
    ['email'],
  );
  const last = await auth.unlinkIdentity(after.data!.identities[0]);
  t.equal(last.error?.code, 'single_identity_not_deletable');
  t.equal(last.error?.status, 422);
});

t.test('GET /user/identities/authorize: 302 to the provider, or {url} with skip_http_redirect=true, as the original', async (t) => {
  const auth = authClient(api.url);
  const signed = await auth.signUp({ email: 'redirected-linker@example.com', password: 'Secret-password-1' });
  const token = signed.data.session!.access_token;
  const redirected = await api.request('GET', '/user/identities/authorize?provider=github', { token });
  t.equal(redirected.status, 302);
  t.match(redirected.headers.get('location'), `${gh.base}/login/oauth/authorize?`);
  const asked = await api.request('GET', '/user/identities/authorize?provider=github&skip_http_redirect=true', { token });
  t.equal(asked.status, 200);
  t.match(asked.body.url, `${gh.base}/login/oauth/authorize?`);
});

t.test('an anonymous user who links a provider becomes a permanent user with its verified address', async (t) => {
  const auth = authClient(api.url);
  const anon = await auth.signInAnonymously();
  t.equal(anon.error, null);
  t.equal(anon.data.user?.is_anonymous, true);
  google.accounts.set('gs-anon', { sub: 'gs-anon', email: 'was-anon@example.com', email_verified: true });
  const { data } = await auth.linkIdentity({ provider: 'google', options: { skipBrowserRedirect: true } });
  const { location } = await callback(api, await google.signIn(data.url!, 'gs-anon'));
  const f = fragmentOf(location);
  t.ok(f.access_token, location.href);
  const me = await api.request('GET', '/user', { token: f.access_token });
  t.equal(me.body.id, anon.data.user?.id, 'the same user');
  t.equal(me.body.is_anonymous, false);
  t.equal(me.body.email, 'was-anon@example.com');
});

t.test('linkIdentity of an identity that belongs to another user: identity_already_exists in the redirect', async (t) => {
  const auth = authClient(api.url);
  await auth.signUp({ email: 'second@example.com', password: 'Secret-password-1' });
  const { data } = await auth.linkIdentity({ provider: 'github', options: { skipBrowserRedirect: true } });
  gh.approveAs = 7; // sam's GitHub account, already signed up above
  const { location } = await callback(api, await gh.approve(data.url!));
  t.equal(fragmentOf(location).error_code, 'identity_already_exists');
  t.equal(fragmentOf(location).error_description, 'Identity is already linked to another user');
});

t.test('linkIdentity with an id_token', async (t) => {
  const auth = authClient(api.url);
  await auth.signUp({ email: 'tokenlinker@example.com', password: 'Secret-password-1' });
  const token = await google.signIdToken({ sub: 'gs-link', email: 'other-address@example.com', email_verified: true });
  const { data, error } = await auth.linkIdentity({ provider: 'google', token });
  t.equal(error, null);
  t.equal(data.user?.email, 'tokenlinker@example.com');
  t.same(data.user?.identities?.map((i) => i.provider).sort(), ['email', 'google']);
});

t.test('unlinking the identity the email came from: the next address becomes the email, unless another user holds it', async (t) => {
  const auth = authClient(api.url);
  const { data } = await auth.signUp({ email: 'mover@example.com', password: 'Secret-password-1' });
  const userId = data.user!.id;
  await api.db.query(
    `insert into identities (provider_id, user_id, identity_data, provider) values ('gh-mover', $1, '{"email": "mover-gh@example.com", "email_verified": true}', 'github')`,
    [userId],
  );
  const emailIdentity = (await auth.getUserIdentities()).data!.identities.find((i) => i.provider === 'email')!;
  // Written directly: a sign-up with the address is now refused, as in the original, since the identity holds it.
  const holder = await api.db.query(
    `insert into users (aud, role, email, email_confirmed_at) values ('authenticated', 'authenticated', 'mover-gh@example.com', now()) returning id`,
  );
  const conflict = await auth.unlinkIdentity(emailIdentity);
  t.equal(conflict.error?.code, 'email_conflict_identity_not_deletable');
  await api.db.query('delete from users where id = $1', [holder.rows[0].id]);
  const moved = await auth.unlinkIdentity(emailIdentity);
  t.equal(moved.error, null);
  const row = (await api.db.query('select email, raw_app_meta_data from users where id = $1', [userId])).rows[0];
  t.equal(row.email, 'mover-gh@example.com');
  t.same(row.raw_app_meta_data.providers, ['github']);
});

t.test('DELETE /user/identities/{id}: an id that is not a UUID, an identity of someone else', async (t) => {
  const auth = authClient(api.url);
  const { data } = await auth.signUp({ email: 'deleter@example.com', password: 'Secret-password-1' });
  const token = data.session!.access_token;
  const bad = await api.request('DELETE', '/user/identities/not-a-uuid', { token });
  t.same(bad.body, { code: 404, error_code: 'validation_failed', msg: 'identity_id must be an UUID' });
  const foreign = (await api.db.query(`select id from identities where provider = 'github' limit 1`)).rows[0].id;
  await api.db.query(`insert into identities (provider_id, user_id, identity_data, provider) values ('x-1', $1, '{}', 'google')`, [
    data.user!.id,
  ]);
  const other = await api.request('DELETE', `/user/identities/${foreign}`, { token });
  t.same(other.body, { code: 422, error_code: 'identity_not_found', msg: "Identity doesn't exist" });
  // Any spelling the original's UUID reading takes names the identity: here braces, upper-case hex.
  const google = (await api.db.query(`select id from identities where provider_id = 'x-1'`)).rows[0].id as string;
  const braced = await api.request('DELETE', `/user/identities/%7B${google.toUpperCase()}%7D`, { token });
  t.equal(braced.status, 200, braced.text);
  t.equal((await api.db.query('select 1 from identities where id = $1', [google])).rowCount, 0, 'unlinked');
});

// Signing in with providers registered at run time, end to end: each provider is created through
// @supabase/auth-js's admin API (GoTrueAdminApi.customProviders), then a user signs in with
// signInWithOAuth({provider: 'custom:...'}) while the test plays the browser (auth-js's URL, the service's
// 302, the provider's pages, the callback). An OIDC provider (a real oidc-provider: discovery, PKCE,
// id_token verified against its JWKS) and a plain OAuth2 provider (a small server in the RFC 6749 wire
// format: PKCE, userinfo, attribute mapping, claims allowlist); linking with linkIdentity; disabling and
// deleting a provider taking effect on the next request; the id_token grant reading a custom provider's token;
// a provider without a stored discovery document whose issuer never answers, refused before the deadline.
import t from 'tap';
import net from 'node:net';
import { GoTrueAdminApi } from '@supabase/auth-js';
import { startTestService } from './helpers/server.js';
import { startOidcProvider, REDIRECT_URI } from './helpers/oidc-provider.js';
import { startOAuth2Server } from './helpers/oauth2-server.js';
import { authClient } from './helpers/auth-client.js';
import { adminToken } from './helpers/admin.js';
import { callback, fragmentOf, queryOf } from './helpers/oauth.js';

const idp = await startOidcProvider({ clientId: 'acme-client' });
const plain = await startOAuth2Server();
const env = {
  AUTH_CUSTOM_OAUTH_ALLOW_PRIVATE_URLS: 'true',
  // The providers send the browser back to <this>/callback, the redirect URI registered with them.
  AUTH_CUSTOM_OAUTH_EXTERNAL_URL: REDIRECT_URI.replace(/\/callback$/, ''),
  AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
  AUTH_SECURITY_MANUAL_LINKING_ENABLED: 'true',
  AUTH_MAILER_AUTOCONFIRM: 'true',
};
const api = await startTestService(env);
const admin = new GoTrueAdminApi({ url: api.url, headers: { Authorization: `Bearer ${await adminToken()}` } });
t.teardown(async () => {
  await api.stop();
  await Promise.all([idp.stop(), plain.stop()]);
});

idp.accounts.set('ada-1', { sub: 'ada-1', email: 'ada@example.com', email_verified: true, name: 'Ada L', preferred_username: 'ada' });
idp.accounts.set('bo-2', { sub: 'bo-2', email: 'bo@example.com', email_verified: true, name: 'Bo B' });

const created = await admin.customProviders.createProvider({
  provider_type: 'oidc',
  identifier: 'custom:acme',
  name: 'Acme',
  client_id: idp.clientId,
  client_secret: idp.clientSecret,
  issuer: idp.issuer,
  scopes: ['email', 'profile'],
  attribute_mapping: { nickname: 'preferred_username' },
  custom_claims_allowlist: ['preferred_username'],
});
if (created.error) throw created.error;
const createdPlain = await admin.customProviders.createProvider({
  provider_type: 'oauth2',
  identifier: 'custom:plain',
  name: 'Plain',
  client_id: plain.clientId,
  client_secret: plain.clientSecret,
  authorization_url: `${plain.base}/oauth/authorize`,
  token_url: `${plain.base}/oauth/token`,
  userinfo_url: `${plain.base}/api/me`,
  scopes: ['read:user', 'email'],
  authorization_params: { prompt: 'consent' },
  // As the original maps: over its fixed claim set, so `display_name` (not in the set) maps nothing, and a
  // target outside the set (`team`) is dropped; `nickname` from `preferred_username` is copied.
  attribute_mapping: { name: 'display_name', nickname: 'preferred_username', team: 'name' },
  custom_claims_allowlist: ['groups', 'absent'],
});
if (createdPlain.error) throw createdPlain.error;

/** The browser following the service's /authorize URL: its 302 to the provider. */
async function providerUrlOf(authorizeUrl: string): Promise<URL> {
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  const location = res.headers.get('location');
  if (res.status !== 302 || !location) throw new Error(`/authorize answered ${res.status}: ${await res.text()}`);
  return new URL(location);
}

/** The plain provider approving at once: its redirect back to the callback, as the browser gets it. */
async function plainApproves(providerUrl: URL): Promise<URLSearchParams> {
  const res = await fetch(providerUrl, { redirect: 'manual' });
  return new URL(res.headers.get('location')!).searchParams;
}

t.test('OIDC, PKCE: signInWithOAuth, the provider sign-in, exchangeCodeForSession', async (t) => {
  const auth = authClient(api.url, { flowType: 'pkce' });
  const { data, error } = await auth.signInWithOAuth({
    provider: 'custom:acme',
    options: { skipBrowserRedirect: true, redirectTo: 'https://app.example.test/home' },
  });
  t.equal(error, null);
  const providerUrl = await providerUrlOf(data.url!);
  t.equal(providerUrl.origin + providerUrl.pathname, `${idp.base}/auth`, 'the authorization endpoint of the stored discovery document');
  t.equal(providerUrl.searchParams.get('scope'), 'openid email profile');
  t.equal(providerUrl.searchParams.get('redirect_uri'), REDIRECT_URI);
  t.equal(providerUrl.searchParams.get('code_challenge_method'), 'S256', 'PKCE towards the provider');
  t.not(
    providerUrl.searchParams.get('code_challenge'),
    new URL(data.url!).searchParams.get('code_challenge'),
    'its own pair, not the client’s',
  );

  // oidc-provider refuses the code exchange unless the verifier of that challenge comes with it.
  const { location } = await callback(api, await idp.signIn(providerUrl.href, 'ada-1'));
  t.equal(location.origin + location.pathname, 'https://app.example.test/home');
  const code = location.searchParams.get('code');
  t.ok(code, location.href);
  const exchanged = await auth.exchangeCodeForSession(code!);
  t.equal(exchanged.error, null);
  const user = exchanged.data.user!;
  t.equal(user.email, 'ada@example.com');
  t.ok(user.email_confirmed_at, 'the provider verified the address');
  t.equal(user.app_metadata.provider, 'custom:acme');
  t.match(user.identities, [
    {
      provider: 'custom:acme',
      id: 'ada-1',
      identity_data: {
        iss: idp.issuer,
        sub: 'ada-1',
        email: 'ada@example.com',
        email_verified: true,
        name: 'Ada L',
        nickname: 'ada',
        custom_claims: { preferred_username: 'ada' },
      },
    },
  ]);
  t.ok(exchanged.data.session?.provider_token, 'the provider access token comes with the session');
});

t.test('OIDC, implicit: the session in the fragment; the same identity signs in the same user again', async (t) => {
  const first = await signInImplicit('bo-2');
  const second = await signInImplicit('bo-2');
  const me = await api.request('GET', '/user', { token: first.access_token });
  t.equal(me.body.email, 'bo@example.com');
  t.equal((await api.request('GET', '/user', { token: second.access_token })).body.id, me.body.id);
});

async function signInImplicit(sub: string) {
  const auth = authClient(api.url);
  const { data } = await auth.signInWithOAuth({ provider: 'custom:acme', options: { skipBrowserRedirect: true } });
  const { location } = await callback(api, await idp.signIn((await providerUrlOf(data.url!)).href, sub));
  return fragmentOf(location);
}

t.test('OAuth2: the stored endpoints, scopes and parameters, PKCE, userinfo with mapping and allowlist', async (t) => {
  plain.approveAs = {
    sub: 'u-42',
    email: 'cy@example.com',
    email_verified: true,
    preferred_username: 'cyc',
    display_name: 'Cy C',
    name: 'Cy Real',
    phone_number: '+15550100',
    groups: ['staff'],
    plan: 'gold',
  };
  const auth = authClient(api.url);
  const { data } = await auth.signInWithOAuth({ provider: 'custom:plain', options: { skipBrowserRedirect: true } });
  const providerUrl = await providerUrlOf(data.url!);
  t.equal(providerUrl.origin + providerUrl.pathname, `${plain.base}/oauth/authorize`);
  t.same([...providerUrl.searchParams.keys()].sort(), [
    'client_id',
    'code_challenge',
    'code_challenge_method',
    'prompt',
    'redirect_uri',
    'response_type',
    'scope',
    'state',
  ]);
  t.equal(providerUrl.searchParams.get('scope'), 'read:user email');
  t.equal(providerUrl.searchParams.get('prompt'), 'consent');
  const { location } = await callback(api, await plainApproves(providerUrl));
  const tokenRequest = plain.tokenRequests.at(-1)!;
  t.equal(tokenRequest.get('grant_type'), 'authorization_code');
  t.ok(tokenRequest.get('code_verifier'), 'the verifier went with the code (the server checked it)');
  const session = fragmentOf(location);
  t.ok(session.access_token, location.href);
  const me = await api.request('GET', '/user', { token: session.access_token });
  t.equal(me.body.email, 'cy@example.com');
  t.match(me.body.identities, [
    {
      provider: 'custom:plain',
      id: 'u-42',
      identity_data: { sub: 'u-42', preferred_username: 'cyc', nickname: 'cyc', name: 'Cy Real', custom_claims: { groups: ['staff'] } },
    },
  ]);
  const stored = me.body.identities[0].identity_data;
  t.notOk('plan' in stored.custom_claims, 'claims outside the allowlist are not kept');
  for (const key of ['display_name', 'team', 'phone_number', 'plan', 'full_name', 'provider_id']) {
    t.notOk(key in stored, `no ${key}: outside the claim set, and nothing derived`);
  }
  t.equal(stored.phone_verified, false, 'both flags are stored, as the original stores its claims');
});

t.test('linkIdentity: a signed-in user adds a custom provider identity to their account', async (t) => {
  const auth = authClient(api.url);
  const signUp = await auth.signUp({ email: 'dee@example.com', password: 'correct-horse-battery-1' });
  t.equal(signUp.error, null);
  plain.approveAs = { sub: 'u-77', email: 'dee-at-plain@example.com', email_verified: true };
  const { data, error } = await auth.linkIdentity({ provider: 'custom:plain', options: { skipBrowserRedirect: true } });
  t.equal(error, null);
  const { location } = await callback(api, await plainApproves(new URL(data.url!)));
  t.ok(fragmentOf(location).access_token, location.href);
  const identities = await auth.getUserIdentities();
  t.same(identities.data?.identities.map((i) => i.provider).sort(), ['custom:plain', 'email']);
});

t.test('disabling and deleting a provider take effect on the next request', async (t) => {
  const started = await api.request('GET', '/authorize?provider=custom:plain');
  t.equal(started.status, 302, 'a sign-in under way');

  t.equal((await admin.customProviders.updateProvider('custom:plain', { enabled: false })).error, null);
  // auth-js reads the change back: one provider, and the list filtered by type.
  t.match((await admin.customProviders.getProvider('custom:plain')).data, { identifier: 'custom:plain', enabled: false });
  const listed = await admin.customProviders.listProviders({ type: 'oauth2' });
  t.strictSame(
    listed.data.providers.map((p) => [p.identifier, p.enabled]),
    [['custom:plain', false]],
  );
  const disabled = await api.request('GET', '/authorize?provider=custom:plain');
  t.same(disabled.body, {
    code: 400,
    error_code: 'validation_failed',
    msg: 'Unsupported provider: custom provider custom:plain is disabled',
  });
  t.equal((await admin.customProviders.updateProvider('custom:plain', { enabled: true })).error, null);
  t.equal((await api.request('GET', '/authorize?provider=custom:plain')).status, 302, 'enabled again');

  t.equal((await admin.customProviders.deleteProvider('custom:plain')).error, null);
  t.match((await admin.customProviders.getProvider('custom:plain')).error, { status: 404, code: 'custom_provider_not_found' });
  t.strictSame((await admin.customProviders.listProviders({ type: 'oauth2' })).data.providers, []);
  const gone = await api.request('GET', '/authorize?provider=custom:plain');
  t.same(gone.body, { code: 400, error_code: 'validation_failed', msg: 'Unsupported provider: custom provider custom:plain not found' });
  // The sign-in started before the delete comes back to a provider that no longer exists.
  const { location } = await callback(api, await plainApproves(new URL(started.headers.get('location')!)));
  t.match(queryOf(location), { error: 'invalid_request', error_code: 'oauth_provider_not_supported' });
  const unknown = await api.request('GET', '/authorize?provider=custom:never-made');
  t.same(unknown.body, {
    code: 400,
    error_code: 'validation_failed',
    msg: 'Unsupported provider: custom provider custom:never-made not found',
  });
});

t.test('another instance on the same database sees a change made through this one at once', async (t) => {
  const other = await startTestService({
    ...env,
    DATABASE_URL: (api.db as unknown as { options: { connectionString: string } }).options.connectionString,
  });
  t.teardown(() => other.stop());
  t.equal((await other.request('GET', '/authorize?provider=custom:acme')).status, 302);
  t.equal((await admin.customProviders.updateProvider('custom:acme', { enabled: false })).error, null);
  const refused = await other.request('GET', '/authorize?provider=custom:acme');
  t.same(refused.body, {
    code: 400,
    error_code: 'validation_failed',
    msg: 'Unsupported provider: custom provider custom:acme is disabled',
  });
  t.equal((await admin.customProviders.updateProvider('custom:acme', { enabled: true })).error, null);
  t.equal((await other.request('GET', '/authorize?provider=custom:acme')).status, 302);
});

t.test('the id_token grant takes custom providers but, as the original, applies no attribute_mapping nor allowlist', async (t) => {
  const token = await idp.signIdToken({ sub: 'eve-5', email: 'eve-grant@example.com', email_verified: true, preferred_username: 'eve' });
  const res = await api.request('POST', '/token?grant_type=id_token', { body: { provider: 'custom:acme', id_token: token } });
  t.equal(res.status, 200, res.text);
  const identity = res.body.user.identities.find((i: { provider: string }) => i.provider === 'custom:acme');
  t.match(identity, { id: 'eve-5', identity_data: { preferred_username: 'eve', email: 'eve-grant@example.com' } });
  t.notOk(identity.identity_data.nickname, 'attribute_mapping is not applied');
  t.notOk(identity.identity_data.custom_claims, 'the allowlist is not applied');
});

t.test(
  "a row's first discovery slower than the request deadline: /authorize, /callback and the grant answer its refusal, no 504",
  async (t) => {
    // A row written outside the admin API holds no discovery document: each sign-in fetches it, within its own
    // 10 s, far past this deadline. Without the cap the deadline's 504 always came first.
    const silent = net.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentUrl = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}/.well-known/openid-configuration`;
    const hurried = await startTestService({
      ...env,
      DATABASE_URL: (api.db as unknown as { options: { connectionString: string } }).options.connectionString,
      AUTH_API_MAX_REQUEST_DURATION: '1',
    });
    const made = await admin.customProviders.createProvider({
      provider_type: 'oidc',
      identifier: 'custom:stalled',
      name: 'Stalled',
      client_id: plain.clientId,
      client_secret: plain.clientSecret,
      issuer: plain.base,
    });
    if (made.error) throw made.error;
    t.teardown(async () => {
      await admin.customProviders.deleteProvider('custom:stalled');
      await hurried.stop();
      silent.close();
    });
    // A sign-in under way, started while the row still held its document.
    const started = await hurried.request('GET', '/authorize?provider=custom:stalled');
    t.equal(started.status, 302, started.text);
    await api.db.query(
      `update custom_oauth_providers set cached_discovery = null, discovery_url = $1 where identifier = 'custom:stalled'`,
      [silentUrl],
    );
    const refusal = {
      code: 400,
      error_code: 'validation_failed',
      msg: `OIDC discovery from "${silentUrl}" failed: no answer before the request deadline`,
    };

    const authorize = await hurried.request('GET', '/authorize?provider=custom:stalled');
    t.same([authorize.status, authorize.body], [400, refusal]);

    plain.approveAs = { sub: 'stalled-1', email: 'stalled@example.com', email_verified: true };
    const { status, location } = await callback(hurried, await plainApproves(new URL(started.headers.get('location')!)));
    t.equal(status, 302);
    t.match(queryOf(location), { error: 'invalid_request', error_code: 'validation_failed', error_description: refusal.msg });

    // The provider is refused before its token is looked at.
    const grant = await hurried.request('POST', '/token?grant_type=id_token', { body: { provider: 'custom:stalled', id_token: 'a.b.c' } });
    t.same([grant.status, grant.body], [400, refusal]);
    t.equal((await api.db.query(`select 1 from users where email = 'stalled@example.com'`)).rowCount, 0, 'nobody signed in');
  },
);

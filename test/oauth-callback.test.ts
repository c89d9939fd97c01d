// GET /authorize → provider → GET /callback with GitHub (a local server speaking GitHub's wire format) and
// Google's OpenID Connect path (a real oidc-provider found by discovery): sign-up, sign-in, the session in
// the fragment, PKCE with provider_token from the pkce grant, and the flow state spent by its callback.
import t from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { startTestService } from './helpers/server.js';
import { githubPerson, startGithubFake } from './helpers/github.js';
import { startOidcProvider, REDIRECT_URI } from './helpers/oidc-provider.js';
import { authorizeUrl, callback, fragmentOf, providerEnv, queryOf, githubEnv } from './helpers/oauth.js';

const gh = await startGithubFake();
const oidc = await startOidcProvider();
const api = await startTestService({
  ...githubEnv(gh),
  ...providerEnv('google', { clientId: oidc.clientId, secret: oidc.clientSecret, redirectUri: REDIRECT_URI, url: oidc.issuer }),
  AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
});
t.teardown(async () => {
  await api.stop();
  await gh.stop();
  await oidc.stop();
});

gh.users.set(101, {
  id: 101,
  login: 'octo',
  name: 'Octo Cat',
  avatar_url: 'https://avatars.example.test/101',
  emails: [
    { email: 'octo-work@example.com', primary: false, verified: true, visibility: null },
    { email: 'Octo@Example.com', primary: true, verified: true, visibility: 'public' },
  ],
});
oidc.accounts.set('g-1', { sub: 'g-1', email: 'gina@example.com', email_verified: true, name: 'Gina G' });

t.test(
  'GET /authorize sends the browser to the provider with client id, redirect URI, scopes and a flow-state UUID as state',
  async (t) => {
    const url = await authorizeUrl(api, 'provider=github&scopes=repo,read:org&redirect_to=https://app.example.test/welcome&login=octo');
    t.equal(url.origin + url.pathname, `${gh.base}/login/oauth/authorize`);
    const q = queryOf(url);
    t.equal(q.client_id, gh.clientId);
    t.equal(q.redirect_uri, REDIRECT_URI);
    t.equal(q.response_type, 'code');
    t.equal(q.scope, 'user:email repo read:org', 'default scopes first, then the requested ones');
    t.equal(q.login, 'octo', 'other query parameters are passed on');
    t.match(q.state, /^[0-9a-f-]{36}$/);
    const { rows } = await api.db.query('select provider_type, referrer, authentication_method from flow_state where id = $1', [q.state]);
    t.same(rows, [{ provider_type: 'github', referrer: 'https://app.example.test/welcome', authentication_method: 'oauth' }]);
  },
);

t.test("parameters the service sets never reach the provider from the client's query, in any case; nonce does", async (t) => {
  const url = await authorizeUrl(
    api,
    'provider=github&Redirect_URI=https://evil.example/cb&STATE=pinned&Client_Id=other&Response_Type=token' +
      '&Code_Challenge=c&code_VERIFIER=v&nonce=n-1',
  );
  const q = queryOf(url);
  t.equal(q.redirect_uri, REDIRECT_URI);
  t.equal(q.client_id, gh.clientId);
  t.equal(q.response_type, 'code');
  t.match(q.state, /^[0-9a-f-]{36}$/);
  t.strictSame(
    [...url.searchParams.keys()].filter((k) => k !== k.toLowerCase()),
    [],
    'no upper- or mixed-case copy of a reserved parameter is passed on',
  );
  t.notOk(url.searchParams.has('code_challenge') || url.searchParams.has('code_verifier'));
  t.equal(q.nonce, 'n-1', 'a per-request nonce passes through, as in the original');
});

t.test('without redirect_to, an allowed Referer is where the flow returns, as the original reads it', async (t) => {
  const res = await api.request('GET', '/authorize?provider=github', { headers: { referer: 'https://app.example.test/login' } });
  t.equal(res.status, 302);
  const state = queryOf(new URL(res.headers.get('location')!)).state;
  const { rows } = await api.db.query('select referrer from flow_state where id = $1', [state]);
  t.same(rows, [{ referrer: 'https://app.example.test/login' }]);
});

t.test(
  'skip_http_redirect=true changes nothing on /authorize: still the 302, as the original (only /user/identities/authorize reads it)',
  async (t) => {
    const res = await api.request('GET', '/authorize?provider=github&skip_http_redirect=true');
    t.equal(res.status, 302);
    t.match(res.headers.get('location'), `${gh.base}/login/oauth/authorize?`);
  },
);

t.test('unknown and disabled providers are the original 400 validation_failed', async (t) => {
  const unknown = await api.request('GET', '/authorize?provider=myspace');
  t.equal(unknown.status, 400);
  t.same(unknown.body, { code: 400, error_code: 'validation_failed', msg: 'Unsupported provider: Provider myspace could not be found' });
  const capitalised = await api.request('GET', '/authorize?provider=GitHub');
  t.equal(capitalised.status, 302, 'a provider name in another case is the same provider');
  const disabled = await api.request('GET', '/authorize?provider=azure');
  t.same(disabled.body, { code: 400, error_code: 'validation_failed', msg: 'Unsupported provider: provider is not enabled' });
});

t.test('github: first sign-in creates the user with a confirmed email, identity data and a session in the fragment', async (t) => {
  gh.approveAs = 101;
  const url = await authorizeUrl(api, 'provider=github&redirect_to=https://app.example.test/welcome');
  const { status, location } = await callback(api, await gh.approve(url.href));
  t.equal(status, 302);
  t.equal(location.origin + location.pathname, 'https://app.example.test/welcome');
  const f = fragmentOf(location);
  t.same(Object.keys(f).sort(), [
    'access_token',
    'expires_at',
    'expires_in',
    'provider',
    'provider_token',
    'refresh_token',
    'sb',
    'token_type',
  ]);
  t.equal(f.token_type, 'bearer');
  t.equal(f.provider, 'github');
  t.match(f.provider_token, /^gho_/);
  const me = await api.request('GET', '/user', { token: f.access_token });
  t.equal(me.status, 200);
  t.equal(me.body.email, 'octo@example.com', 'the primary address, lower-cased');
  t.ok(me.body.email_confirmed_at, 'GitHub verified it');
  t.same(me.body.app_metadata, { provider: 'github', providers: ['github'] });
  t.equal(me.body.user_metadata.user_name, 'octo');
  t.equal(me.body.user_metadata.full_name, 'Octo Cat');
  t.equal(me.body.identities.length, 1);
  t.match(me.body.identities[0], {
    provider: 'github',
    id: '101',
    identity_data: { sub: '101', email: 'octo@example.com', email_verified: true }, // lower-cased, as the original stores it
  });
  t.strictSame(
    Object.keys(me.body.identities[0].identity_data).sort(),
    [
      'avatar_url',
      'email',
      'email_verified',
      'full_name',
      'iss',
      'name',
      'phone_verified',
      'preferred_username',
      'provider_id',
      'sub',
      'user_name',
    ],
    "the original's GitHub keys: no picture",
  );
  const form = gh.tokenRequests.at(-1)!;
  t.equal(form.get('redirect_uri'), REDIRECT_URI);
  t.equal(form.get('grant_type'), 'authorization_code');
  const audit = await api.db.query(`select payload->>'action' as action from audit_log_entries order by created_at desc limit 1`);
  t.equal(audit.rows[0].action, 'user_signedup');
});

t.test('github: a second sign-in finds the same user through the identity and refreshes its data', async (t) => {
  gh.users.get(101)!.name = 'Octo Renamed';
  gh.approveAs = 101;
  const { location } = await callback(api, await gh.approve((await authorizeUrl(api, 'provider=github')).href));
  t.equal(location.origin + location.pathname, 'http://localhost:3000/', 'no redirect_to: SITE_URL');
  const me = await api.request('GET', '/user', { token: fragmentOf(location).access_token });
  t.equal(me.body.user_metadata.full_name, 'Octo Renamed');
  const { rows } = await api.db.query(`select count(*)::int as n from users where email = 'octo@example.com'`);
  t.equal(rows[0].n, 1);
});

t.test('a state works once: an implicit flow row is gone after its callback, a replay finds nothing', async (t) => {
  gh.approveAs = 101;
  const params = await gh.approve((await authorizeUrl(api, 'provider=github')).href);
  t.ok(fragmentOf((await callback(api, params)).location).access_token);
  const replay = await callback(api, params);
  t.equal(replay.status, 303, 'to SITE_URL: a replayed state names no flow');
  t.equal(replay.location.origin, 'http://localhost:3000');
  t.same(queryOf(replay.location), {
    error: 'invalid_request',
    error_code: 'bad_oauth_state',
    error_description: 'OAuth state not found or expired',
  });
  t.equal(replay.location.hash, '');
});

t.test('a state works once: a PKCE flow replayed before its exchange is flow_state_already_used', async (t) => {
  gh.approveAs = 101;
  const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
  const params = await gh.approve((await authorizeUrl(api, `provider=github&code_challenge=${challenge}&code_challenge_method=S256`)).href);
  t.ok((await callback(api, params)).location.searchParams.get('code'));
  const replay = await callback(api, params);
  t.equal(replay.status, 303);
  t.same(queryOf(replay.location), {
    error: 'invalid_request',
    error_code: 'flow_state_already_used',
    error_description: 'State has already been used',
  });
});

t.test('two callbacks racing with one state: exactly one signs in', async (t) => {
  gh.approveAs = 101;
  // Two codes the provider both honours, one state: only the claim in the finishing transaction tells them apart.
  const url = await authorizeUrl(api, 'provider=github');
  const [first, second] = [await gh.approve(url.href), await gh.approve(url.href)];
  const results = await Promise.all([callback(api, first), callback(api, second)]);
  const signedIn = results.filter((r) => fragmentOf(r.location).access_token);
  const refused = results.filter((r) => r.location.searchParams.get('error_code'));
  t.equal(signedIn.length, 1);
  t.equal(refused.length, 1);
  t.match(refused[0].location.searchParams.get('error_code'), /^(flow_state_already_used|bad_oauth_state)$/);
});

t.test('PKCE: the callback answers ?code=, and the pkce grant answers the session with provider_token', async (t) => {
  gh.approveAs = 101;
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const url = await authorizeUrl(api, `provider=github&code_challenge=${challenge}&code_challenge_method=s256`);
  const { location } = await callback(api, await gh.approve(url.href));
  t.equal(location.hash, '');
  const code = location.searchParams.get('code')!;
  t.match(code, /^[0-9a-f-]{36}$/);
  const res = await api.request('POST', '/token?grant_type=pkce', { body: { auth_code: code, code_verifier: verifier } });
  t.equal(res.status, 200);
  t.match(res.body.provider_token, /^gho_/);
  t.equal(res.body.user.email, 'octo@example.com');
  const again = await api.request('POST', '/token?grant_type=pkce', { body: { auth_code: code, code_verifier: verifier } });
  t.equal(again.body.error_code, 'flow_state_not_found');
});

t.test('a redirect_to with its own fragment keeps it: the session is appended, the PKCE code goes in the query', async (t) => {
  gh.approveAs = 101;
  const target = encodeURIComponent('https://app.example.test/#/home');
  const implicit = await callback(api, await gh.approve((await authorizeUrl(api, `provider=github&redirect_to=${target}`)).href));
  t.equal(implicit.status, 302);
  const href = implicit.location.href;
  t.ok(href.startsWith('https://app.example.test/#/home#access_token='), href);
  const session = Object.fromEntries(new URLSearchParams(href.slice(href.lastIndexOf('#') + 1)));
  t.equal((await api.request('GET', '/user', { token: session.access_token })).status, 200);

  const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
  const pkce = await callback(
    api,
    await gh.approve(
      (await authorizeUrl(api, `provider=github&redirect_to=${target}&code_challenge=${challenge}&code_challenge_method=s256`)).href,
    ),
  );
  t.match(pkce.location.href, /^https:\/\/app\.example\.test\/\?code=[0-9a-f-]{36}#\/home$/, 'as the original’s PKCE redirect keeps it');
});

t.test('google (OIDC by discovery): the id_token is verified against the JWKS and the account created', async (t) => {
  const url = await authorizeUrl(api, 'provider=google&redirect_to=https://app.example.test/');
  t.equal(url.origin, oidc.base);
  t.equal(url.searchParams.get('scope'), 'email profile', "the original's scopes: Google issues the id_token for them alone");
  const { location } = await callback(api, await oidc.signIn(url.href, 'g-1'));
  const f = fragmentOf(location);
  t.ok(f.access_token, location.href);
  const me = await api.request('GET', '/user', { token: f.access_token });
  t.equal(me.body.email, 'gina@example.com');
  t.match(me.body.identities[0], {
    provider: 'google',
    id: 'g-1',
    identity_data: { iss: oidc.issuer, sub: 'g-1', email_verified: true, full_name: 'Gina G' },
  });

  const again = await authorizeUrl(api, 'provider=google');
  t.ok(fragmentOf((await callback(api, await oidc.signIn(again.href, 'g-1'))).location).access_token);
  t.equal(oidc.hits.get('/.well-known/openid-configuration'), 1, 'the discovery document is cached');
  t.equal(oidc.hits.get('/jwks'), 1, 'so is the key set');
});

t.test('a NUL or a lone surrogate in the profile: a display claim keeps it as U+FFFD, an address with a NUL is refused', async (t) => {
  // PostgreSQL stores neither; passed on raw, either failed the sign-in as Database error saving new user.
  gh.users.set(151, { ...githubPerson(151, 'nul-name@example.com'), login: 'nul\ud800login', name: 'Octo\u0000Cat' });
  gh.approveAs = 151;
  const { location } = await callback(api, await gh.approve((await authorizeUrl(api, 'provider=github')).href));
  const f = fragmentOf(location);
  t.ok(f.access_token, location.href);
  const me = await api.request('GET', '/user', { token: f.access_token });
  t.equal(me.body.user_metadata.full_name, 'Octo\ufffdCat');
  t.equal(me.body.user_metadata.user_name, 'nul\ufffdlogin');
  t.equal(me.body.identities[0].identity_data.name, 'Octo\ufffdCat');

  // One address with a NUL and one without would otherwise be the same account: refused as an unusable profile.
  gh.users.set(152, githubPerson(152, 'nul\u0000addr@example.com'));
  gh.approveAs = 152;
  const refused = await callback(api, await gh.approve((await authorizeUrl(api, 'provider=github')).href));
  t.equal(refused.status, 302);
  t.same(queryOf(refused.location), {
    error: 'server_error',
    error_code: 'unexpected_failure',
    error_description: 'Error getting user profile from external provider',
  });
  const { rows } = await api.db.query("select count(*)::int as n from identities where provider_id in ('151', '152')");
  t.equal(rows[0].n, 1, 'only the display-name case made an identity');
});

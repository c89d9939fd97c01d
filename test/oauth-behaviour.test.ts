// External sign-in answers compared one by one with the original's (internal/api/external.go,
// external_oauth.go, pkce.go): what GET /authorize hands the provider and refuses, where each /callback failure
// goes and in which words (Twitter's OAuth 1.0a steps included), and the PKCE code exchange as auth-js drives
// it. GitHub and Google are played by the shared fakes, Twitter by its signing fake.
import t from 'tap';
import { startTestService } from './helpers/server.js';
import { startGithubFake, githubPerson } from './helpers/github.js';
import { startOidcProvider, REDIRECT_URI } from './helpers/oidc-provider.js';
import { startTwitterFake } from './helpers/twitter-fake.js';
import { CLIENT_ID, CLIENT_SECRET } from './helpers/provider-fakes.js';
import { authClient } from './helpers/auth-client.js';
import { confirmedUser } from './helpers/users.js';
import { authorizeUrl, callback, fragmentOf, providerEnv, queryOf, githubEnv } from './helpers/oauth.js';

const gh = await startGithubFake();
const google = await startOidcProvider();
const twitterFake = await startTwitterFake((callbackUrl) => callbackUrl.startsWith(`${REDIRECT_URI}?state=`));
const twitter = twitterFake.fake;
const api = await startTestService({
  ...githubEnv(gh),
  ...providerEnv('google', { clientId: google.clientId, secret: google.clientSecret, redirectUri: REDIRECT_URI, url: google.issuer }),
  // Twitter's token calls go to its fake; its profile API to a host that knows no such path, so that step fails.
  ...providerEnv('twitter', { clientId: CLIENT_ID, secret: CLIENT_SECRET, redirectUri: REDIRECT_URI, url: twitter.url, apiUrl: gh.base }),
  AUTH_SECURITY_MANUAL_LINKING_ENABLED: 'true',
  AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
});
t.teardown(async () => {
  await api.stop();
  await gh.stop();
  await google.stop();
  await twitter.close();
});

const APP = 'https://app.example.test/done';
const CHALLENGE = 'a'.repeat(43);
gh.users.set(31, githubPerson(31, 'octo@example.com'));
google.accounts.set('g-31', { sub: 'g-31', email: 'gina@example.com', email_verified: true, name: 'Gina G' });

/** The provider URL of GET /authorize?<query>, or its JSON refusal. */
async function authorize(query: string) {
  const res = await api.request('GET', `/authorize?${query}`);
  return { status: res.status, body: res.body, location: res.headers.get('location') };
}

/** The refusal of the flow as the app reads it: the query, and the fragment that repeats it with `sb`. */
function refusalIn(location: URL) {
  return { target: location.origin + location.pathname, query: queryOf(location), fragment: fragmentOf(location) };
}

t.test('GET /authorize refusals: the provider first, then the PKCE parameters, in the original words', async (t) => {
  const cases: Array<[string, string]> = [
    ['', 'Unsupported provider: Provider  could not be found'],
    ['provider=nope', 'Unsupported provider: Provider nope could not be found'],
    ['provider=gitlab', 'Unsupported provider: provider is not enabled'],
    [`provider=nope&code_challenge=short`, 'Unsupported provider: Provider nope could not be found'],
    [`provider=github&code_challenge=${CHALLENGE}`, 'PKCE flow requires code_challenge_method and code_challenge'],
    ['provider=github&code_challenge_method=S256', 'PKCE flow requires code_challenge_method and code_challenge'],
    ['provider=github&code_challenge=short&code_challenge_method=S256', 'code challenge has to be between 43 and 128 characters'],
    [`provider=github&code_challenge=${CHALLENGE}&code_challenge_method=sha1`, 'Invalid code_challenge_method'],
  ];
  for (const [query, msg] of cases) {
    const res = await authorize(query);
    t.strictSame(res.body, { code: 400, error_code: 'validation_failed', msg }, query);
  }
  for (const method of ['S256', 's256', 'plain']) {
    const res = await authorize(`provider=github&code_challenge=${CHALLENGE}&code_challenge_method=${method}`);
    t.equal(res.status, 302, method);
    const stored = await api.db.query('select code_challenge_method from flow_state where id = $1', [
      new URL(res.location!).searchParams.get('state'),
    ]);
    t.equal(stored.rows[0].code_challenge_method, method.toLowerCase(), 'stored as the original names it');
  }
});

t.test('GET /authorize: always a 302, skip_http_redirect or not; only the identities route answers {url}', async (t) => {
  const plain = await authorize(`provider=github&skip_http_redirect=true&redirect_to=${encodeURIComponent(APP)}`);
  t.equal(plain.status, 302);
  t.equal(new URL(plain.location!).searchParams.get('skip_http_redirect'), null, 'a parameter of ours, not the provider’s');
  const { access_token } = await confirmedUser(api);
  const link = await api.request('GET', '/user/identities/authorize?provider=github&skip_http_redirect=true', { token: access_token });
  t.equal(link.status, 200);
  t.strictSame(Object.keys(link.body), ['url']);
  t.match(link.body.url, `${gh.base}/login/oauth/authorize?`);
  const redirected = await api.request('GET', '/user/identities/authorize?provider=github&skip_http_redirect=1', { token: access_token });
  t.equal(redirected.status, 302, 'only "true" asks for the JSON answer');
});

t.test("GET /authorize: the provider's scopes come first, then the requested ones", async (t) => {
  const github = new URL((await authorize('provider=github&scopes=repo%20gist')).location!);
  t.equal(github.searchParams.get('scope'), 'user:email repo gist');
  const listed = new URL((await authorize('provider=github&scopes=repo,gist')).location!);
  t.equal(listed.searchParams.get('scope'), 'user:email repo gist', 'a comma list too');
  const googleUrl = new URL((await authorize('provider=google&scopes=openid')).location!);
  t.equal(googleUrl.searchParams.get('scope'), 'email profile openid');
});

t.test("GET /authorize hands the provider a repeated parameter's first value, as the original reads it", async (t) => {
  const url = new URL((await authorize('provider=github&prompt=consent&login_hint=octo&prompt=login')).location!);
  t.strictSame(url.searchParams.getAll('prompt'), ['consent']);
  t.equal(url.searchParams.get('login_hint'), 'octo');
});

t.test('redirect_to: an allowed target is kept; a relative or foreign one falls back to SITE_URL', async (t) => {
  const targets: Array<[string, string]> = [
    [APP, APP],
    ['/done', 'http://localhost:3000/'],
    ['https://evil.example/steal', 'http://localhost:3000/'],
  ];
  for (const [given, expected] of targets) {
    gh.approveAs = 31;
    const url = await authorizeUrl(api, `provider=github&redirect_to=${encodeURIComponent(given)}`);
    const { location } = await callback(api, await gh.approve(url.href));
    t.equal(location.origin + location.pathname, expected, given);
    t.ok(fragmentOf(location).access_token, given);
  }
});

t.test('implicit flow: the session in the fragment with the provider token; PKCE: ?code= alone', async (t) => {
  gh.approveAs = 31;
  const implicit = await callback(api, await gh.approve((await authorizeUrl(api, `provider=github&redirect_to=${APP}`)).href));
  t.equal(implicit.status, 302);
  t.equal(implicit.location.search, '');
  const f = fragmentOf(implicit.location);
  t.strictSame(Object.keys(f).sort(), [
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
  t.equal(Number(f.expires_at) - Number(f.expires_in), Math.floor(JSON.parse(atob(f.access_token.split('.')[1])).iat));
  t.match(f.provider_token, /^gho_/);

  const pkce = await callback(
    api,
    await gh.approve(
      (await authorizeUrl(api, `provider=github&redirect_to=${APP}&code_challenge=${CHALLENGE}&code_challenge_method=plain`)).href,
    ),
  );
  t.equal(pkce.location.hash, '', 'no session in a PKCE redirect');
  t.strictSame(Object.keys(queryOf(pkce.location)), ['code']);
});

t.test('auth-js PKCE: a wrong verifier is refused and leaves the code usable; the code works once', async (t) => {
  const auth = authClient(api.url, { flowType: 'pkce' });
  const { data } = await auth.signInWithOAuth({ provider: 'google', options: { redirectTo: APP, skipBrowserRedirect: true } });
  const res = await fetch(data.url!, { redirect: 'manual' });
  const { location } = await callback(api, await google.signIn(res.headers.get('location')!, 'g-31'));
  const code = location.searchParams.get('code')!;
  const wrong = await api.request('POST', '/token?grant_type=pkce', { body: { auth_code: code, code_verifier: 'x'.repeat(43) } });
  t.strictSame(wrong.body, {
    code: 400,
    error_code: 'bad_code_verifier',
    msg: 'code challenge does not match previously saved code verifier',
  });
  const { data: session, error } = await auth.exchangeCodeForSession(code);
  t.equal(error, null);
  t.equal(session.user?.email, 'gina@example.com');
  t.ok(session.session?.provider_token);
  const again = await api.request('POST', '/token?grant_type=pkce', { body: { auth_code: code, code_verifier: 'x'.repeat(43) } });
  t.strictSame(again.body, { code: 404, error_code: 'flow_state_not_found', msg: 'invalid flow state, no valid flow state found' });
});

t.test("the provider's refusal goes to the flow's target, in the query and the fragment, without error_code", async (t) => {
  const url = await authorizeUrl(api, `provider=github&redirect_to=${APP}&code_challenge=${CHALLENGE}&code_challenge_method=s256`);
  const params = new URLSearchParams({ state: url.searchParams.get('state')!, error: 'access_denied', error_description: 'denied' });
  const { status, location } = await callback(api, params);
  t.equal(status, 302);
  t.strictSame(refusalIn(location), {
    target: APP,
    query: { error: 'access_denied', error_description: 'denied' },
    fragment: { error: 'access_denied', error_description: 'denied', sb: '' },
  });
});

/** A flow as /authorize stored it for `provider`, standing for one started before that provider was switched off. */
async function storedFlow(provider: string): Promise<string> {
  const { rows } = await api.db.query(
    `insert into flow_state (provider_type, authentication_method, referrer) values ($1, 'oauth', $2) returning id`,
    [provider, APP],
  );
  return rows[0].id;
}

t.test(
  'a callback without a code is bad_oauth_callback even for a provider since switched off: the code is looked for first',
  async (t) => {
    const state = await storedFlow('gitlab');
    const noCode = await callback(api, new URLSearchParams({ state }));
    t.strictSame(refusalIn(noCode.location).query, {
      error: 'invalid_request',
      error_code: 'bad_oauth_callback',
      error_description: 'OAuth callback with missing authorization code missing',
    });
    const withCode = await callback(api, new URLSearchParams({ state, code: 'abcdef' }));
    t.strictSame(refusalIn(withCode.location), {
      target: APP,
      query: {
        error: 'invalid_request',
        error_code: 'oauth_provider_not_supported',
        error_description: 'Unsupported provider: provider is not enabled',
      },
      // The fragment's escapes are escaped once more, as the original's URL.String writes a set Fragment.
      fragment: {
        error: 'invalid_request',
        error_code: 'oauth_provider_not_supported',
        error_description: 'Unsupported provider%3A provider is not enabled',
        sb: '',
      },
    });
  },
);

const unableToRetrieve = {
  error: 'server_error',
  error_code: 'unexpected_failure',
  error_description: 'Unable to retrieve access token',
};

/** Twitter's consent page approving at once: the parameters it sends back to the callback (state, oauth_token, oauth_verifier). */
async function twitterConsent(): Promise<URLSearchParams> {
  const url = await authorizeUrl(api, `provider=twitter&redirect_to=${APP}`);
  const res = await fetch(url, { redirect: 'manual' });
  return new URL(res.headers.get('location')!).searchParams;
}

t.test('twitter: a person who declined (denied=, no token) is the failed access-token step, as the original reports it', async (t) => {
  const back = await twitterConsent();
  const state = back.get('state')!;
  const denied = await callback(api, new URLSearchParams({ state, denied: back.get('oauth_token')! }));
  t.equal(denied.status, 302);
  t.strictSame(refusalIn(denied.location), { target: APP, query: unableToRetrieve, fragment: { ...unableToRetrieve, sb: '' } });
  // OAuth 1.0a has no `error` parameter: the original does not read one for Twitter.
  const withError = await callback(api, new URLSearchParams({ state, error: 'access_denied', error_description: 'no' }));
  t.strictSame(refusalIn(withError.location).query, unableToRetrieve);
});

t.test("twitter: a refused access-token call and a failed profile call carry the original's words", async (t) => {
  const back = await twitterConsent();
  const guessed = new URLSearchParams(back);
  guessed.set('oauth_verifier', 'guessed-verifier');
  const refused = await callback(api, guessed);
  t.strictSame(refusalIn(refused.location).query, unableToRetrieve);
  t.equal(twitterFake.refusals.at(-1), 'wrong oauth_verifier');

  const profileless = await callback(api, back);
  t.strictSame(refusalIn(profileless.location).query, {
    error: 'server_error',
    error_code: 'unexpected_failure',
    error_description: 'Error getting user email from external provider',
  });
});

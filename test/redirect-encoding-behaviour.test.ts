// The redirects of external sign-in (/callback), the SAML ACS and GET /verify, byte for byte as the original
// builds them (internal/api/external.go redirectErrors and loadFlowState, verify.go prepErrorRedirectURL and
// prepPKCERedirectURL, samlacs.go, tokens AsRedirectURL): a query set over the target's own is written by
// url.Values.Encode (sorted, url.QueryEscape: `~` kept, `*` `!` `'` `(` `)` escaped, a space as `+`), a
// fragment the original sets from encoded values is escaped once more by URL.String (each `%` as `%25`), the
// session is appended after the target's own fragment, and SITE_URL read by url.ParseRequestURI at a bad
// state keeps a `#` in its query. And POST /magiclink's body read as json.Decoder.Decode reads it
// (internal/api/magic_link.go): "Could not read verification params: …", the first JSON value only.
import t from 'tap';
import { startMailStack, plantToken, insertUser, pkcePair } from './helpers/passwordless.js';
import { startKeycloakRealm, REDIRECT_URI } from './helpers/oidc-provider.js';
import { providerEnv } from './helpers/oauth.js';
import { spPrivateKey } from './helpers/saml-idp.js';

const keycloak = await startKeycloakRealm();
const stack = await startMailStack({
  ...providerEnv('keycloak', {
    clientId: 'kc-client',
    secret: keycloak.clientSecret,
    redirectUri: REDIRECT_URI,
    url: keycloak.issuer,
  }),
  AUTH_SITE_URL: 'https://app.example.com/home?x=a~b*c#/route',
  AUTH_URI_ALLOW_LIST: 'https://app.example.test/**',
  AUTH_SAML_ENABLED: 'true',
  AUTH_SAML_PRIVATE_KEY: spPrivateKey(),
});
const { api } = stack;
t.teardown(async () => {
  await stack.stop();
  await keycloak.stop();
});

/** A target with a query the two encodings write differently (`*` and `~`), unsorted, and a route fragment. */
const TARGET = 'https://app.example.test/done?b=1*2&a=x~y#/route';
/** Its query as url.Values reads and Encode writes it. */
const GO_QUERY = 'a=x~y&b=1%2A2';
const TARGET_BASE = 'https://app.example.test/done';

keycloak.accounts.set('kc-1', { sub: 'kc-1', email: 'kim@example.com', email_verified: true, name: 'Kim' });

/** GET /authorize for keycloak with `query`; the state the provider must send back, and the provider's URL. */
async function authorize(query: Record<string, string>): Promise<{ url: string; state: string }> {
  const res = await api.request('GET', `/authorize?${new URLSearchParams({ provider: 'keycloak', redirect_to: TARGET, ...query })}`);
  if (res.status !== 302) throw new Error(`/authorize answered ${res.status}: ${res.text}`);
  const url = res.headers.get('location')!;
  return { url, state: new URL(url).searchParams.get('state')! };
}

/** GET /callback with `params`: the answer's status and its Location exactly as sent. */
async function callback(params: URLSearchParams): Promise<{ status: number; location: string }> {
  const res = await api.request('GET', `/callback?${params}`);
  return { status: res.status, location: res.headers.get('location') ?? '' };
}

t.test('/callback session: appended after the target as it stands, every value escaped by QueryEscape, keys sorted', async (t) => {
  // The provider's refresh token comes back in the fragment: one with the characters the encodings differ on.
  keycloak.rewriteTokenAnswer = async (answer) => ({ ...answer, refresh_token: "rt~1*2 3!'()" });
  t.teardown(() => (keycloak.rewriteTokenAnswer = undefined));
  const { url } = await authorize({});
  const { status, location } = await callback(await keycloak.signIn(url, 'kc-1'));
  t.equal(status, 302);
  const raw = (name: string) => new RegExp(`[#&]${name}=([^&]*)`).exec(location)?.[1] ?? '';
  for (const name of ['access_token', 'refresh_token', 'provider_token']) t.match(raw(name), /^[A-Za-z0-9._-]+$/, name);
  t.equal(
    location,
    `${TARGET}#access_token=${raw('access_token')}&expires_at=${raw('expires_at')}&expires_in=3600&provider=keycloak` +
      `&provider_refresh_token=rt~1%2A2+3%21%27%28%29&provider_token=${raw('provider_token')}` +
      `&refresh_token=${raw('refresh_token')}&sb=&token_type=bearer`,
  );
});

t.test("/callback PKCE: code set in the target's query as url.Values writes it, the target's fragment kept", async (t) => {
  const { challenge } = await pkcePair();
  const { url } = await authorize({ code_challenge: challenge, code_challenge_method: 's256' });
  const { status, location } = await callback(await keycloak.signIn(url, 'kc-1'));
  t.equal(status, 302);
  const code = new URL(location).searchParams.get('code');
  t.equal(location, `${TARGET_BASE}?${GO_QUERY}&code=${code}#/route`);
});

t.test("/callback error: the query set over the target's, the fragment replaced and escaped once more", async (t) => {
  const { state } = await authorize({});
  const { status, location } = await callback(
    new URLSearchParams({ state, error: 'access_denied', error_description: 'User said: no, thanks' }),
  );
  t.equal(status, 302);
  t.equal(
    location,
    `${TARGET_BASE}?${GO_QUERY}&error=access_denied&error_description=User+said%3A+no%2C+thanks` +
      '#error=access_denied&error_description=User+said%253A+no%252C+thanks&sb=',
  );
});

t.test('/callback with a bad state: SITE_URL read as a request URI (its `#` part of the query), the error set in it', async (t) => {
  const { status, location } = await callback(new URLSearchParams({ code: 'x' }));
  t.equal(status, 303);
  t.equal(
    location,
    'https://app.example.com/home?error=invalid_request&error_code=bad_oauth_callback' +
      '&error_description=OAuth+state+parameter+missing&x=a~b%2Ac%23%2Froute',
  );
});

t.test('SAML ACS refusal: SITE_URL read by url.Parse, the error set in its query, its fragment kept', async (t) => {
  const res = await api.request('POST', '/sso/saml/acs', {
    raw: 'SAMLResponse=x',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.equal(res.status, 303);
  t.equal(
    res.headers.get('location'),
    'https://app.example.com/home?error=invalid_request&error_code=validation_failed' +
      '&error_description=SAMLResponse+is+not+a+valid+XML+SAML+assertion&x=a~b%2Ac#/route',
  );
});

t.test('GET /verify', async (t) => {
  const verify = (token: string, type = 'signup') =>
    api.request('GET', `/verify?${new URLSearchParams({ type, token, redirect_to: TARGET })}`);

  t.test('a refused link: the query kept as written, the error in the fragment', async (t) => {
    const res = await verify('no-such-token');
    t.equal(res.status, 303);
    t.equal(
      res.headers.get('location'),
      `${TARGET.split('#')[0]}#error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired&sb=`,
    );
  });

  t.test("a pkce_ link's error: the query set over the target's, the fragment's escapes escaped once more", async (t) => {
    const id = await insertUser(api.db, { email: 'pkce-error@example.com' });
    const { linkToken } = await plantToken(api.db, id, 'confirmation_token', 'pkce-error@example.com', { pkce: true });
    const res = await verify(linkToken);
    t.equal(res.status, 303);
    const error = 'error=invalid_request&error_code=flow_state_not_found&error_description=No+associated+flow+state+found.+422';
    t.equal(
      res.headers.get('location'),
      `${TARGET_BASE}?${GO_QUERY}&${error}%3A+No+valid+flow+state+found+for+user.#${error}%253A+No+valid+flow+state+found+for+user.&sb=`,
    );
  });

  t.test("a session: appended after the target's own fragment, keys sorted", async (t) => {
    const id = await insertUser(api.db, { email: 'session@example.com' });
    const { linkToken } = await plantToken(api.db, id, 'confirmation_token', 'session@example.com');
    const res = await verify(linkToken);
    t.equal(res.status, 303);
    const location = res.headers.get('location')!;
    const raw = (name: string) => new RegExp(`[#&]${name}=([^&]*)`).exec(location)?.[1] ?? '';
    t.equal(
      location,
      `${TARGET}#access_token=${raw('access_token')}&expires_at=${raw('expires_at')}&expires_in=3600` +
        `&refresh_token=${raw('refresh_token')}&sb=&token_type=bearer&type=signup`,
    );
  });
});

t.test('POST /magiclink reads its body as json.Decoder.Decode does', async (t) => {
  const send = (raw: string) => api.request('POST', '/magiclink', { raw, headers: { 'content-type': 'application/json' } });
  const refusal = (words: string) => ({ code: 400, error_code: 'bad_json', msg: `Could not read verification params: ${words}` });
  const rows: Array<[string, string]> = [
    ['', 'EOF'],
    [' \n\t', 'EOF'],
    ['{"email":', 'unexpected EOF'],
    ['{"email":"a@example.com"', 'unexpected EOF'],
    ['{"a":1.', 'unexpected EOF'],
    ['tru', 'unexpected EOF'],
    ['garbage', "invalid character 'g' looking for beginning of value"],
    ['{"email":"a@example.com",}', "invalid character '}' looking for beginning of object key string"],
    ['[]', 'json: cannot unmarshal array into Go value of type api.MagicLinkParams'],
    ['"x"', 'json: cannot unmarshal string into Go value of type api.MagicLinkParams'],
    // the decoder stops at the end of the first value: a number followed by a letter is that number
    ['1x', 'json: cannot unmarshal number into Go value of type api.MagicLinkParams'],
  ];
  for (const [body, words] of rows) {
    const res = await send(body);
    t.strictSame([res.status, res.body], [400, refusal(words)], JSON.stringify(body));
  }
  const trailing = await send('{"email":"trailing@example.com"} and then {some text');
  t.strictSame([trailing.status, trailing.body], [200, {}], 'what follows the first value is never read');
  await stack.smtp.waitForMail('trailing@example.com');
  const second = await send('{"email":"second@example.com"}{"email":"third@example.com"}');
  t.equal(second.status, 200);
  await stack.smtp.waitForMail('second@example.com');
});
